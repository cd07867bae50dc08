"""The testbed: network namespaces, links (linkemu, HTB), traffic and the scenario runner."""
