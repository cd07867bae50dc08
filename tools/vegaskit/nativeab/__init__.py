"""bpf_vegas against the kernel's own tcp_vegas, in a VM (docs/DESIGN.md §10.1).

guest: runs the A/B scenarios inside the guest and writes the raw runs;
analyse: per-run metrics, the comparison and its report (on the host).
"""
