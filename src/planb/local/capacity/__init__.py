"""planb.local.capacity."""
