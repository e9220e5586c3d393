"""The `planb` command line: each area registers its own sub-commands, imported only when one of them runs.

``COMMANDS`` names every sub-command, its help line and the module that registers it (a ``register(sub)``
function). ``planb --help`` lists the product's commands and ``local`` from this table alone; ``planb status ...``
imports ``planb.status.cli`` and nothing of the GKE emulator, the capacity simulator, the local stack or the Ray
head stand-in. The stand-ins are commands of ``planb local`` (a ``parent``): ``planb local gke-emulator ...``
imports the local stack's module and the emulator's, ``planb local up`` the stack's alone.
tests/unit/test_cli.py checks that the help lines here are the ones each module registers.

The local wing's commands need the ``[local]`` extra (``pip install 'planb[local]'``); without it they say so. The
product's commands (``status``, ``values``, ``profiles``, ``regions``, ``completion``) need no extra.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from planb.errors import EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE, PlanbError, exit_codes_help

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


@dataclass(frozen=True)
class Command:
    """One `planb` sub-command: its name, its line in its parent's help, the module whose register() adds it.

    ``extra`` names the package extra whose libraries the module imports (pyproject.toml), None for the core's.
    ``parent`` names the top-level command it is a sub-command of (``local``), None for a top-level one.
    """

    name: str
    help: str
    module: str
    extra: str | None = None
    parent: str | None = None

    @property
    def path(self) -> tuple[str, ...]:
        """Its words on the command line: ``("local", "gke-emulator")``."""
        return (self.name,) if self.parent is None else (self.parent, self.name)


LOCAL_HELP = "local mode: the stack (kwok control plane, the real Kueue and KubeRay) and its stand-ins"


COMMANDS: tuple[Command, ...] = (
    Command("status", "where each RayJob landed, and why it waits if it does", "planb.status.cli"),
    Command("profiles", "list the accelerator profiles of the catalog", "planb.catalog.cli"),
    Command("values", "print Helm values for charts/planb derived from a profile", "planb.catalog.cli"),
    Command("regions", "across regions: the MultiKueue manager's keeper (docs/regions.md)", "planb.regions.cli"),
    Command("completion", "print a bash or zsh completion script for planb", "planb.completion"),
    Command("local", LOCAL_HELP, "planb.local.stack.cli", "local"),
    # The stand-ins for what only Google and Ray run, as commands of `planb local` (after its own verbs).
    Command(
        "gke-emulator",
        "the local GKE API (container/v1 subset) on 127.0.0.1",
        "planb.local.gke_emulator.cli",
        "local",
        "local",
    ),
    Command(
        "capacity",
        "the capacity simulator (GKE autoscaler + DWS, local mode)",
        "planb.local.capacity.cli",
        "local",
        "local",
    ),
    Command(
        "rayhead",
        "the Ray head stand-in KubeRay talks to, and what a job's payload does",
        "planb.local.rayhead.cli",
        "local",
        "local",
    ),
)
#: The commands `planb --help` lists: the product's and `local`.
TOP_LEVEL: tuple[Command, ...] = tuple(c for c in COMMANDS if c.parent is None)

DESCRIPTION = """\
TPU/GPU training on GKE: on-demand first, DWS flex-start as plan B.

Each job is a Helm release of charts/planb; Kueue admits it on the first plan of the ladder with room.
planb tells where each job landed and why it waits, prints the chart's values per accelerator profile,
and runs the local stack that stands in for GKE."""

EXAMPLES = """\
examples:
  planb status                          where each RayJob landed, and why it waits if it does
  planb status job-2 -o json            one job as JSON, for scripts
  planb profiles                        the accelerator profiles of the catalog
  planb values tpu-v6e-4x4              the chart's Helm values for a profile
  source <(planb completion bash)       tab completion in this shell (zsh: planb completion zsh)
  planb COMMAND --help                  a command's own options, examples and exit codes
"""
EXIT_CODES = exit_codes_help(
    {
        EXIT_OK: "ok: everything asked about is fine",
        EXIT_FAILED: "not as it should be: a job failed, no job matched, or --expect was not met",
        EXIT_USAGE: "usage: a command line, or an input it names, that planb cannot use",
        EXIT_UNREACHABLE: "unreachable: no kubeconfig, the API server does not answer, or it answered an error",
    }
)


class MissingExtraError(PlanbError):
    """A sub-command's module imports a library of an extra that is not installed."""


def registrar(module: str) -> Registrar:
    """The register() of one area's CLI module (imports the module and its package)."""
    register: Registrar = importlib.import_module(module).register
    return register


def version() -> str:
    """The installed package's version (pyproject.toml's), as `pip show planb` prints it."""
    try:
        return importlib.metadata.version("planb")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (planb is not installed: pip install -e .)"


def _command_of(argv: Sequence[str]) -> tuple[str, ...]:
    """The command path argv names: its first word that is not an option (`planb` itself takes none but -h), and the
    second when the first is a parent (`local`) and the second one of its commands (`gke-emulator`)."""
    words = [word for word in argv if not word.startswith("-")][:2]
    if len(words) == 2 and (words[0], words[1]) in {c.path for c in COMMANDS}:
        return (words[0], words[1])
    return tuple(words[:1])


def subparsers_of(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    """The parser's sub-commands' action (the one add_subparsers made), None when it has none."""
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _add(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], commands: Sequence[Command], wanted: set[str]
) -> None:
    """Each command's module's register() when the module is wanted, a one-line stub of each command else."""
    for module in dict.fromkeys(c.module for c in commands):
        if module in wanted:
            registrar(module)(sub)
            continue
        for command in commands:
            if command.module == module:
                sub.add_parser(command.name, help=command.help, add_help=False)


def build_parser(load: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser: full sub-commands for the modules in `load` (default: every module), one-line stubs else; a
    parent's commands (`planb local gke-emulator`) are added only under a parent loaded in full."""
    parser = argparse.ArgumentParser(
        prog="planb",
        description=DESCRIPTION,
        epilog=EXAMPLES + "\n" + EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"planb {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = set(dict.fromkeys(c.module for c in COMMANDS) if load is None else load)
    _add(sub, TOP_LEVEL, wanted)
    for parent in TOP_LEVEL:
        children = [c for c in COMMANDS if c.parent == parent.name]
        verbs = subparsers_of(sub.choices[parent.name]) if children and parent.module in wanted else None
        if verbs is not None:
            _add(verbs, children, wanted)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    path = _command_of(argv)
    try:
        parser = _parser_for(path)
        args = parser.parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except PlanbError as exc:
        from planb.printable import printable  # only on an error: the command's own imports stay lazy

        # The message may carry an API server's text (a failed call's): escaped, it cannot drive the terminal.
        print(f"planb: error: {printable(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def _parser_for(path: tuple[str, ...]) -> argparse.ArgumentParser:
    """build_parser with the modules of command `path` (and of its parent) loaded; a library of their extra missing is
    a MissingExtraError."""
    commands = [c for c in COMMANDS if c.path in {path, path[:1]}]
    try:
        return build_parser([c.module for c in commands])
    except ModuleNotFoundError as exc:
        extra = next((c.extra for c in commands if c.extra), None)
        if extra is None or (exc.name or "planb").split(".")[0] == "planb":
            raise
        raise MissingExtraError(
            f"planb {' '.join(path)} needs {exc.name}, which is not installed. Fix: pip install 'planb[{extra}]'"
        ) from exc


if __name__ == "__main__":
    sys.exit(main())
