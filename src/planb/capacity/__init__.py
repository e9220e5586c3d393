"""planb.capacity."""
