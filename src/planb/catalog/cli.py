"""`planb profiles` and `planb values`: the accelerator catalog on the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from planb.catalog import profiles, values
from planb.catalog.errors import CatalogError

_COLUMNS = ("PROFILE", "ALIAS", "KIND", "MACHINE TYPE", "TOPOLOGY", "HOSTS", "CHIPS/HOST", "CHIPS", "FLEX-START")


def profiles_table() -> str:
    """Every profile, one row each, columns aligned."""
    rows = [_COLUMNS]
    for prof in profiles.PROFILES.values():
        rows.append(
            (
                prof.name,
                prof.alias or "-",
                prof.kind,
                prof.machine_type,
                prof.topology or "-",
                str(prof.hosts_per_slice),
                str(prof.chips_per_host),
                str(prof.chips_per_slice),
                "yes" if prof.flex_start else "no",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def _profiles(args: argparse.Namespace) -> int:
    sys.stdout.write(profiles_table())
    return 0


def _values(args: argparse.Namespace) -> int:
    if args.write_all is not None:
        if args.profile is not None:
            raise CatalogError("--write-all regenerates every shipped profile: give it no PROFILE")
        for path in values.write_all(Path(args.write_all)):
            print(f"wrote {path}")
        return 0
    if args.profile is None:
        raise CatalogError("give a PROFILE (see 'planb profiles') or --write-all DIR")
    sys.stdout.write(values.render(args.profile, args.slices, args.on_demand_slices, args.dws_slices))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this package's sub-commands to `planb`."""
    p = sub.add_parser("profiles", help="list the accelerator profiles of the catalog")
    p.set_defaults(handler=_profiles)

    v = sub.add_parser("values", help="print Helm values for charts/planb derived from a profile")
    v.add_argument("profile", nargs="?", metavar="PROFILE", help="e.g. tpu-v6e-4x4 or its alias tpu-v6e-16")
    v.add_argument("--slices", type=int, default=1, metavar="N", help="accelerator slices per job (default 1)")
    v.add_argument(
        "--on-demand-slices",
        type=int,
        default=1,
        metavar="K",
        help="plan A quota in slices: accelerator quota = K x chips per slice (default 1)",
    )
    v.add_argument(
        "--dws-slices",
        type=int,
        default=1,
        metavar="K",
        help="plan B (DWS) quota in slices, the DWS pool's size: accelerator quota = K x chips per slice (default 1)",
    )
    v.add_argument(
        "--write-all",
        metavar="DIR",
        help="regenerate the shipped values files (charts/planb/values/<profile>.yaml) in DIR",
    )
    v.set_defaults(handler=_values)
