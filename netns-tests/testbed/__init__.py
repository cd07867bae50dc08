"""vegaskit testbed: network namespaces, links, traffic and the scenario runner."""
