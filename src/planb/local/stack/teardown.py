"""`planb local down`: every part stopped by pid, then only the state planb wrote removed.

The Ray head stand-in's `run` payloads run in sessions of their own, so stopping the stand-in need not
end them (it ends those it knows of when it stops cleanly); every payload it recorded that still runs is
stopped next, all at once, before the work directories they run in are removed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from planb.local.process import ManagedProcess
from planb.local.rayhead import payloads
from planb.local.rayhead import settings as rayhead_settings
from planb.local.stack import statedir
from planb.local.stack.errors import LocalStackError
from planb.local.stack.parts import StackParts, say

#: What planb writes in each state directory `down` cleans (globs); in a directory planb did not
#: create (PLANB_STATE_DIR pointed at a home directory, say) nothing else is removed.
LOCAL_FILES = (
    "kubeconfig",
    "kwokctl.yaml",
    "kwok/clusters/planb",
    "kueue-certs",
    "kueue-config.yaml",
    "kueue-settings.json",
    "kueue-settings.tmp",
    "kueue-etc.json",
    "kueue-etc.tmp",
    "failover.json",
    "failover.tmp",
    "failover-token",
    "failover-ca.crt",
    "up-timings.json",
    "*.pid",
    "*.log",
    "*.tmp",
)
#: The capacity simulator's switches and the kubeconfigs the gke_cluster role writes (local inventory).
SIBLING_FILES = {
    "capacity": ("settings.json", "settings.tmp", "*.tmp"),
    "gke": ("*.kubeconfig",),
    # The Ray head stand-in's payload settings, each job's output and the files its `--run` payloads ran from.
    # and the pid records of those payloads.
    "rayhead": ("settings.json", "settings.tmp", "*.tmp", "logs", "work", "payloads"),
}


class StackTeardown(StackParts):
    """Stopping the parts and removing what planb wrote."""

    def down(self) -> bool:
        """Stop every process the stack started, by pid, and remove its state."""
        with self.locked():
            return self._down()

    def _down(self, quiet: bool = False) -> bool:
        """Stop each part independently, then remove the state; every failure is reported at the end.

        One part that cannot be stopped (or an emulator whose state cannot be purged) does not keep
        the others running. The state (pid files) is kept if a process could not be stopped, so
        a second `down` can finish the job.
        """
        if not self.state.exists():
            if not quiet:
                say("nothing to stop")
            return False
        failures: list[str] = []

        def step(what: str, action: Callable[[], object]) -> None:
            try:
                action()
            except Exception as exc:  # each part's stop is independent; all are reported
                failures.append(f"{what}: {exc}")

        for label, process in (
            ("the failover controller", self.failover),
            ("the capacity simulator", self.simulator),
            ("the KubeRay operator", self.kuberay),
            ("the Ray head stand-in", self.rayhead),
            ("Kueue", self.kueue.process),
        ):
            step(f"stopping {label}", functools.partial(_stop_process, process, label))
        step("stopping the Ray head stand-in's payloads", self._stop_payloads)
        # Always purge: a crashed emulator's clusters and pools must not come back with the next up.
        step("stopping the GKE emulator", self._stop_emulator)
        step("stopping the control plane", self._stop_control_plane)
        stopped = not failures
        step("removing Kueue's metrics certificate", self._remove_metrics_cert)
        if stopped:
            step("removing the state", self._remove_state)
        if failures:
            kept = "" if stopped else f"; the state in {self.state} is kept so 'planb local down' can retry"
            raise LocalStackError("planb local down stopped what it could, but:\n  " + "\n  ".join(failures) + kept)
        return True

    def _stop_payloads(self) -> None:
        stopped = payloads.stop_all(rayhead_settings.payloads_dir(self.state.parent))
        if stopped:
            say(f"stopped the Ray head stand-in's payload processes {', '.join(map(str, stopped))}")

    def _stop_emulator(self) -> None:
        self.gke_emulator.stop(purge=True)
        say("stopped the GKE emulator and removed its state")

    def _stop_control_plane(self) -> None:
        self.control_plane.delete()
        left = self.control_plane.component_pids()
        if left:
            raise LocalStackError(f"still running after delete: {left}")
        say("stopped the control plane")

    def _remove_metrics_cert(self) -> None:
        for path in self.kueue.remove_metrics_cert():
            say(f"removed {path}")

    def _remove_state(self) -> None:
        """This stack's state and local mode's other state, but only what planb put there."""
        targets: list[tuple[Path, tuple[str, ...]]] = [(self.state, LOCAL_FILES)]
        targets += [(self.state.parent / name, known) for name, known in SIBLING_FILES.items()]
        for path, known in targets:
            if not path.exists():
                continue
            left = statedir.remove(path, known)
            if left:
                names = ", ".join(p.name for p in left[:5]) + (" ..." if len(left) > 5 else "")
                say(f"kept {path}: planb did not create it and it holds files planb did not write ({names})")
            else:
                say(f"removed {path}")


def _stop_process(process: ManagedProcess, label: str) -> None:
    if process.stop():
        say(f"stopped {label}")
