"""The failover names planb reads (planb.failover.names) are the ones the controller writes.

The controller keeps its own copies because the queues chart ships controller.py alone in a ConfigMap
(charts/planb/files/failover_controller.py); these tests keep the copies equal.
"""

from __future__ import annotations

import ast
import inspect

import pytest

from planb.failover import controller, names

CONSTANTS = [n for n, v in vars(names).items() if n.isupper() and isinstance(v, str)]
FUNCTIONS = ["human", "move_message"]


def test_names_holds_the_names_status_shows() -> None:
    assert {"MOVED_ANNOTATION", "AFTER_ANNOTATION", "FROM_ANNOTATION", "EVENT_REASON"} <= set(CONSTANTS)


@pytest.mark.parametrize("name", CONSTANTS)
def test_the_controller_writes_the_same_name(name: str) -> None:
    assert getattr(controller, name) == getattr(names, name), (
        f"{name} differs between src/planb/failover/controller.py and names.py; change both"
    )


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_controller_words_its_message_the_same(name: str) -> None:
    ours, theirs = (ast.dump(ast.parse(inspect.getsource(getattr(m, name)))) for m in (names, controller))
    assert ours == theirs, f"{name}() differs between src/planb/failover/controller.py and names.py; change both"


def test_status_reads_names_not_the_controller() -> None:
    import planb.status.report as report

    assert report.move_message is names.move_message
    assert (report.FAILOVER_MOVED, report.FAILOVER_AFTER) == (names.MOVED_ANNOTATION, names.AFTER_ANNOTATION)
