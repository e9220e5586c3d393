"""Where the GKE emulator listens by default, apart from the server, so callers name it without loading it."""

#: The emulator's default port on 127.0.0.1 (env PLANB_GKE_EMULATOR_PORT overrides it).
DEFAULT_PORT = 8765
