"""The root of planb's typed exceptions, every package derives its own from it, and planb's exit codes.

The exit codes follow kubectl's habit (0 ok, 1 the thing asked about is not as it should be) and argparse's
(2 for a command line it cannot use); docs/pending-jobs.md ("Exit codes") documents them for `planb status`.
"""

from collections.abc import Mapping
from typing import ClassVar

#: Everything asked about is fine.
EXIT_OK = 0
#: A job is in a failed state, no job matched, or what --expect asked for did not happen.
EXIT_FAILED = 1
#: The command line or an input it names cannot be used (argparse exits with the same code).
EXIT_USAGE = 2
#: The cluster cannot be read: no kubeconfig, the API server unreachable, or it answered an error.
EXIT_UNREACHABLE = 3


def exit_codes_help(meanings: Mapping[int, str]) -> str:
    """An ``--help`` epilog's block of exit codes, one line per code (argparse's RawDescriptionHelpFormatter)."""
    return "exit codes:\n" + "".join(f"  {code}  {meaning}\n" for code, meaning in sorted(meanings.items()))


class PlanbError(Exception):
    """An error planb reports to the user as a message (no traceback), exiting with ``exit_code``.

    The default is EXIT_USAGE: most of planb's errors name a bad input and its fix. An error that says the cluster
    cannot be read sets EXIT_UNREACHABLE.
    """

    exit_code: ClassVar[int] = EXIT_USAGE


class UsageError(PlanbError):
    """A command line planb cannot use: options that do not go together, a value of the wrong form."""

    exit_code: ClassVar[int] = EXIT_USAGE


class UnreachableError(PlanbError):
    """The cluster cannot be read (no kubeconfig to reach it with, or its API server does not answer)."""

    exit_code: ClassVar[int] = EXIT_UNREACHABLE
