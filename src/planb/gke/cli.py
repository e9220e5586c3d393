"""`planb gke-emulator serve|start|stop|status|fail-next`: run the local GKE API."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from planb.gke.emulator import DEFAULT_OP_SECONDS, DEFAULT_PORT, EmulatorError, EmulatorHTTPServer, Engine
from planb.gke.store import Store, emulator_dir
from planb.localstack.processes import is_alive, terminate
from planb.paths import state_dir


def _port_default() -> int:
    return int(os.environ.get("PLANB_GKE_EMULATOR_PORT", DEFAULT_PORT))


def _op_seconds_default() -> float:
    return float(os.environ.get("PLANB_GKE_EMULATOR_OP_SECONDS", DEFAULT_OP_SECONDS))


def _files(root: Path | None = None) -> tuple[Path, Path, Path]:
    folder = emulator_dir(root or state_dir())
    return folder / "emulator.pid", folder / "emulator.log", folder / "emulator.json"


def _pid_alive(pid: int) -> bool:
    return is_alive(pid)  # a zombie is not alive


def running_emulator() -> tuple[int, str] | None:
    """(pid, url) of the emulator `start` launched, if that process is alive."""
    pid_file, _, info_file = _files()
    if not pid_file.exists():
        return None
    pid = int(pid_file.read_text().strip() or 0)
    if pid <= 0 or not _pid_alive(pid):
        return None
    url = json.loads(info_file.read_text())["url"] if info_file.exists() else ""
    return pid, url


def emulator_healthy(url: str) -> bool:
    """Whether the emulator at url answers its health endpoint."""
    try:
        with urllib.request.urlopen(f"{url}/planb/v1/healthz", timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    store = Store(state_dir())
    if args.reset:
        store.reset()
    server = EmulatorHTTPServer(Engine(store, op_seconds=args.op_seconds), host=args.host, port=args.port, verbose=True)
    _, _, info_file = _files()
    info_file.write_text(json.dumps({"url": server.url, "pid": os.getpid(), "op_seconds": args.op_seconds}))
    print(f"planb GKE emulator on {server.url} (operations take {args.op_seconds}s)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    running = running_emulator()
    if running:
        print(f"GKE emulator already running (pid {running[0]}) on {running[1]}")
        return 0
    pid_file, log_file, info_file = _files()
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    info_file.unlink(missing_ok=True)
    command = [sys.executable, "-m", "planb.cli", "gke-emulator", "serve", "--host", args.host]
    command += ["--port", str(args.port), "--op-seconds", str(args.op_seconds)]
    if args.reset:
        command.append("--reset")
    with log_file.open("a") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    pid_file.write_text(str(process.pid))
    deadline = time.monotonic() + args.wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise EmulatorError(f"the GKE emulator exited with {process.returncode}; see {log_file}")
        if info_file.exists() and emulator_healthy(json.loads(info_file.read_text())["url"]):
            print(f"GKE emulator started (pid {process.pid}) on {json.loads(info_file.read_text())['url']}")
            return 0
        time.sleep(0.1)
    raise EmulatorError(f"the GKE emulator did not answer within {args.wait}s; see {log_file}")


def cmd_stop(args: argparse.Namespace) -> int:
    pid_file, _, info_file = _files()
    running = running_emulator()
    if running is None:
        print("GKE emulator is not running")
    else:
        terminate(running[0], timeout=5.0)  # SIGTERM, then SIGKILL: never left running untracked
        print(f"GKE emulator stopped (pid {running[0]})")
    pid_file.unlink(missing_ok=True)
    info_file.unlink(missing_ok=True)
    if args.purge:
        Store(state_dir()).reset()
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    running = running_emulator()
    if running is None:
        print("GKE emulator: stopped")
        return 3
    healthy = emulator_healthy(running[1])
    print(f"GKE emulator: running (pid {running[0]}) on {running[1]}{'' if healthy else ' (not answering)'}")
    return 0 if healthy else 1


def cmd_fail_next(args: argparse.Namespace) -> int:
    running = running_emulator()
    if running is None:
        raise EmulatorError("the GKE emulator is not running; start it with `planb gke-emulator start`")
    data = json.dumps({"operationType": args.operation_type, "message": args.message}).encode()
    request = urllib.request.Request(f"{running[1]}/planb/v1/faults", data=data, method="POST")
    with urllib.request.urlopen(request, timeout=5):
        pass
    print(f"the next {args.operation_type} operation will fail mid-way")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `planb gke-emulator ...`."""
    parser = sub.add_parser("gke-emulator", help="the local GKE API (container/v1 subset) on 127.0.0.1")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    def server_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
        p.add_argument(
            "--port",
            type=int,
            default=_port_default(),
            help=f"port (env PLANB_GKE_EMULATOR_PORT, default {DEFAULT_PORT})",
        )
        p.add_argument(
            "--op-seconds",
            type=float,
            default=_op_seconds_default(),
            help=f"how long each operation runs (env PLANB_GKE_EMULATOR_OP_SECONDS, default {DEFAULT_OP_SECONDS})",
        )
        p.add_argument("--reset", action="store_true", help="forget all clusters, pools and the request log first")

    serve = actions.add_parser("serve", help="serve in the foreground")
    server_options(serve)
    serve.set_defaults(handler=cmd_serve)
    start = actions.add_parser("start", help="serve in the background (pid and log under .state/gke-emulator)")
    server_options(start)
    start.add_argument("--wait", type=float, default=15.0, help="seconds to wait for it to answer")
    start.set_defaults(handler=cmd_start)
    stop = actions.add_parser("stop", help="stop the background emulator")
    stop.add_argument("--purge", action="store_true", help="also forget its state")
    stop.set_defaults(handler=cmd_stop)
    status = actions.add_parser("status", help="is it running, and where")
    status.set_defaults(handler=cmd_status)
    fail = actions.add_parser("fail-next", help="make the next operation fail mid-way (fault injection)")
    fail.add_argument("--operation-type", default="*", help="e.g. CREATE_NODE_POOL, CREATE_CLUSTER (default: any)")
    fail.add_argument("--message", default=None, help="the error message the operation reports")
    fail.set_defaults(handler=cmd_fail_next)
