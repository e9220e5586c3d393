"""The GKE emulator on a free loopback port, and the planb.gke modules run against it
(tests/support/integration/gke/modules.py)."""

from tests.support.integration.gke.modules import emulator, instant_emulator, modules

__all__ = ["emulator", "instant_emulator", "modules"]
