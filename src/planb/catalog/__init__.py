"""planb.catalog."""
