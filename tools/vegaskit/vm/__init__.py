"""Other kernels, booted under qemu: fetch (kernels) and boot (guest)."""
