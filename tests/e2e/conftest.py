"""The e2e tier's fixtures: the real local stack, started once per session (tests/support/stack.py)."""

from tests.support.stack import _stack_session, kubectl, local_stack

__all__ = ["_stack_session", "kubectl", "local_stack"]
