"""The failover controller's Prometheus metrics, computed from the objects of its last resync (a scrape lists
nothing: planb.failover.controller keeps them).

* ``planb_time_to_admission_seconds`` (summary, per plan: the accelerator flavor): seconds from a
  Workload's creation to its Admitted condition;
* ``planb_failover_moved_jobs`` (gauge): RayJobs that exist now and carry the move's annotation;
* ``planb_failover_moves_total`` (counter): moves this process made.

Read from the objects, not kept in memory, so they survive a restart (all but the process's own counter).
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterable
from typing import Any

from planb.failover.decisions import admitted_flavors, condition, parse_time
from planb.failover.names import MOVED_ANNOTATION

Obj = dict[str, Any]


def render(workloads: list[Obj], rayjobs: list[Obj], accelerators: Iterable[str], moves_done: int) -> str:
    """The metrics in Prometheus' text format."""
    waits: dict[str, list[float]] = {}
    lines = [
        "# HELP planb_time_to_admission_seconds Seconds from a Workload's creation to its admission, per plan"
        " (the accelerator flavor).",
        "# TYPE planb_time_to_admission_seconds summary",
    ]
    for wl in workloads:
        admitted = condition(wl, "Admitted")
        flavors = admitted_flavors(wl, accelerators)
        if not admitted or admitted.get("status") != "True" or not flavors:
            continue
        start = parse_time(wl["metadata"].get("creationTimestamp"))
        end = parse_time(admitted.get("lastTransitionTime"))
        if start and end:
            for plan in flavors:
                waits.setdefault(plan, []).append((end - start).total_seconds())
    for plan, values in sorted(waits.items()):
        lines.append(f'planb_time_to_admission_seconds_sum{{plan="{plan}"}} {sum(values):g}')
        lines.append(f'planb_time_to_admission_seconds_count{{plan="{plan}"}} {len(values)}')
    moved = [r for r in rayjobs if MOVED_ANNOTATION in (r.get("metadata", {}).get("annotations") or {})]
    lines += [
        "# HELP planb_failover_moved_jobs RayJobs that exist now and were moved from plan A to plan B.",
        "# TYPE planb_failover_moved_jobs gauge",
        f"planb_failover_moved_jobs {len(moved)}",
        "# HELP planb_failover_moves_total Moves this controller process made.",
        "# TYPE planb_failover_moves_total counter",
        f"planb_failover_moves_total {moves_done}",
    ]
    return "\n".join(lines) + "\n"


def serve(host: str, port: int, scrape: Callable[[], str]) -> http.server.ThreadingHTTPServer:
    """GET /metrics answers `scrape()` (503 with the reason when it fails), in a daemon thread."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            try:
                body = scrape().encode()
            except Exception as exc:  # the scrape says why
                self.send_error(503, str(exc))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = http.server.ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="metrics").start()
    return server
