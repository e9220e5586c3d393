"""planb.gke."""
