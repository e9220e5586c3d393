"""The training step compiled ahead of time for every TPU profile of the catalog, by the real TPU compiler on this
machine's CPU (training/planb_train/aot.py): the profile's default transformer and the largest model it claims
(planb.catalog.training), each on a mesh of the slice's devices as ``jax.experimental.topologies`` describes them.

A compile takes 30 s (scanned blocks) to several minutes (a default model's unrolled blocks) on two cores, so each
result is kept in the tool cache outside the checkout (``$PLANB_CACHE_DIR/aot``) under two keys:

* the source key (``Job.key``): the bytes of the modules that build and compile the step, the model's settings, the
  slice, the versions of jax, jaxlib, libtpu, flax and optax, and the compiler's options from the environment. It
  costs nothing to compute, so `make test` reads every result by it;
* the program key (``program_key``): the program the compiler is given (the step lowered to StableHLO, printed
  without source locations), the slice, the versions of jax, jaxlib and libtpu and the compiler's options. Where a
  source key misses, the step is lowered (1 to 20 s) and a result kept under its program key is reused: an edit
  that moves or renames code but leaves the program as it was (a module split, a comment) compiles nothing again.
  Only the compiler's answer for that very program, for that very slice, is ever reused.

``python -m planb.build.aot [--jobs N] [--table] [--update BENCHMARKS.md] [--profile P ...]`` compiles what the
cache lacks (N processes at once) and prints BENCHMARKS.md's "Compiled for each slice" table, or writes it between
that file's markers (``make bench BENCH=aot`` does, for every TPU profile).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import hashlib
import importlib
import json
import multiprocessing
import os
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from planb import paths
from planb.build import aot_table
from planb.catalog import profiles, training

TRAINING = paths.REPO / "training"
#: The modules whose bytes decide the compiled program (the model, its sharding, the compile itself).
SOURCES = (
    "planb_train/models/task.py",
    "planb_train/models/attention.py",
    "planb_train/models/transformer.py",
    "planb_train/sharding.py",
    "planb_train/aot.py",
)
VERSIONED = ("jax", "jaxlib", "libtpu", "flax", "optax")
#: The versions that decide what the compiler makes of a given program (flax and optax are in the program itself).
COMPILER_VERSIONS = ("jax", "jaxlib", "libtpu")
#: The cache's folder of results by program key (program_key), beside those by source key.
PROGRAMS = "programs"
#: Exceptions that are the compiler's or the model's answer (jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED and the
#: like; planb_train.variables.ConfigError; NotImplementedError: an op XLA cannot partition), named so that this module
#: imports neither JAX nor the job's modules itself.
REFUSALS = frozenset({"JaxRuntimeError", "XlaRuntimeError", "ConfigError", "NotImplementedError"})
#: The environment the compiler reads its options from (the workers inherit it).
COMPILER_ENV = ("XLA_FLAGS", "LIBTPU_INIT_ARGS")
#: planb's policy: a step fits when the compiler's HBM for one device is at most this share of the device's memory,
#: because the runtime adds its own buffers (the compiler reserves some itself) and a data loader's batches.
FIT_SHARE = 0.9
KINDS = ("default", "largest")
SCHEMA = 1
PROGRAM_SCHEMA = 1


@dataclasses.dataclass(frozen=True)
class Job:
    """One compile: a profile and which of its models."""

    profile: str
    which: str  # "default" or "largest"

    def size(self) -> training.TransformerSize:
        if self.which == "default":
            return training.default_transformer(self.profile)
        return training.largest_transformer(self.profile)

    def settings(self) -> dict[str, Any]:
        """The PLANB_* settings of the model (train.py's TrainConfig fields) and of its slice."""
        size, prof = self.size(), profiles.get(self.profile)
        return {
            "model": "transformer",
            "d_model": size.d_model,
            "num_layers": size.num_layers,
            "num_heads": size.num_heads,
            "seq_len": size.seq_len,
            "batch_per_device": size.batch_per_device,
            "vocab_size": size.vocab_size,
            "remat": size.remat,
            "scan_layers": size.scan_layers,
            "dtype": "bfloat16",
            "attention": "auto",
            "slice": {
                "generation": prof.generation,
                "topology": prof.topology,
                "chips_per_host": prof.chips_per_host,
            },
        }

    def key(self) -> str:
        """What decides the compiled program: the settings, the sources, the versions, and the compiler's options
        from the environment where any is set (COMPILER_ENV). The other TrainConfig defaults (the learning rate, the
        seed) are constants of the program that change neither its memory nor its FLOPs."""
        digest = hashlib.sha256(json.dumps({"schema": SCHEMA, **self.settings()}, sort_keys=True).encode())
        for name in SOURCES:
            digest.update((TRAINING / name).read_bytes())
        for dist in VERSIONED:
            digest.update(f"{dist}=={metadata.version(dist)}".encode())
        for name in COMPILER_ENV:
            if os.environ.get(name):
                digest.update(f"{name}={os.environ[name]}".encode())
        return digest.hexdigest()


def cache_dir() -> Path:
    """$PLANB_CACHE_DIR/aot (default ~/.cache/planb/aot), beside the pinned tools' cache."""
    root = (
        os.environ.get("PLANB_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "planb"
    )
    return Path(root) / "aot"


def jobs(only: tuple[str, ...] = ()) -> list[Job]:
    """Every TPU profile of the catalog (or those of ``only``, in its order), its default model and its largest."""
    tpu = [p.name for p in profiles.PROFILES.values() if p.kind == "tpu"]
    unknown = [name for name in only if name not in tpu]
    if unknown:
        raise ValueError(f"not TPU profiles of the catalog: {', '.join(unknown)} (see 'planb profiles')")
    chosen = list(only) if only else tpu  # in the order asked
    return [Job(name, which) for name in chosen for which in KINDS]


def program_key(program: str, tpu: dict[str, Any]) -> str:
    """The key of the compiler's answer for ``program`` (the step's StableHLO, without source locations) on the
    slice ``tpu`` (Job.settings' "slice"): what the compiler is given, its version, and its options."""
    digest = hashlib.sha256(json.dumps({"schema": PROGRAM_SCHEMA, "slice": tpu}, sort_keys=True).encode())
    for dist in COMPILER_VERSIONS:
        digest.update(f"{dist}=={metadata.version(dist)}".encode())
    for name in COMPILER_ENV:
        if os.environ.get(name):
            digest.update(f"{name}={os.environ[name]}".encode())
    digest.update(program.encode())
    return digest.hexdigest()


def _write_json(path: Path, answer: dict[str, Any]) -> None:
    """``answer`` at ``path``, whole or not at all (another process may read or write the same key)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(answer), encoding="utf-8")
    tmp.replace(path)


def _lower_in_worker(settings: dict[str, Any]) -> tuple[Any, Any, Any, str]:
    """In a worker process: the job's modules, its TrainConfig and Slice, and the program key of the step lowered for
    ``settings`` (program_key; nothing compiled)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # the compiler needs no device; no chip is opened
    os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")  # workers side by side load libtpu each
    if str(TRAINING) not in sys.path:
        sys.path.insert(0, str(TRAINING))
    # No source locations in the program: they are the Python frames that traced each op (the Mosaic kernels' bodies
    # carry them too), so they differ with the process that lowers (a worker of this module's, a test's) and with
    # the file a function is in, and the compiler makes the same program of it with or without them. JAX reads the
    # variable when it is imported; where it already is (a caller's process), its config is set instead.
    os.environ["JAX_TRACEBACK_IN_LOCATIONS_LIMIT"] = "0"
    if "jax" in sys.modules:
        sys.modules["jax"].config.update("jax_traceback_in_locations_limit", 0)
    # The job's own modules, from the checkout's training/ (the job's files, not a distribution of planb's).
    aot = importlib.import_module("planb_train.aot")
    config = importlib.import_module("planb_train.config")
    models = importlib.import_module("planb_train.models.transformer")
    cfg = config.TrainConfig(accelerator="tpu", **{k: v for k, v in settings.items() if k != "slice"})
    tpu = aot.Slice(**settings["slice"])
    lowered = models.transformer_task(cfg, devices=aot.topology_devices(tpu)).lower()
    return aot, cfg, tpu, program_key(lowered.as_text(debug_info=False), settings["slice"])


def _compile_in_worker(settings: dict[str, Any], folder: str) -> dict[str, Any]:
    """In a worker process: lower the step for ``settings``; the compiler's answer kept under its program key, or
    else compile it and keep it there. Says what the compiler said, or its error."""
    try:
        started = time.perf_counter()
        aot, cfg, tpu, program = _lower_in_worker(settings)
        kept = Path(folder) / PROGRAMS / f"{program}.json"
        if kept.is_file():
            return {**json.loads(kept.read_text(encoding="utf-8")), "lower_s": time.perf_counter() - started}
        done = aot.compile_step(cfg, tpu)
    except Exception as exc:
        # the compiler's refusal (out of memory, a kernel it cannot place) or the model's is a result to keep; any
        # other failure (libtpu's start, the host's memory) propagates and is never cached as a verdict
        if type(exc).__name__ not in REFUSALS:
            raise
        return {"error": f"{type(exc).__name__}: {str(exc)[:2000]}"}
    answer = {**dataclasses.asdict(done), "peak_bytes": done.peak_bytes, "program": program}
    _write_json(kept, answer)
    return answer


def results(wanted: list[Job], workers: int = 1, progress: bool = True) -> dict[Job, dict[str, Any]]:
    """The compiler's answer for each job: from the cache, or compiled (``workers`` processes) and cached."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    found: dict[Job, dict[str, Any]] = {}
    missing: list[Job] = []
    for job in wanted:
        path = folder / f"{job.key()}.json"
        if path.is_file():
            found[job] = json.loads(path.read_text(encoding="utf-8"))
        else:
            missing.append(job)
    if not missing:
        return found
    same: dict[str, list[Job]] = {}  # one compile a key (a profile whose largest claim is its default: one model)
    for job in missing:
        same.setdefault(job.key(), []).append(job)
    context = multiprocessing.get_context("spawn")  # libtpu and JAX's threads do not survive a fork
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = {
            pool.submit(_compile_in_worker, jobs_[0].settings(), str(folder)): key for key, jobs_ in same.items()
        }
        for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
            key = futures[future]
            answer = future.result()
            _write_json(folder / f"{key}.json", answer)
            for job in same[key]:
                found[job] = answer
            if progress:
                what = answer.get("error", "").split(":")[0] or f"{answer['compile_s']:.0f} s"
                names = ", ".join(f"{job.profile} {job.which}" for job in same[key])
                print(f"[planb aot] {n}/{len(same)} compiled: {names} ({what})", flush=True)
    return found


def index_programs(wanted: list[Job], workers: int = 1) -> int:
    """Keep each cached answer of ``wanted`` under its program key too, where it is kept by source key alone (an
    answer from before program keys): the step is lowered, never compiled. Returns how many were added."""
    folder = cache_dir()
    todo = {}
    for job in wanted:
        path = folder / f"{job.key()}.json"
        if path.is_file():
            answer = json.loads(path.read_text(encoding="utf-8"))
            if "program" not in answer and "error" not in answer:
                todo[job.key()] = (job, answer)
    context = multiprocessing.get_context("spawn")
    added = 0
    with concurrent.futures.ProcessPoolExecutor(max(1, workers), mp_context=context) as pool:
        futures = {
            pool.submit(_program_in_worker, job.settings()): (key, answer) for key, (job, answer) in todo.items()
        }
        for future in concurrent.futures.as_completed(futures):
            key, answer = futures[future]
            program = future.result()
            _write_json(folder / PROGRAMS / f"{program}.json", {**answer, "program": program})
            _write_json(folder / f"{key}.json", {**answer, "program": program})
            added += 1
    return added


def _program_in_worker(settings: dict[str, Any]) -> str:
    """In a worker process: the program key of the step for ``settings`` (lowered, not compiled)."""
    return str(_lower_in_worker(settings)[3])


def verdict(job: Job, answer: dict[str, Any]) -> tuple[bool, str]:
    """Whether the step fits one device's memory within FIT_SHARE, and a line that says it."""
    hbm = training.device_hbm_bytes(job.profile)
    if "error" in answer:
        return False, f"{job.profile} {job.which}: the compiler refused it: {answer['error'][:400]}"
    share = answer["peak_bytes"] / hbm
    line = f"{job.profile} {job.which}: {answer['peak_bytes'] / 2**30:.2f} GiB of {hbm / 2**30:.0f} GiB ({share:.0%})"
    return share <= FIT_SHARE, line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m planb.build.aot", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1, help="compiles at once (each a process; about 2 GB each)")
    parser.add_argument("--table", action="store_true", help="print BENCHMARKS.md's table")
    parser.add_argument("--profile", action="append", default=[], help="only these profiles (repeatable)")
    parser.add_argument("--update", type=Path, help="write the table between the markers of this file")
    parser.add_argument(
        "--index",
        action="store_true",
        help="only keep cached answers under their program keys too (lowers, never compiles)",
    )
    args = parser.parse_args(argv)
    try:
        wanted = jobs(tuple(args.profile))
    except ValueError as exc:
        parser.error(str(exc))
    if args.index:
        print(f"[planb aot] {index_programs(wanted, args.jobs)} answer(s) kept under their program keys", flush=True)
        return 0
    answers = results(wanted, args.jobs)
    ordered = {job: answers[job] for job in wanted}
    failed = [line for job in wanted for ok, line in [verdict(job, ordered[job])] if not ok]
    if args.table or args.update:
        sys.stdout.write(aot_table.table(ordered))
    if args.update:
        aot_table.update(args.update, ordered)
    for line in failed:
        print(f"[planb aot] does not fit within {FIT_SHARE:.0%}: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
