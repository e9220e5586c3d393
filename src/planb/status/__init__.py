"""planb.status."""
