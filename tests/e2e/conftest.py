"""The e2e tier's fixtures: the real local stack, started once per session (tests/support/e2e/stack.py)."""

from tests.support.e2e.stack import _stack_session, kubectl, local_stack

__all__ = ["_stack_session", "kubectl", "local_stack"]
