"""planb's training job on one TPU chip: the figures BENCHMARKS.md's "TPU v5e, one chip" table holds.

Run by hack/tpu_bench.sh on a TPU machine (no network, no sockets: the plain runner, no Ray). Each measurement is
one train.py process (its own chip open, imports, restore and compilation, as a restarted pod has), and prints one
JSON line: {"measure": ..., ...figures..., "env": the PLANB_* settings}. ``--smoke`` runs the same plan with tiny
models on CPU (a dry run before spending device time); ``--only NAME[,NAME]``
runs some measurements; ``sweep`` runs sizes, attention and remat side by side in one process (exploration).
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# train.py's resume line ("resumed from checkpoint step S; N step(s) lost") is read by one parser, beside this script
# (hack/ is on sys.path when a script of it runs).
from bench_concurrent_figures import parse_resumed
from tpu_floor import measure_floor
from tpu_preemption_figures import PER_RUN, preemption_figures, startup_log
from tpu_runs import HALF_HBM, HBM_BYTES, LARGE, PROFILE, TABLE, Bench, emit, throughput
from tpu_save_policy import SIZE_6GB, measure_save_policy


def measure_mfu(b: Bench) -> None:
    for name, settings in (("profile-default", PROFILE), ("large", LARGE)):
        m = b.run({**settings, "PLANB_EPOCHS": "40"})
        emit(f"mfu-{name}", throughput(m))


def measure_mfu_scanned(b: Bench) -> None:
    """The same two sizes with the blocks as one scan (PLANB_SCAN_LAYERS=1), the form every slice compiles in."""
    for name, settings in (("profile-default", PROFILE), ("large", LARGE)):
        m = b.run({**settings, "PLANB_SCAN_LAYERS": "1", "PLANB_EPOCHS": "40"})
        emit(f"mfu-scanned-{name}", throughput(m))


def measure_table(b: Bench) -> None:
    for name, settings in TABLE.items():
        if settings == LARGE:
            continue  # measured by mfu-large
        emit(f"fits-{name}", throughput(b.run({**settings, "PLANB_EPOCHS": "12"})))


def checkpoint_settings(b: Bench, name: str, every: int) -> dict[str, str]:
    return {
        "PLANB_CHECKPOINT_DIR": str(b.work / name),
        "PLANB_CHECKPOINT_EVERY": str(every),
        "PLANB_RUN_ID": "bench/" + name,
    }


def measure_saves_and_restarts(b: Bench) -> None:
    """Saves every ``b.save_every`` steps (2026-12-04: 100) against the same run without; then resumes of that
    checkpoint with the warm cache and with a cold one."""
    every = b.save_every
    steps = str(2 * every + 30)
    plain = b.run({**PROFILE, "PLANB_EPOCHS": steps})
    saving = b.run({**PROFILE, "PLANB_EPOCHS": steps, **checkpoint_settings(b, "saves", every)})
    figures: dict[str, Any] = {"ok": plain.get("ok") and saving.get("ok")}
    if figures["ok"]:
        overhead = saving["mean_step_s"] / plain["mean_step_s"] - 1
        figures.update(
            interval_steps=every,
            saves=saving["saves"],
            blocking_s=saving["save_blocking_s"],
            committed_s=saving["save_committed_s"],
            state_bytes=saving["state_bytes"],
            mean_step_s_without=plain["mean_step_s"],
            mean_step_s_with=saving["mean_step_s"],
            overhead=overhead,
            save_rate_bytes_per_s=saving["state_bytes"] / max(saving["save_committed_s"] or [float("nan")]),
        )
    else:
        figures.update(plain=throughput(plain), saving=throughput(saving))
    emit("save", figures)
    for cache, name in ((b.cache, "warm"), (b.work / "cold-cache", "cold")):
        m = b.run(
            {
                **PROFILE,
                "PLANB_EPOCHS": "100000",
                "PLANB_STOP_AFTER": "3",
                **checkpoint_settings(b, "saves", 100),
                "PLANB_COMPILATION_CACHE_DIR": str(cache),
            }
        )
        emit(
            f"restart-{name}-cache",
            {k: m.get(k) for k in ("ok", "start_step", "restore_s", "first_step_s", "state_bytes", "tail")},
        )


def measure_save_interval(b: Bench) -> None:
    """One run of two checkpoint intervals (``save_every``, the chart's 500 by default), saving at each: the saves'
    overhead as the mean step over the median one (the median step is one no save touched), and each save's blocking
    copy and commit. One process, for a call with little device time (2026-12-05: after the preemptions)."""
    m = b.run({**PROFILE, "PLANB_EPOCHS": str(2 * b.save_every), **checkpoint_settings(b, "interval", b.save_every)})
    figures = throughput(m)
    if m.get("ok"):
        keys = ("saves", "save_blocking_s", "save_committed_s", "save_step_s", "startup_s")
        figures.update({k: m.get(k) for k in keys}, interval_steps=b.save_every)
        figures["overhead_mean_over_median"] = m["mean_step_s"] / m["median_step_s"] - 1
    emit("save-interval", figures)


def measure_half_hbm(b: Bench) -> None:
    """A state over half of HBM: trains from scratch, saves, and resumes on the same chip."""
    ckpt = checkpoint_settings(b, "half-hbm", 100)
    first = b.run({**HALF_HBM, "PLANB_EPOCHS": "100", "PLANB_STOP_AFTER": "8", **ckpt})
    second = b.run({**HALF_HBM, "PLANB_EPOCHS": "100", "PLANB_STOP_AFTER": "4", **ckpt})
    emit(
        "resume-half-hbm",
        {
            "ok": bool(first.get("ok") and second.get("ok") and second.get("start_step") == 8),
            "state_bytes": first.get("state_bytes"),
            "state_share_of_hbm": (first.get("state_bytes") or 0) / HBM_BYTES,
            "first": throughput(first) | {"saves": first.get("saves"), "blocking_s": first.get("save_blocking_s")},
            "resume": {k: second.get(k) for k in ("ok", "start_step", "end_step", "restore_s", "first_step_s", "tail")},
        },
    )


def measure_preemptions(b: Bench, count: int = 3) -> None:
    """SIGTERM ``count`` times, ``run_s`` after each (re)start's first step, as a preemption notice; each restart
    resumes; checkpoints every ``save_every`` steps (the chart's default). Goodput = training kept (the progress
    record's seconds up to the last step) / the runs' wall time, each from its start to its exit, so restarts and
    the saves on notice are counted. Steps lost from the progress record's resume lines.

    ``b.runs`` (``--runs 0-1`` then ``--runs 2-3``) splits the runs over several calls of a machine that keeps
    ``--work`` between them (a device call may run 10 minutes; a directory under /tmp: on 2026-12-05 one inside
    the checkout was gone at the second call): each run is appended to preemptions.jsonl there,
    and the call that runs the last one prints the figures over all of them. The time between two calls is not
    counted: each restart in the figures follows its stop at once, as it does in one call. A call that starts at
    run 0 starts a fresh job; a short run without checkpoints first warms the compilation cache (a restarted job's
    cache is warm; the first start's compilation is the job's, not a preemption's) and gives the step time
    without saves, against which the saves' overhead is counted."""
    ckpt = checkpoint_settings(b, "preempted", b.save_every)
    log = b.work / "preemptions.jsonl"
    first, last = b.runs
    if first == 0:
        import shutil

        shutil.rmtree(ckpt["PLANB_CHECKPOINT_DIR"], ignore_errors=True)
        log.unlink(missing_ok=True)
        base = b.run({**PROFILE, "PLANB_EPOCHS": "120"})
        emit("preemptions-baseline", throughput(base))
        with log.open("a") as fh:
            fh.write(json.dumps({"baseline": {k: base.get(k) for k in PER_RUN}}) + "\n")
    step_s = 0.151  # the profile's step on a v5e chip without saves (2026-12-04), for the last run's length
    for i in range(first, min(last, count) + 1):
        settings = {**PROFILE, **ckpt, "PLANB_EPOCHS": "1000000"}
        if i == count:
            settings["PLANB_STOP_AFTER"] = str(int(b.run_s / step_s))  # the last run ends on its own
        started = time.monotonic()
        proc, metrics, env = b.start(settings)
        out_lines: list[str] = []
        first_at = None
        for line in _lines(proc):
            out_lines.append(line)
            if first_at is None and line.startswith("First step"):
                first_at = time.monotonic()
            if i < count and first_at is not None and time.monotonic() - first_at > b.run_s:
                proc.send_signal(signal.SIGTERM)
                first_at = float("inf")
        proc.wait()
        out = "".join(out_lines)
        r = b.result(proc, out, metrics, env, time.monotonic() - started)
        row = {"run": i, "ok": r.get("ok"), "lost": [n for _, n in parse_resumed(out)], "tail": None}
        row["startup_log"] = startup_log(out)
        row.update({k: r.get(k) for k in PER_RUN})
        if not r.get("ok"):
            row["tail"] = r.get("tail")
        with log.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        emit("preemptions-run", row)
    if last >= count:
        figures = preemption_figures(log, Path(ckpt["PLANB_CHECKPOINT_DIR"]), count)
        figures["compilation_cache_bytes"] = sum(f.stat().st_size for f in b.cache.rglob("*") if f.is_file())
        emit("preemptions", figures)


def _lines(proc: subprocess.Popen[str]) -> Iterator[str]:
    assert proc.stdout is not None
    yield from proc.stdout


MEASURES: dict[str, Callable[[Bench], None]] = {
    "mfu": measure_mfu,
    "mfu-scanned": measure_mfu_scanned,
    "table": measure_table,
    "saves": measure_saves_and_restarts,
    "save-interval": measure_save_interval,
    # planb's checkpoint interval at its defaults, the profile's state and a 6.1 GB one (hack/tpu_save_policy.py)
    "save-policy": lambda b: measure_save_policy(
        lambda name, s: b.run({**s, **checkpoint_settings(b, name, b.save_every)}),
        emit,
        {k: v for k, v in {"profile-default": PROFILE, "6.1gb": SIZE_6GB}.items() if not b.sizes or k in b.sizes},
        b.save_every,
        b.time_limit_s,
        b.smoke,
    ),
    "half-hbm": measure_half_hbm,
    "preemptions": measure_preemptions,
    # not in a plain run (`--only floor`): the parts of a restart that are the machine's (hack/tpu_floor.py)
    "floor": lambda b: emit(
        "floor",
        measure_floor(
            b.work,
            size=64 << 20 if b.smoke else None,
            step_env=b.env({**PROFILE, "PLANB_COMPILATION_CACHE_DIR": str(b.cache)}),
        ),
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", default="bench", choices=("bench", "sweep"))
    parser.add_argument("--smoke", action="store_true", help="tiny models on CPU (a dry run)")
    parser.add_argument("--only", default="", help="comma-separated measurements or sweep entries")
    parser.add_argument("--work", default="", help="working directory (default: a fresh temporary one)")
    parser.add_argument("--save-every", type=int, default=500, help="the saves measurement's interval (steps)")
    parser.add_argument("--run-s", type=float, default=15.0, help="seconds each preempted run trains")
    parser.add_argument("--runs", default="0-3", help="the preempted runs this call does, FIRST-LAST (0-3: all)")
    parser.add_argument("--time-limit-s", type=float, default=None, help="seconds save-policy may take (its runs fit)")
    parser.add_argument("--sizes", default="", help="save-policy's sizes only (comma-separated: profile-default,6.1gb)")
    args = parser.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="planb-tpu-bench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    b = Bench(work, args.smoke)
    b.save_every, b.run_s, b.time_limit_s = args.save_every, args.run_s, args.time_limit_s
    b.sizes = {n for n in args.sizes.split(",") if n}
    first, _, last = args.runs.partition("-")
    b.runs = (int(first), int(last or first))
    only = [n for n in args.only.split(",") if n]
    if args.mode == "sweep":
        from tpu_sweep import sweep

        sweep(b, only)
        return 0
    for name, fn in MEASURES.items():
        if (not only and name != "floor") or name in only:
            started = time.monotonic()
            fn(b)
            print(f"# {name}: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
