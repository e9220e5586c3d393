"""planb.local.gke_emulator: the GKE and Google Cloud APIs planb calls, served on loopback.

Each method follows Google's discovery documents (``discovery``, ``contract``)."""
