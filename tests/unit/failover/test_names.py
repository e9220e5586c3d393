"""The failover names planb reads (planb.failover.names) are the ones the controller writes.

The controller imports them from planb.failover.names (the queues chart ships the whole package), so
`planb status` and the controller can never disagree; these tests keep it that way.
"""

from __future__ import annotations

import pytest

from planb.failover import controller, names

CONSTANTS = [n for n, v in vars(names).items() if n.isupper() and isinstance(v, str)]


def test_names_holds_the_names_status_shows() -> None:
    assert {"MOVED_ANNOTATION", "AFTER_ANNOTATION", "FROM_ANNOTATION", "EVENT_REASON"} <= set(CONSTANTS)


@pytest.mark.parametrize("name", [*CONSTANTS, "human", "move_message"])
def test_the_controller_writes_the_names_module_s_name(name: str) -> None:
    assert getattr(controller, name) is getattr(names, name), f"controller.py keeps its own {name}; import it"


def test_status_reads_names_not_the_controller() -> None:
    import planb.status.report as report

    assert report.move_message is names.move_message
    assert (report.FAILOVER_MOVED, report.FAILOVER_AFTER) == (names.MOVED_ANNOTATION, names.AFTER_ANNOTATION)
