"""hack/tpu_bench.sh --only floor: what a restart on this machine costs before planb's job does anything of its own.

A preempted run spends time outside training in parts planb's code does not choose: Python's start and JAX's import,
the chip's opening (libtpu's initialisation), the process's end (the driver's release of the chip), and the disk's
rate for the checkpoint's bytes. This measures each, three times, in processes of their own, so that the
three-preemption run's goodput can be set against the floor these parts give (BENCHMARKS.md, "TPU v5e, one chip").

The chip's opening is tried with the environment as it is, and with libtpu told not to ask the GCE metadata server
(``TPU_SKIP_MDS_QUERY``, which this machine, with no network, cannot reach) and JAX told to load only the TPU
backend (``JAX_PLATFORMS=tpu``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TRAINING = Path(__file__).resolve().parents[1] / "training"

#: Prints, as JSON, the seconds since the process started at which JAX was imported and the chip was open.
OPEN = """
import json, sys, time
t0 = time.time()
import jax
t1 = time.time()
devices = jax.devices()
t2 = time.time()
print(json.dumps({"import_s": t1 - t0, "open_s": t2 - t1, "opened_at": t2, "devices": [str(d) for d in devices]}))
sys.stdout.flush()
"""
VARIANTS: dict[str, dict[str, str]] = {
    "as-is": {},
    "skip-mds": {"TPU_SKIP_MDS_QUERY": "1"},
    "skip-mds-tpu-only": {"TPU_SKIP_MDS_QUERY": "1", "JAX_PLATFORMS": "tpu"},
}
#: Builds the job's transformer step (training/, the PLANB_* environment) and either compiles it through the
#: persistent cache and writes the executable serialised (argv: "compile" FILE), or loads that file (argv: "load"
#: FILE) without tracing or lowering (jax.experimental.serialize_executable): is the cached step's load the part
#: a restart cannot skip?
STEP = """
import json, os, pickle, sys, time
t0 = time.time()
sys.path.insert(0, os.environ["PLANB_TRAINING_DIR"])
import jax
import planb_train.config as config, planb_train.startup as startup, planb_train.models.transformer as models
cfg = config.load_config(dict(os.environ))
startup.configure_compilation_cache(cfg)
jax.devices()
opened = time.time()
task = models.transformer_task(cfg)
out = {"open_at_s": opened - t0, "task_s": time.time() - opened}
mode, path = sys.argv[1], sys.argv[2]
from jax.experimental import serialize_executable as se
if mode == "compile":
    out["parts"] = task.precompile()
    cells = [c.cell_contents for c in task.step_fn.__closure__ or () if isinstance(c.cell_contents, dict)]
    compiled = next(c["step"] for c in cells if "step" in c)
    started = time.time()
    with open(path, "wb") as fh:
        pickle.dump(se.serialize(compiled), fh)
    out["serialize_s"] = time.time() - started
else:
    started = time.time()
    with open(path, "rb") as fh:
        payload, in_tree, out_tree = pickle.load(fh)
    out["read_s"] = time.time() - started
    se.deserialize_and_load(payload, in_tree, out_tree)
    out["load_s"] = time.time() - started - out["read_s"]
    out["bytes"] = len(payload)
print(json.dumps(out))
sys.stdout.flush()
"""
#: The v5e profile's training state (hack/tpu_bench.py PROFILE: float32 weights and Adam's two moments), rounded.
STATE_BYTES = 2_400_000_000


def open_once(env: dict[str, str]) -> dict[str, Any]:
    started = time.time()
    proc = subprocess.run(
        [sys.executable, "-c", OPEN], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    ended = time.time()
    if proc.returncode != 0:
        return {"ok": False, "returncode": proc.returncode, "tail": (proc.stdout + proc.stderr)[-800:]}
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "ok": True,
        "start_s": round(ended - started - (ended - got["opened_at"]) - got["import_s"] - got["open_s"], 2),
        "import_s": round(got["import_s"], 2),
        "open_s": round(got["open_s"], 2),
        "exit_s": round(ended - got["opened_at"], 2),  # after the chip was open, to the process's end
        "wall_s": round(ended - started, 2),
    }


def write_rate(directory: Path, size: int = STATE_BYTES, chunk: int = 64 << 20) -> dict[str, Any]:
    """Seconds to write `size` bytes to a new file in `directory` and fsync it, in chunks (a checkpoint's floor)."""
    path = directory / "planb-floor.bin"
    block = os.urandom(chunk)
    started = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        written = 0
        while written < size:
            written += os.write(fd, block[: min(chunk, size - written)])
        os.fsync(fd)
    finally:
        os.close(fd)
    seconds = time.perf_counter() - started
    path.unlink()
    return {
        "dir": str(directory),
        "bytes": size,
        "write_fsync_s": round(seconds, 2),
        "mb_per_s": round(size / seconds / 1e6),
    }


def step_once(env: dict[str, str], mode: str, path: Path) -> dict[str, Any]:
    started = time.time()
    proc = subprocess.run(
        [sys.executable, "-c", STEP, mode, str(path)],
        env={**os.environ, **env, "PLANB_TRAINING_DIR": str(TRAINING)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        return {"ok": False, "mode": mode, "tail": (proc.stdout + proc.stderr)[-800:]}
    return {
        "ok": True,
        "mode": mode,
        "wall_s": round(time.time() - started, 2),
        **json.loads(proc.stdout.splitlines()[-1]),
    }


def measure_floor(
    work: Path, reps: int = 3, size: int | None = None, step_env: dict[str, str] | None = None
) -> dict[str, Any]:
    """The chip's opening (each variant `reps` times), the disk's rate, and, given the job's step environment, its
    compilation through the persistent cache against a load of the serialised executable (twice each)."""
    size = size or STATE_BYTES
    figures: dict[str, Any] = {"env": {k: v for k, v in os.environ.items() if k.startswith(("TPU_", "JAX_", "XLA_"))}}
    for name, env in VARIANTS.items():
        figures[name] = [open_once(env) for _ in range(reps)]
    shm = Path("/dev/shm")
    figures["disk"] = [write_rate(work, size)] + ([write_rate(shm, size)] if shm.is_dir() else [])
    if step_env is not None:
        executable = work / "step.executable"
        figures["step"] = [step_once(step_env, m, executable) for m in ("compile", "load", "compile", "load")]
    return figures
