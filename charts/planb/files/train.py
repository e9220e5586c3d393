"""planb training job: the seed's JAX ``JaxTrainer`` script, made configurable and resumable.

The Helm chart embeds this file verbatim in a ConfigMap (mounted at /app), so it is self-contained:
it imports nothing from the planb package. Default behaviour is the seed's: a JAX linear regression
under Ray Train v2 ``JaxTrainer`` on a v6e 4x4 slice (4 workers x 4 chips), loss printed every 10
epochs, then "Training Complete!".

Configuration comes from environment variables (the chart sets them from the accelerator profile);
command-line flags of the same name (``--num-workers`` for ``PLANB_NUM_WORKERS``, ...) override them.

================================  ==========  ========================================================
Variable                          Default     Meaning
================================  ==========  ========================================================
PLANB_MODEL                       linear      ``linear`` (the seed's regression) or ``transformer``
                                              (small decoder-only LM on synthetic tokens)
PLANB_RUNNER                      ray         ``ray``: Ray Train v2 ``JaxTrainer``; ``plain``: plain
                                              JAX in this process over all local devices, no Ray
PLANB_ACCELERATOR                 tpu         ``tpu``, ``gpu`` or ``cpu`` (``cpu``: Ray workers get
                                              CPUs only and no JAX distributed setup)
PLANB_NUM_WORKERS                 4           Ray Train workers; on TPU one per host: chips(topology) /
                                              PLANB_CHIPS_PER_WORKER per slice, times the slices
PLANB_CHIPS_PER_WORKER            4           TPU chips or GPUs per worker (ignored on cpu)
PLANB_CPUS_PER_WORKER             (unset)     CPUs reserved per worker; unset: 1 on cpu, not
                                              requested on tpu/gpu (as the seed)
PLANB_TOPOLOGY                    4x4         TPU slice topology (AxB or AxBxC); tpu only
PLANB_ACCELERATOR_TYPE            TPU-V6E     Ray accelerator type. tpu: one of TPU-V2, TPU-V3,
                                  (tpu)       TPU-V4, TPU-V5P, TPU-V5LITEPOD, TPU-V6E, TPU-V7X. gpu:
                                              optional Ray GPU type (e.g. H100); default empty = any
                                              GPU
PLANB_EPOCHS                      50 / 200    training steps in total (linear / transformer); a
                                              resumed run continues up to this step
PLANB_LOG_EVERY                   10          print (and ``ray.train.report``) every N steps
PLANB_CHECKPOINT_DIR              (empty)     Orbax checkpoint directory (``gs://bucket/path`` in the
                                              cluster, an absolute local path in tests; a relative one
                                              is refused); empty = no checkpoints. On start the newest
                                              checkpoint in it is restored (see PLANB_RESUME).
PLANB_RUN_ID                      (empty)     the run's identity, ``<namespace>/<name>`` (the chart
                                              sets its release's), recorded next to the checkpoints
PLANB_RESUME                      auto        ``auto``: resume only this run's checkpoints (same
                                              PLANB_RUN_ID and config hash), refuse others;
                                              ``never``: refuse a directory that holds checkpoints;
                                              ``force``: resume whatever is newest and claim it
PLANB_CHECKPOINT_EVERY            100         save a checkpoint every N steps (and at the end)
PLANB_CHECKPOINT_KEEP             3           checkpoints kept (older ones are deleted)
PLANB_STOP_AFTER                  0           stop after N steps in this run, checkpointing first
                                              (simulates a preemption; 0 = never)
PLANB_SEED                        0           seed of parameters and of the synthetic data
PLANB_LEARNING_RATE               0.1 / 3e-3  learning rate (linear: SGD as the seed; transformer:
                                              AdamW with global-norm clipping at 1.0)
PLANB_BATCH_PER_DEVICE            8           transformer: sequences per device per step (global
                                              batch = this x jax.device_count())
PLANB_SEQ_LEN                     128         transformer: tokens per sequence the model reads
PLANB_VOCAB_SIZE                  256         transformer: vocabulary size
PLANB_D_MODEL                     128         transformer: model width
PLANB_NUM_LAYERS                  2           transformer: decoder blocks
PLANB_NUM_HEADS                   4           transformer: attention heads (must divide D_MODEL)
PLANB_DTYPE                       float32     transformer compute dtype: float32 or bfloat16
                                              (parameters and optimizer state stay float32)
PLANB_ATTENTION                   xla         ``jax.nn.dot_product_attention`` implementation:
                                              ``xla`` or ``cudnn`` (GPU flash attention)
PLANB_PEAK_TFLOPS                 (unset)     peak dense bf16 TFLOP/s of one chip or GPU, for MFU;
                                              the chart sets it from the catalog's profile
                                              (accelerator.peakTflops); unset: no MFU
PLANB_METRICS_FILE                (empty)     if set, worker 0 writes its final metrics here as JSON
RAY_TRAIN_HEALTH_CHECK_INTERVAL_S 0.2         (Ray's own variable; Ray's default is 2.0) how often
                                              the Train controller collects reports; each
                                              ``ray.train.report`` waits for the previous one to be
                                              collected, so 2.0 would stall fast training loops
================================  ==========  ========================================================

Checkpoints belong to their run. The first run that checkpoints into a directory writes
``planb-run.json`` there: its PLANB_RUN_ID and the SHA-256 of the settings that shape its state and
its data (RUN_CONFIG_FIELDS; not PLANB_EPOCHS, so a run may be extended). A later start resumes
only when both match; another run's directory, or checkpoints without a record, stop it with
``CheckpointOwnerError`` (exit status 2) before any step, so Orbax's ``max_to_keep`` only ever
deletes the run's own checkpoints. ``PLANB_RESUME=force`` resumes anyway and records the new owner.

Restarts. A job that restarts with the same checkpoint directory (a retry, a preemption, or Kueue
moving it to another flavor on a new Ray cluster) resumes from the newest checkpoint. Worker 0
records the last step it reached in ``planb-progress.json`` next to the checkpoints (rewritten
atomically after every step; at most once a second on a remote ``gs://`` directory), so a resumed
run prints one line ``resumed from checkpoint step S; N step(s) lost``: N is how far the previous
run had got past S, 0 when it stopped right at a checkpoint. The file also keeps the job's earlier
resumes, which a resumed run prints first (``earlier: resumed from checkpoint step S; N step(s)
lost``, oldest first): a restarted job's one log then holds its whole history, as `planb status`
reads it from the newest submitter pod. A restart therefore loses at most
PLANB_CHECKPOINT_EVERY - 1 steps, plus the steps run while the newest checkpoint was still being
written (Orbax's CheckpointManager saves asynchronously; one killed mid-write is not restored) and, on
gs://, the steps of the last second.

Bad values raise ``ConfigError`` (a ``ValueError``) naming the variable and the valid choices; the
command line turns it into exit status 2.

Data. The linear model uses the seed's fixed data set. The transformer reads synthetic token
sequences generated from (PLANB_SEED, step) alone: each sequence is an arithmetic progression modulo
the vocabulary with a random start and a random stride in 1..7, so the model can learn it, and a run
resumed at step k sees exactly the batches an uninterrupted run sees.

Parallelism. The transformer is data parallel over ``jax.devices()`` with ``jax.sharding``: a 1-D
``Mesh`` named ``data``, the batch sharded along it (``NamedSharding(mesh, P("data"))``), parameters
and optimizer state replicated (``P()``); XLA inserts the gradient all-reduce. Under ``JaxTrainer``
with ``use_tpu``/``use_gpu`` Ray initialises ``jax.distributed``, so the mesh spans every host. On
``cpu`` Ray does no JAX distributed setup (Ray 2.53): each worker then trains an identical replica,
and only worker 0 writes checkpoints.

Throughput. Tokens/s = global batch x seq_len / mean steady-state step time (steps after the first
two, which include compilation). Model FLOPs per step (PaLM, appendix B; causal masking not
discounted) = tokens x (6 x N + 12 x L x D x T), N = parameters used in matrix multiplies (all
parameters except the token and position embedding tables; the output projection counts), L layers,
D width, T sequence length. MFU = model FLOPs/s / (peak per chip x jax.device_count()), printed when
PLANB_PEAK_TFLOPS gives the peak (the accelerator catalog, src/planb/catalog, holds it per TPU
generation and GPU machine with the vendor's page; this script keeps no table of its own).

Cluster notes: a ``gs://`` checkpoint directory needs ``orbax-checkpoint`` and ``gcsfs`` (the gs://
backend of etils.epath when TensorFlow is absent) in the Ray runtime environment. flax and optax are
only imported for the transformer, orbax only when checkpointing, so the seed's default needs just
``jax`` and ``ray[train]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

MODELS = ("linear", "transformer")
RUNNERS = ("ray", "plain")
ACCELERATORS = ("tpu", "gpu", "cpu")
DTYPES = ("float32", "bfloat16")
ATTENTION_IMPLS = ("xla", "cudnn")
RESUME_MODES = ("auto", "never", "force")
RUN_RECORD = "planb-run.json"  # the owner's record, next to the checkpoints
# The settings a checkpoint's owner is hashed over: those that decide the state's shapes (a resume
# with others would fail in restore) or the batches and updates it was trained with.
RUN_CONFIG_FIELDS = (
    "model", "seed", "learning_rate", "batch_per_device", "seq_len", "vocab_size", "d_model",
    "num_layers", "num_heads", "dtype",
)  # fmt: skip
RUN_ID_RE = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?"
# Ray's accelerator types, not ours: the GOOGLE_TPU_* and NVIDIA_* constants of
# ray.util.accelerators in Ray 2.53.0, the version training/requirements.txt and the chart's image
# pin (tests/catalog checks these tuples against the installed Ray).
RAY_TPU_ACCELERATOR_TYPES = ("TPU-V2", "TPU-V3", "TPU-V4", "TPU-V5P", "TPU-V5LITEPOD", "TPU-V6E")
GPU_ACCELERATOR_TYPES = (
    "V100", "P100", "T4", "P4", "K80", "A10G", "L4", "L40S", "A100", "H100", "H200", "H20", "B200",
    "A100-40G", "A100-80G",
)  # fmt: skip
# TPU7x (Ironwood) is not among Ray 2.53's types. Ray derives a TPU node's type from GKE's
# TPU_ACCELERATOR_TYPE variable and accepts only v<generation>-<n> names
# (TPUAcceleratorManager.is_valid_tpu_accelerator_type in ray/_private/accelerators/tpu.py); TPU7x
# nodes report tpu7x-<n>, so Ray 2.53 gives them the TPU resource (it counts /dev/accel*) but neither
# the accelerator_type:TPU-V7X resource nor the TPU-<pod type>-head resource that JaxTrainer's
# multi-host slice reservation (reserve_tpu_slice) waits for. Ray names TPU7x "TPU-V7X" from
# ray-project/ray#60338 on (tpu7x-<n> read as v7x-<n>), the name the catalog uses. With Ray 2.53 a
# single-host TPU7x job runs without accelerator_type (see scaling_config_kwargs); a multi-host one
# stops with UnsupportedByRayError instead of waiting for a slice Ray cannot see.
TPU7X_ACCELERATOR_TYPE = "TPU-V7X"
TPU_ACCELERATOR_TYPES = (*RAY_TPU_ACCELERATOR_TYPES, TPU7X_ACCELERATOR_TYPE)
WARMUP_STEPS = 2  # steps excluded from throughput (compilation)
DEFAULT_RAY_POLL_S = "0.2"  # RAY_TRAIN_HEALTH_CHECK_INTERVAL_S unless set; see run_ray


class UnsupportedByRayError(RuntimeError):
    """The configuration is valid, but the installed Ray cannot schedule it (the message says why)."""


class CheckpointOwnerError(RuntimeError):
    """The checkpoint directory holds another run's checkpoints (the message says whose and what to do)."""


class ConfigError(ValueError):
    """A configuration value is invalid; ``variable`` names it, ``choices`` lists valid values."""

    def __init__(self, variable: str, message: str, choices: Sequence[str] = ()) -> None:
        self.variable = variable
        self.choices = tuple(choices)
        text = f"{variable}: {message}"
        if self.choices:
            text += f" (valid choices: {', '.join(self.choices)})"
        super().__init__(text)


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Validated configuration; build it with :func:`load_config`."""

    model: str = "linear"
    runner: str = "ray"
    accelerator: str = "tpu"
    num_workers: int = 4
    chips_per_worker: int = 4
    cpus_per_worker: int | None = None
    topology: str = "4x4"
    accelerator_type: str = "TPU-V6E"
    epochs: int = 50
    log_every: int = 10
    checkpoint_dir: str = ""
    checkpoint_every: int = 100
    checkpoint_keep: int = 3
    run_id: str = ""
    resume: str = "auto"
    stop_after: int = 0
    seed: int = 0
    learning_rate: float = 0.1
    batch_per_device: int = 8
    seq_len: int = 128
    vocab_size: int = 256
    d_model: int = 128
    num_layers: int = 2
    num_heads: int = 4
    dtype: str = "float32"
    attention: str = "xla"
    peak_tflops: float | None = None
    metrics_file: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrainConfig:
        return cls(**dict(data))

    def topology_chips(self) -> int:
        return math.prod(int(part) for part in self.topology.split("x"))

    def tpu_hosts(self) -> int:
        return max(1, self.topology_chips() // self.chips_per_worker)


# --------------------------------------------------------------------------------------------------
# Configuration: environment + command line -> TrainConfig
# --------------------------------------------------------------------------------------------------


def _choice(env: Mapping[str, str], name: str, default: str, choices: Sequence[str]) -> str:
    value = env.get(name, "").strip().lower() or default
    if value not in choices:
        raise ConfigError(name, f"unknown value {value!r}", choices)
    return value


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 1) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(name, f"must be an integer, got {raw!r}") from None
    if value < minimum:
        kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ConfigError(name, f"must be {kind}, got {value}")
    return value


def _float(env: Mapping[str, str], name: str, default: float | None) -> float | None:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(name, f"must be a number, got {raw!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(name, f"must be a positive number, got {raw!r}")
    return value


def load_config(env: Mapping[str, str] | None = None) -> TrainConfig:
    """Read and validate ``PLANB_*`` variables from ``env`` (default: ``os.environ``)."""
    env = os.environ if env is None else env
    model = _choice(env, "PLANB_MODEL", "linear", MODELS)
    runner = _choice(env, "PLANB_RUNNER", "ray", RUNNERS)
    accelerator = _choice(env, "PLANB_ACCELERATOR", "tpu", ACCELERATORS)
    num_workers = _int(env, "PLANB_NUM_WORKERS", 4)
    chips_per_worker = _int(env, "PLANB_CHIPS_PER_WORKER", 4)
    cpus_raw = env.get("PLANB_CPUS_PER_WORKER", "").strip()
    cpus_per_worker: int | None = _int(env, "PLANB_CPUS_PER_WORKER", 1) if cpus_raw else None
    if cpus_per_worker is None and accelerator == "cpu":
        cpus_per_worker = 1

    topology = env.get("PLANB_TOPOLOGY", "").strip().lower() or "4x4"
    if not re.fullmatch(r"[1-9][0-9]*(x[1-9][0-9]*){1,2}", topology):
        raise ConfigError("PLANB_TOPOLOGY", f"must look like 4x4 or 2x2x4 (positive sizes), got {topology!r}")

    accel_type = env.get("PLANB_ACCELERATOR_TYPE", "").strip().upper()
    if accelerator == "tpu":
        accel_type = accel_type or "TPU-V6E"
        if accel_type not in TPU_ACCELERATOR_TYPES:
            raise ConfigError("PLANB_ACCELERATOR_TYPE", f"unknown TPU type {accel_type!r}", TPU_ACCELERATOR_TYPES)
    elif accelerator == "gpu":
        if accel_type and accel_type not in GPU_ACCELERATOR_TYPES:
            raise ConfigError(
                "PLANB_ACCELERATOR_TYPE",
                f"unknown GPU type {accel_type!r} (or leave it empty for any GPU)",
                GPU_ACCELERATOR_TYPES,
            )
    elif accel_type:
        raise ConfigError("PLANB_ACCELERATOR_TYPE", f"must be empty with PLANB_ACCELERATOR=cpu, got {accel_type!r}")

    default_lr = 0.1 if model == "linear" else 3e-3
    learning_rate = _float(env, "PLANB_LEARNING_RATE", default_lr)
    assert learning_rate is not None
    cfg = TrainConfig(
        model=model,
        runner=runner,
        accelerator=accelerator,
        num_workers=num_workers,
        chips_per_worker=chips_per_worker,
        cpus_per_worker=cpus_per_worker,
        topology=topology,
        accelerator_type=accel_type,
        epochs=_int(env, "PLANB_EPOCHS", 50 if model == "linear" else 200),
        log_every=_int(env, "PLANB_LOG_EVERY", 10),
        checkpoint_dir=_checkpoint_dir(env),
        checkpoint_every=_int(env, "PLANB_CHECKPOINT_EVERY", 100),
        checkpoint_keep=_int(env, "PLANB_CHECKPOINT_KEEP", 3),
        run_id=_run_id(env),
        resume=_choice(env, "PLANB_RESUME", "auto", RESUME_MODES),
        stop_after=_int(env, "PLANB_STOP_AFTER", 0, minimum=0),
        seed=_int(env, "PLANB_SEED", 0, minimum=0),
        learning_rate=learning_rate,
        batch_per_device=_int(env, "PLANB_BATCH_PER_DEVICE", 8),
        seq_len=_int(env, "PLANB_SEQ_LEN", 128, minimum=2),
        vocab_size=_int(env, "PLANB_VOCAB_SIZE", 256, minimum=8),
        d_model=_int(env, "PLANB_D_MODEL", 128),
        num_layers=_int(env, "PLANB_NUM_LAYERS", 2),
        num_heads=_int(env, "PLANB_NUM_HEADS", 4),
        dtype=_choice(env, "PLANB_DTYPE", "float32", DTYPES),
        attention=_choice(env, "PLANB_ATTENTION", "xla", ATTENTION_IMPLS),
        peak_tflops=_float(env, "PLANB_PEAK_TFLOPS", None),
        metrics_file=env.get("PLANB_METRICS_FILE", "").strip(),
    )
    if cfg.d_model % cfg.num_heads:
        raise ConfigError("PLANB_NUM_HEADS", f"must divide PLANB_D_MODEL={cfg.d_model}, got {cfg.num_heads}")
    if accelerator == "tpu":
        _check_tpu_topology(cfg)
    return cfg


def _checkpoint_dir(env: Mapping[str, str]) -> str:
    directory = env.get("PLANB_CHECKPOINT_DIR", "").strip()
    # A relative directory would depend on where the process starts (the submitter, a retry).
    if directory and "://" not in directory and not os.path.isabs(directory):
        raise ConfigError(
            "PLANB_CHECKPOINT_DIR", f"must be an absolute path or a URL such as gs://bucket/path, got {directory!r}"
        )
    return directory


def _run_id(env: Mapping[str, str]) -> str:
    run_id = env.get("PLANB_RUN_ID", "").strip()
    if run_id and not re.fullmatch(RUN_ID_RE, run_id):
        raise ConfigError("PLANB_RUN_ID", f"must be <namespace>/<name> (lower-case DNS names), got {run_id!r}")
    return run_id


def _check_tpu_topology(cfg: TrainConfig) -> None:
    chips = cfg.topology_chips()
    if cfg.chips_per_worker > chips or chips % cfg.chips_per_worker:
        raise ConfigError(
            "PLANB_CHIPS_PER_WORKER",
            f"{cfg.chips_per_worker} chips per worker does not divide the {chips} chips of "
            f"PLANB_TOPOLOGY={cfg.topology}",
        )
    hosts = cfg.tpu_hosts()
    # One worker per host of each slice: a multi-slice job (the chart's workers.replicas > 1)
    # has a whole multiple of the hosts of one slice.
    if cfg.num_workers % hosts:
        raise ConfigError(
            "PLANB_NUM_WORKERS",
            f"{cfg.num_workers} does not match PLANB_TOPOLOGY={cfg.topology}: {chips} chips / "
            f"PLANB_CHIPS_PER_WORKER={cfg.chips_per_worker} = {hosts} hosts, one worker per host; "
            f"set PLANB_NUM_WORKERS={hosts} (one slice) or a multiple of {hosts} (several slices)",
            (str(hosts),),
        )


# --------------------------------------------------------------------------------------------------
# Checkpoints (Orbax)
# --------------------------------------------------------------------------------------------------


def run_record(cfg: TrainConfig) -> dict[str, Any]:
    """What the owner of ``cfg.checkpoint_dir`` records there: its run id and its config's hash."""
    config = {name: getattr(cfg, name) for name in RUN_CONFIG_FIELDS}
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()
    return {"run": cfg.run_id, "config_sha256": digest, "config": config}


def claim_checkpoints(cfg: TrainConfig, has_checkpoints: bool, write: bool) -> None:
    """Refuse another run's checkpoint directory (unless PLANB_RESUME=force); with ``write``, record this run."""
    from etils import epath

    path = epath.Path(cfg.checkpoint_dir) / RUN_RECORD
    mine = run_record(cfg)
    found = json.loads(path.read_text()) if path.exists() else None
    fix = (
        "use a directory of its own (the chart gives each release <checkpointDir>/<namespace>/<release>), "
        "or set PLANB_RESUME=force (job.training.resume=force) to resume from them anyway"
    )
    where = cfg.checkpoint_dir
    if cfg.resume == "never" and has_checkpoints:
        raise CheckpointOwnerError(
            f"{where} holds checkpoints and PLANB_RESUME=never: empty it, or use another directory"
        )
    if cfg.resume != "force":
        if found is None and has_checkpoints:
            raise CheckpointOwnerError(f"{where} holds checkpoints without a {RUN_RECORD} naming their run: {fix}")
        if found is not None and found.get("run") != mine["run"]:
            raise CheckpointOwnerError(
                f"{where} belongs to run {found.get('run')!r}, not {cfg.run_id!r} (PLANB_RUN_ID): {fix}"
            )
        if found is not None and found.get("config_sha256") != mine["config_sha256"]:
            changed = sorted(k for k, v in mine["config"].items() if (found.get("config") or {}).get(k) != v)
            raise CheckpointOwnerError(
                f"{where} was written by run {cfg.run_id!r} with another configuration "
                f"(changed: {', '.join(changed) or 'unknown'}): {fix}"
            )
    elif found is not None and found.get("run") != mine["run"]:
        print(f"PLANB_RESUME=force: taking over the checkpoints of run {found.get('run')!r} in {where}")
    if write and found != mine:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(mine, indent=2, sort_keys=True) + "\n")


class Checkpointer:
    """Orbax CheckpointManager over ``cfg.checkpoint_dir``; a no-op when it is empty.

    Opening it checks that the directory's checkpoints belong to this run (claim_checkpoints) and,
    for the writer of process 0, records the run there.
    """

    def __init__(self, cfg: TrainConfig, writer: bool) -> None:
        self.enabled = bool(cfg.checkpoint_dir)
        self.every = cfg.checkpoint_every
        self.writer = writer
        self._manager: Any = None
        if not self.enabled:
            return
        import orbax.checkpoint as ocp

        self._ocp = ocp
        options = ocp.CheckpointManagerOptions(max_to_keep=cfg.checkpoint_keep, create=writer, read_only=not writer)
        self._manager = ocp.CheckpointManager(cfg.checkpoint_dir, options=options)
        claim_checkpoints(cfg, self._manager.latest_step() is not None, write=writer and jax.process_index() == 0)

    def latest_step(self) -> int | None:
        if not self.enabled:
            return None
        step = self._manager.latest_step()
        return None if step is None else int(step)

    def restore(self, step: int, like: Any) -> Any:
        abstract = jax.tree.map(
            lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding),  # type: ignore[no-untyped-call]
            like,
        )
        return self._manager.restore(step, args=self._ocp.args.StandardRestore(abstract))

    def maybe_save(self, step: int, state: Any, force: bool = False) -> bool:
        if not (self.enabled and self.writer):
            return False
        if not force and step % self.every:
            return False
        if step in self._manager.all_steps():
            return False
        self._manager.save(step, args=self._ocp.args.StandardSave(state), force=True)
        return True

    def close(self) -> None:
        if self._manager is not None:
            self._manager.wait_until_finished()
            self._manager.close()


# --------------------------------------------------------------------------------------------------
# Progress: the last step reached, next to the checkpoints (what a restart lost)
# --------------------------------------------------------------------------------------------------

PROGRESS_FILE = "planb-progress.json"
REMOTE_PROGRESS_INTERVAL_S = 1.0  # a gs:// object write costs tens of milliseconds


class Progress:
    """The last step this job reached, in ``<checkpoint dir>/planb-progress.json``; a no-op without one.

    Only the writer records. A local file is replaced atomically (a temporary file, then
    ``os.replace``), after every step; a remote one (``gs://``, through etils.epath, whose object
    writes are whole) at most once per REMOTE_PROGRESS_INTERVAL_S, and always when forced.
    """

    def __init__(self, cfg: TrainConfig, writer: bool) -> None:
        self.enabled = bool(cfg.checkpoint_dir)
        self.writer = writer
        self.remote = "://" in cfg.checkpoint_dir
        self.path = ""
        if self.enabled:
            base = cfg.checkpoint_dir.rstrip("/") if self.remote else os.path.abspath(cfg.checkpoint_dir)
            self.path = f"{base}/{PROGRESS_FILE}"
        self._last_write = -math.inf
        #: The job's resumes so far, oldest first: (checkpoint step, steps lost).
        self.resumes: list[tuple[int, int]] = []

    def _read(self) -> dict[str, Any]:
        if self.remote:
            from etils import epath

            text = epath.Path(self.path).read_text()
        else:
            with open(self.path, encoding="utf-8") as fh:
                text = fh.read()
        data = json.loads(text)
        return data if isinstance(data, dict) else {}

    def _recorded(self) -> dict[str, Any]:
        """What the previous run recorded; {} without a checkpoint directory, a record, or a readable one."""
        if not self.enabled:
            return {}
        try:
            return self._read()
        except (OSError, ValueError):
            return {}

    def reached(self, recorded: dict[str, Any] | None = None) -> int | None:
        """The step recorded by the previous run (in ``recorded``, else read now), or None when there is none."""
        data = self._recorded() if recorded is None else recorded
        try:
            return int(data["reached"])
        except (KeyError, TypeError, ValueError):
            return None

    def resume(self, restored: int) -> list[str]:
        """This run's resume from ``restored``: the lines to print (the earlier resumes, then this one),
        with this one added to the history the next record writes."""
        recorded = self._recorded()
        reached = self.reached(recorded)
        try:
            earlier = [(int(s), int(n)) for s, n in recorded.get("resumes") or []]
        except (TypeError, ValueError):
            earlier = []
        self.resumes = [*earlier, (restored, steps_lost(restored, reached))]
        return [f"earlier: resumed from checkpoint step {s}; {n} step(s) lost" for s, n in earlier] + [
            resumed_line(restored, reached)
        ]

    def record(self, step: int, force: bool = False) -> None:
        if not (self.enabled and self.writer):
            return
        now = time.monotonic()
        if self.remote and not force and now - self._last_write < REMOTE_PROGRESS_INTERVAL_S:
            return
        text = json.dumps({"reached": step, "resumes": self.resumes})
        if self.remote:
            from etils import epath

            epath.Path(self.path).write_text(text)
        else:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.tmp-{os.getpid()}"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, self.path)
        self._last_write = now


def steps_lost(restored: int, reached: int | None) -> int:
    """Steps the previous run had done past the checkpoint it resumes from (0 if none recorded)."""
    return 0 if reached is None else max(0, reached - restored)


def resumed_line(restored: int, reached: int | None) -> str:
    return f"resumed from checkpoint step {restored}; {steps_lost(restored, reached)} step(s) lost"


# --------------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Task:
    """What the generic loop needs from a model."""

    state: Any  # pytree with the parameters (and optimizer state); what is checkpointed
    step_fn: Callable[[Any, int], tuple[Any, jax.Array]]  # (state, step) -> (state, loss)
    tokens_per_step: int = 0
    flops_per_step: float = 0.0
    describe: str = ""


def linear_task(cfg: TrainConfig) -> Task:
    """The seed's linear regression: 1000 x 10 features, full-batch gradient descent."""
    key = jax.random.PRNGKey(cfg.seed)
    x = jax.random.normal(key, (1000, 10))
    w_true = jax.random.normal(key, (10, 1))
    y = jnp.dot(x, w_true)
    lr = cfg.learning_rate

    # The weights are a global array replicated over every device, so that with jax.distributed
    # (several processes) the checkpoint holds one logical array, not one per process.
    replicated = _replicated_sharding()
    w0 = np.zeros((10, 1), np.float32)

    def loss_fn(w: jax.Array) -> jax.Array:
        return jnp.mean((jnp.dot(x, w) - y) ** 2)

    def update(state: dict[str, jax.Array]) -> tuple[dict[str, jax.Array], jax.Array]:
        loss, grad = jax.value_and_grad(loss_fn)(state["w"])
        return {"w": state["w"] - lr * grad}, loss

    jitted = jax.jit(update, out_shardings=(replicated, replicated))

    def step_fn(state: Any, step: int) -> tuple[Any, jax.Array]:
        return cast(tuple[Any, jax.Array], jitted(state))

    state = {"w": jax.make_array_from_callback(w0.shape, replicated, lambda idx: w0[idx])}
    return Task(state=state, step_fn=step_fn, describe="linear regression 10 -> 1")


def _replicated_sharding() -> Any:
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    return NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P())  # type: ignore[no-untyped-call]


def synthetic_batch(seed: int, step: int, batch: int, seq_len: int, vocab: int) -> np.ndarray:
    """Deterministic batch for ``step``: arithmetic progressions modulo ``vocab``."""
    rng = np.random.default_rng([seed, step])
    start = rng.integers(0, vocab, size=(batch, 1))
    stride = rng.integers(1, 8, size=(batch, 1))
    return ((start + stride * np.arange(seq_len)[None, :]) % vocab).astype(np.int32)


def make_lm(cfg: TrainConfig) -> Any:
    """A pre-norm decoder-only transformer LM (Flax linen)."""
    import flax.linen as nn

    dtype = jnp.bfloat16 if cfg.dtype == "bfloat16" else jnp.float32
    d, h = cfg.d_model, cfg.num_heads
    impl: Any = cfg.attention

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            b, t, _ = x.shape
            y = nn.LayerNorm(dtype=dtype)(x)
            qkv = nn.Dense(3 * d, use_bias=False, dtype=dtype, name="qkv")(y)
            q, k, v = (a.reshape(b, t, h, d // h) for a in jnp.split(qkv, 3, axis=-1))
            att = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=impl)
            x = x + nn.Dense(d, use_bias=False, dtype=dtype, name="proj")(att.reshape(b, t, d))
            y = nn.LayerNorm(dtype=dtype)(x)
            y = nn.Dense(4 * d, dtype=dtype, name="mlp_in")(y)
            y = nn.Dense(d, dtype=dtype, name="mlp_out")(nn.gelu(y))
            return x + y

    class LM(nn.Module):
        @nn.compact
        def __call__(self, tokens: jax.Array) -> jax.Array:
            x = nn.Embed(cfg.vocab_size, d, dtype=dtype, name="embed")(tokens)
            pos = self.param("pos_embed", nn.initializers.normal(0.02), (cfg.seq_len, d))
            x = x + pos[None, : tokens.shape[1]].astype(dtype)
            for i in range(cfg.num_layers):
                x = Block(name=f"block_{i}")(x)
            x = nn.LayerNorm(dtype=dtype)(x)
            return nn.Dense(cfg.vocab_size, use_bias=False, dtype=dtype, name="head")(x)

    return LM()


def matmul_params(params: Any) -> int:
    """Parameters used in matrix multiplies: all but the embedding tables."""
    total = 0
    for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
        names = "/".join(str(getattr(p, "key", p)) for p in path)
        if "embed" not in names:
            total += int(np.prod(leaf.shape))
    return total


def model_flops_per_step(cfg: TrainConfig, n_matmul: int, global_batch: int) -> float:
    tokens = global_batch * cfg.seq_len
    return float(tokens) * (6.0 * n_matmul + 12.0 * cfg.num_layers * cfg.d_model * cfg.seq_len)


def transformer_task(cfg: TrainConfig) -> Task:
    import optax
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    devices = np.array(jax.devices())
    mesh = Mesh(devices, ("data",))
    batch_sharding = NamedSharding(mesh, P("data"))  # type: ignore[no-untyped-call]
    replicated = NamedSharding(mesh, P())  # type: ignore[no-untyped-call]
    global_batch = cfg.batch_per_device * devices.size

    model = make_lm(cfg)
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(cfg.learning_rate, b2=0.95))

    def init() -> dict[str, Any]:
        params = model.init(jax.random.PRNGKey(cfg.seed), jnp.zeros((1, cfg.seq_len), jnp.int32))
        return {"params": params, "opt_state": tx.init(params)}

    state = jax.jit(init, out_shardings=replicated)()

    def loss_fn(params: Any, tokens: jax.Array) -> jax.Array:
        logits = model.apply(params, tokens[:, :-1]).astype(jnp.float32)
        return cast(jax.Array, optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean())

    def train_step(state: dict[str, Any], tokens: jax.Array) -> tuple[dict[str, Any], jax.Array]:
        loss, grads = jax.value_and_grad(loss_fn)(state["params"], tokens)
        updates, opt_state = tx.update(grads, state["opt_state"], state["params"])
        return {"params": optax.apply_updates(state["params"], updates), "opt_state": opt_state}, loss

    jitted = jax.jit(
        train_step,
        in_shardings=(replicated, batch_sharding),
        out_shardings=(replicated, replicated),
        donate_argnums=0,
    )
    shape = (global_batch, cfg.seq_len + 1)  # inputs are tokens[:, :-1], targets tokens[:, 1:]

    def step_fn(state: Any, step: int) -> tuple[Any, jax.Array]:
        host = synthetic_batch(cfg.seed, step, global_batch, cfg.seq_len + 1, cfg.vocab_size)
        tokens = jax.make_array_from_callback(shape, batch_sharding, lambda idx: host[idx])
        return cast(tuple[Any, jax.Array], jitted(state, tokens))

    n_matmul = matmul_params(state["params"])
    n_total = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(state["params"]))
    return Task(
        state=state,
        step_fn=step_fn,
        tokens_per_step=global_batch * cfg.seq_len,
        flops_per_step=model_flops_per_step(cfg, n_matmul, global_batch),
        describe=(
            f"transformer LM: {n_total:,} params ({n_matmul:,} in matmuls), {cfg.num_layers} layers, "
            f"d_model {cfg.d_model}, {cfg.num_heads} heads, seq {cfg.seq_len}, vocab {cfg.vocab_size}, "
            f"global batch {global_batch} over {devices.size} device(s), {cfg.dtype}"
        ),
    )


# --------------------------------------------------------------------------------------------------
# The loop (shared by both runners)
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class RunResult:
    state: Any
    start_step: int
    end_step: int
    losses: dict[int, float]
    step_times: list[float]
    metrics: dict[str, Any]


def train_loop(
    cfg: TrainConfig,
    rank: int = 0,
    world_size: int = 1,
    report: Callable[[dict[str, Any]], None] | None = None,
) -> RunResult:
    """Train ``cfg.model`` from the newest checkpoint (if any) up to ``cfg.epochs`` steps."""
    print(f"Local Devices: {jax.local_devices()}")
    task = linear_task(cfg) if cfg.model == "linear" else transformer_task(cfg)
    print(f"Model: {task.describe}")
    # With jax.distributed every process takes part in saving; independent replicas: worker 0 only.
    ckpt = Checkpointer(cfg, writer=jax.process_count() > 1 or rank == 0)
    progress = Progress(cfg, writer=rank == 0)
    state, start = task.state, 0
    latest = ckpt.latest_step()
    if latest is not None:
        state = ckpt.restore(latest, state)
        start = latest
        print(f"Resumed from checkpoint step {latest} in {cfg.checkpoint_dir}")
        if progress.writer:
            print("\n".join(progress.resume(latest)))
    elif ckpt.enabled:
        print(f"No checkpoint in {cfg.checkpoint_dir}; starting at step 0")

    peak = cfg.peak_tflops if cfg.model == "transformer" else None
    n_dev = jax.device_count()
    end = cfg.epochs if not cfg.stop_after else min(cfg.epochs, start + cfg.stop_after)
    losses: dict[int, float] = {}
    step_times: list[float] = []
    report_s = 0.0  # time spent in ray.train.report
    print("Starting training...")
    last = time.perf_counter()
    for step in range(start, end):
        state, loss = task.step_fn(state, step)
        if step % cfg.log_every == 0 or step == end - 1:
            value = float(loss)
            losses[step] = value
            metrics: dict[str, Any] = {"loss": value, "epoch": step}
            if cfg.model == "linear":
                if step % cfg.log_every == 0:  # the seed's lines only
                    print(f"Epoch {step}: Loss {value:.4f}")
            else:
                text = f"Step {step}: loss {value:.4f}"
                if len(step_times) > WARMUP_STEPS:
                    tps = task.tokens_per_step / float(np.mean(step_times[WARMUP_STEPS:]))
                    metrics["tokens_per_s"] = tps
                    text += f", {tps:,.0f} tokens/s"
                    if peak:
                        mfu = tps / task.tokens_per_step * task.flops_per_step / (peak * 1e12 * n_dev)
                        metrics["mfu"] = mfu
                        text += f", MFU {100 * mfu:.1f}%"
                print(text)
            if report is not None:
                t_report = time.perf_counter()
                report(metrics)
                report_s += time.perf_counter() - t_report
        else:
            loss.block_until_ready()
        ckpt.maybe_save(step + 1, state)
        progress.record(step + 1)
        now = time.perf_counter()
        step_times.append(now - last)
        last = now
    ckpt.maybe_save(end, state, force=True)
    ckpt.close()
    progress.record(end, force=True)

    steady = step_times[WARMUP_STEPS:] if len(step_times) > WARMUP_STEPS else step_times
    mean_step = float(np.mean(steady)) if steady else float("nan")
    summary: dict[str, Any] = {
        "model": cfg.model,
        "runner": cfg.runner,
        "rank": rank,
        "world_size": world_size,
        "devices": n_dev,
        "start_step": start,
        "end_step": end,
        "first_loss": losses[min(losses)] if losses else None,
        "final_loss": losses[max(losses)] if losses else None,
        "steady_steps": len(steady),
        "mean_step_s": mean_step,
        "median_step_s": float(np.median(steady)) if steady else float("nan"),
        "p25_step_s": float(np.percentile(steady, 25)) if steady else float("nan"),
        "max_step_s": float(np.max(steady)) if steady else float("nan"),
        "report_s": report_s,
    }
    if cfg.model == "transformer" and steady:
        tps = task.tokens_per_step / mean_step
        summary.update(tokens_per_step=task.tokens_per_step, tokens_per_s=tps)
        summary["model_tflops_per_step"] = task.flops_per_step / 1e12
        summary["peak_tflops_per_chip"] = peak
        if peak:
            summary["mfu"] = tps / task.tokens_per_step * task.flops_per_step / (peak * 1e12 * n_dev)
    if cfg.metrics_file and rank == 0:
        with open(cfg.metrics_file, "w", encoding="utf-8") as fh:
            json.dump(summary, fh)
    return RunResult(state, start, end, losses, step_times, summary)


# --------------------------------------------------------------------------------------------------
# Runners
# --------------------------------------------------------------------------------------------------


def train_func(config: dict[str, Any]) -> None:
    """Ray Train worker entry point (``train_loop_per_worker``)."""
    import ray.train

    cfg = TrainConfig.from_dict(config)
    ctx = ray.train.get_context()
    train_loop(cfg, ctx.get_world_rank(), ctx.get_world_size(), report=ray.train.report)
    print("Training Complete!")
    time.sleep(3)  # as the seed: let the log lines reach the driver before the worker exits


def ray_detects_tpu7x() -> bool:
    """Whether the installed Ray recognises a TPU7x node (GKE reports its type as tpu7x-<chips>).

    False for Ray 2.53 (see TPU7X_ACCELERATOR_TYPE); a Ray whose private TPU module has moved is
    assumed to know TPU7x.
    """
    try:
        from ray._private.accelerators.tpu import TPUAcceleratorManager
    except ImportError:
        return True
    check = getattr(TPUAcceleratorManager, "is_valid_tpu_accelerator_type", None)
    return check is None or bool(check("tpu7x-8"))


def scaling_config_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    """Arguments of ``ray.train.ScalingConfig`` for ``cfg`` (kept separate so tests can check it).

    Raises UnsupportedByRayError for a multi-host TPU7x job on a Ray that cannot see TPU7x nodes.
    """
    resources: dict[str, float] = {}
    kwargs: dict[str, Any] = {"num_workers": cfg.num_workers}
    if cfg.accelerator == "tpu" and cfg.accelerator_type == TPU7X_ACCELERATOR_TYPE and not ray_detects_tpu7x():
        if cfg.num_workers > 1:
            raise UnsupportedByRayError(
                f"{cfg.num_workers} workers on TPU7x need a Ray that detects TPU7x nodes "
                "(ray-project/ray#60338, after Ray 2.53): this Ray gives them no TPU-V7X type and no "
                "slice head, so JaxTrainer cannot reserve the slice. Use a Ray image with TPU7x "
                "support, or a single-host TPU7x profile (one worker)."
            )
        # One worker needs no slice reservation; without accelerator_type Ray places it by the
        # TPU resource alone (the accelerator_type:TPU-V7X resource would never appear).
        resources["TPU"] = cfg.chips_per_worker
        kwargs["use_tpu"] = True
    elif cfg.accelerator == "tpu":
        resources["TPU"] = cfg.chips_per_worker
        kwargs.update(use_tpu=True, topology=cfg.topology, accelerator_type=cfg.accelerator_type)
    elif cfg.accelerator == "gpu":
        resources["GPU"] = cfg.chips_per_worker
        kwargs["use_gpu"] = True
        if cfg.accelerator_type:
            kwargs["accelerator_type"] = cfg.accelerator_type
    if cfg.cpus_per_worker is not None:
        resources["CPU"] = cfg.cpus_per_worker
    kwargs["resources_per_worker"] = resources
    return kwargs


def run_ray(cfg: TrainConfig) -> None:
    import ray
    from ray.train.v2.api.config import RunConfig, ScalingConfig
    from ray.train.v2.jax import JaxTrainer

    # Each ray.train.report blocks until the controller has collected the previous one, and the
    # controller looks once per health-check interval (Ray's default 2 s): reporting every 10 fast
    # steps would stall training. Ray propagates this variable from the driver to the controller.
    os.environ.setdefault("RAY_TRAIN_HEALTH_CHECK_INTERVAL_S", DEFAULT_RAY_POLL_S)
    started_here = False
    if not ray.is_initialized():
        if os.environ.get("RAY_ADDRESS"):
            ray.init()  # in the cluster: the RayJob's Ray cluster
        else:
            need = cfg.num_workers * (cfg.cpus_per_worker or 1)
            num_cpus = max(need, 1) if cfg.accelerator == "cpu" else None
            # A private single-machine cluster on loopback only, without the dashboard.
            ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1")
        started_here = True
    try:
        trainer = JaxTrainer(
            train_loop_per_worker=train_func,
            train_loop_config=cfg.to_dict(),
            scaling_config=ScalingConfig(**scaling_config_kwargs(cfg)),
            run_config=RunConfig(name=f"planb-{cfg.model}-{int(time.time())}"),
        )
        result = trainer.fit()
        print(f"Run Result: {result.metrics}")
    finally:
        if started_here:
            ray.shutdown()


def run_plain(cfg: TrainConfig) -> RunResult:
    result = train_loop(cfg)
    print("Training Complete!")
    return result


# --------------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------------

CLI_FLAGS: tuple[str, ...] = (
    "PLANB_MODEL",
    "PLANB_RUNNER",
    "PLANB_ACCELERATOR",
    "PLANB_NUM_WORKERS",
    "PLANB_CHIPS_PER_WORKER",
    "PLANB_CPUS_PER_WORKER",
    "PLANB_TOPOLOGY",
    "PLANB_ACCELERATOR_TYPE",
    "PLANB_EPOCHS",
    "PLANB_LOG_EVERY",
    "PLANB_CHECKPOINT_DIR",
    "PLANB_CHECKPOINT_EVERY",
    "PLANB_CHECKPOINT_KEEP",
    "PLANB_RUN_ID",
    "PLANB_RESUME",
    "PLANB_STOP_AFTER",
    "PLANB_SEED",
    "PLANB_LEARNING_RATE",
    "PLANB_BATCH_PER_DEVICE",
    "PLANB_SEQ_LEN",
    "PLANB_VOCAB_SIZE",
    "PLANB_D_MODEL",
    "PLANB_NUM_LAYERS",
    "PLANB_NUM_HEADS",
    "PLANB_DTYPE",
    "PLANB_ATTENTION",
    "PLANB_PEAK_TFLOPS",
    "PLANB_METRICS_FILE",
)


def parse_args(argv: Sequence[str] | None) -> tuple[dict[str, str], bool]:
    parser = argparse.ArgumentParser(
        description="planb training job (seed: JAX linear regression under Ray Train JaxTrainer). "
        "Every flag overrides the PLANB_* environment variable of the same name.",
    )
    for name in CLI_FLAGS:
        flag = "--" + name.removeprefix("PLANB_").lower().replace("_", "-")
        parser.add_argument(flag, dest=name, metavar="VALUE", help=f"overrides ${name}")
    parser.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    args = vars(parser.parse_args(argv))
    show = bool(args.pop("print_config"))
    return {k: str(v) for k, v in args.items() if v is not None}, show


def main(argv: Sequence[str] | None = None) -> int:
    overrides, show = parse_args(argv)
    try:
        cfg = load_config({**os.environ, **overrides})
    except ConfigError as exc:
        print(f"planb train: configuration error: {exc}", file=sys.stderr)
        return 2
    if show:
        print(json.dumps(cfg.to_dict(), indent=2, sort_keys=True))
        return 0
    try:
        if cfg.runner == "plain":
            run_plain(cfg)
            return 0
        # The driver checks the checkpoints' owner before Ray starts a worker; workers check again.
        Checkpointer(cfg, writer=False).close()
        run_ray(cfg)
    except (UnsupportedByRayError, CheckpointOwnerError) as exc:
        print(f"planb train: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
