"""The `planb` command line: each area registers its own sub-commands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from planb.capacity import cli as capacity_cli
from planb.catalog import cli as catalog_cli
from planb.errors import PlanbError
from planb.gke import cli as gke_cli
from planb.localstack import cli as localstack_cli
from planb.rayhead import cli as rayhead_cli
from planb.status import cli as status_cli

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

REGISTRARS: tuple[Registrar, ...] = (
    localstack_cli.register,
    catalog_cli.register,
    gke_cli.register,
    capacity_cli.register,
    rayhead_cli.register,
    status_cli.register,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="planb",
        description="TPU/GPU training on GKE: on-demand first, DWS flex-start as plan B.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in REGISTRARS:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except PlanbError as exc:
        print(f"planb: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
