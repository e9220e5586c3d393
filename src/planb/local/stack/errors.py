"""Typed errors of the local stack."""

from planb.errors import PlanbError


class LocalStackError(PlanbError):
    """The local stack could not be brought up, inspected or taken down."""


class ToolMissingError(LocalStackError):
    """A pinned binary or manifest is missing: the tool build has not run."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is missing. Fix: run 'make tools' (hack/build-tools.sh) first.")


class StartupTimeoutError(LocalStackError):
    """A component did not become ready in time."""
