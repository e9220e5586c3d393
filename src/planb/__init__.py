"""planb: TPU/GPU training on GKE that does not wait for capacity."""

__version__ = "0.1.0"
