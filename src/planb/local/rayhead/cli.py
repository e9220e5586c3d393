"""`planb local rayhead run|set|show`: the local stack's Ray head stand-in and what its jobs' payloads do."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from planb.argtypes import finite
from planb.errors import PlanbError
from planb.local.rayhead import address, server
from planb.local.rayhead import settings as settings_mod
from planb.local.statefile import stop_on_signals


def _run(args: argparse.Namespace) -> int:
    stop = stop_on_signals()
    settings = Path(args.failover_settings) if args.failover_settings else None
    return server.run(Path(args.kubeconfig), args.apiserver_port, args.port, stop.is_set, settings)


def _env(pairs: list[str]) -> dict[str, str]:
    env = dict(settings_mod.DEFAULT_RUN_ENV)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise PlanbError(f"--env {pair!r}: give NAME=VALUE")
        env[name] = value
    return env


def _image(pairs: list[str]) -> dict[str, str]:
    image = {}
    for pair in pairs:
        path, sep, folder = pair.partition("=")
        if not sep or not path.startswith("/") or not folder:
            raise PlanbError(
                f"--image-dir {pair!r}: give CONTAINER_PATH=FOLDER, e.g. /workspace=examples/your-code/team"
            )
        image[path] = str(Path(folder).resolve())
    return image


def _set(args: argparse.Namespace) -> int:
    if args.clear:
        if args.job is None or args.run is not None:
            raise PlanbError("--clear needs --job PATTERN (the default payload is set, not cleared)")
        settings_mod.set_payload(args.job, None)
        return _show(args)
    if (args.env or args.image_dir) and args.run is None:
        raise PlanbError("--env and --image-dir apply to --run (the entrypoint as a host process) only")
    if args.run is None:
        payload = settings_mod.Payload(
            seconds=settings_mod.DEFAULT_SECONDS if args.seconds is None else args.seconds, fail=args.fail or ""
        )
        payload.validate("--seconds/--fail")
        settings_mod.set_payload(args.job, payload)
        return _show(args)
    if args.fail is not None or args.seconds is not None:
        raise PlanbError("--run runs the entrypoint itself: --seconds and --fail are for simulated payloads")
    if args.job is not None:
        raise PlanbError(f"--run names its jobs itself, not with --job: {settings_mod.RUN_NEEDS_NAMES}")
    bad = [name for name in args.run if not settings_mod.JOB_NAME.fullmatch(name)]
    if bad:
        given = f"--run {bad[0]!r} is not <namespace>/<name>" if bad[0] else "--run without a job"
        raise PlanbError(f"{given}: {settings_mod.RUN_NEEDS_NAMES}")
    payload = settings_mod.Payload(mode="run", env=_env(args.env), image=_image(args.image_dir))
    payload.validate("--env/--image-dir")
    for name in args.run:
        settings_mod.set_payload(name, payload)
    return _show(args)


def _show(_: argparse.Namespace) -> int:
    current = settings_mod.load()
    print(
        json.dumps(
            {"default": asdict(current.default), "jobs": {k: asdict(v) for k, v in current.jobs.items()}}, indent=2
        )
    )
    return 0


def _add_run(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`run`: the stand-in's server, against the local stack's API server."""
    run = actions.add_parser("run", help="serve (started by 'planb local up')")
    run.add_argument("--kubeconfig", required=True)
    run.add_argument(
        "--apiserver-port", type=int, required=True, help="the local stack's API server port (it serves no other)"
    )
    run.add_argument("--port", type=int, default=address.PORT)
    run.add_argument(
        "--failover-settings",
        metavar="FILE",
        help="local mode's failover switch: while it is on, copy a ready RayCluster's state into its RayJob at once",
    )
    run.set_defaults(handler=_run)


def _add_set(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`set`: a simulated payload (--seconds, --fail) or --run, the entrypoint as a host process."""
    setp = actions.add_parser(
        "set",
        help="what the payload of every job, of --job PATTERN or of --run NAMESPACE/NAME does from its next submission",
    )
    setp.add_argument("--job", metavar="PATTERN", help="RayJob name or <namespace>/<name>, fnmatch pattern")
    setp.add_argument(
        "--seconds", type=finite, help=f"simulated payload: how long it runs (default {settings_mod.DEFAULT_SECONDS:g})"
    )
    setp.add_argument("--fail", metavar="MESSAGE", help="simulated payload: end FAILED with this message")
    setp.add_argument(
        "--run",
        action="append",
        nargs="?",
        const="",
        metavar="NAMESPACE/NAME",
        help="run this RayJob's entrypoint as a host process instead (repeat for more jobs; exact names only)",
    )
    setp.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="--run: environment over the head container's (PLANB_ACCELERATOR=cpu, PLANB_ACCELERATOR_TYPE= and "
        "JAX_PLATFORMS=cpu unless given: this machine has no TPU)",
    )
    setp.add_argument(
        "--image-dir",
        action="append",
        default=[],
        metavar="CONTAINER_PATH=FOLDER",
        help="--run: the code inside the job's image (job.command), stood in for by FOLDER on this machine, copied to "
        "CONTAINER_PATH for each launch (no image is pulled here)",
    )
    setp.add_argument("--clear", action="store_true", help="forget --job PATTERN's payload")
    setp.set_defaults(handler=_set)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `planb local rayhead run|set|show`."""
    parser = sub.add_parser(
        "rayhead",
        help="the Ray head stand-in KubeRay talks to, and what a job's payload does",
        description="KWOK pods run nothing: the stand-in answers KubeRay's Ray job API and does what the submitter "
        "pod would. A job's payload is simulated (runs --seconds, then SUCCEEDED, or FAILED with --fail) or, with "
        "--run NAMESPACE/NAME, that RayJob's entrypoint itself (python <file from its ConfigMap or --image-dir>) as a "
        "host process on this machine's CPU, with this user's rights.",
    )
    rsub = parser.add_subparsers(dest="rayhead_command", required=True, metavar="ACTION")
    _add_run(rsub)
    _add_set(rsub)
    rsub.add_parser("show", help="print the payload settings").set_defaults(handler=_show)
