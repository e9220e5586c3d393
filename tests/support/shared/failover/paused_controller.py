"""A test double of the failover controller that pauses between patching a RayJob and patching its Workload.

`python -m tests.support.shared.failover.paused_controller` takes the controller's own flags (planb.failover.__main__)
and runs `PausedMidMove` in place of `Controller`: a test kills it during the pause, and a restarted real
controller must finish the move it started (tests/e2e/topologies/test_stockout_failover.py). The shipped
controller knows nothing of it.
"""

from __future__ import annotations

import logging
import sys
import time

from planb.failover.__main__ import main
from planb.failover.controller import Controller
from planb.failover.kubeapi import Obj

#: How long the move stays half made: long enough for the test to see the RayJob's annotation and kill the process.
PAUSE_SECONDS = 30.0

log = logging.getLogger("planb.failover")


class PausedMidMove(Controller):
    """The controller, but each RayJob's patch is followed by a pause before the Workload is touched."""

    def patch_rayjob(self, rayjob: Obj, key: str, value: str) -> None:
        super().patch_rayjob(rayjob, key, value)
        log.info("pausing %.0f s mid-move (test double)", PAUSE_SECONDS)
        time.sleep(PAUSE_SECONDS)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], PausedMidMove))
