"""planb training job, configuration: the ``PLANB_*`` environment -> a validated ``TrainConfig``.

Configuration comes from environment variables (the chart sets them from the accelerator profile);
train.py's command-line flags of the same name (``--num-workers`` for ``PLANB_NUM_WORKERS``, ...)
override them.

================================  ==========  ========================================================
Variable                          Default     Meaning
================================  ==========  ========================================================
PLANB_MODEL                       linear      ``linear`` (the tutorial's regression) or ``transformer``
                                              (small decoder-only LM on synthetic tokens)
PLANB_RUNNER                      ray         ``ray``: Ray Train v2 ``JaxTrainer``; ``plain``: plain
                                              JAX in this process over all local devices, no Ray
PLANB_ACCELERATOR                 tpu         ``tpu``, ``gpu`` or ``cpu`` (``cpu``: Ray workers get
                                              CPUs only and no JAX distributed setup)
PLANB_NUM_WORKERS                 4           Ray Train workers; on TPU one per host: chips(topology) /
                                              PLANB_CHIPS_PER_WORKER per slice, times the slices
PLANB_CHIPS_PER_WORKER            4           TPU chips or GPUs per worker (ignored on cpu)
PLANB_CPUS_PER_WORKER             (unset)     CPUs reserved per worker; unset: 1 on cpu, not
                                              requested on tpu/gpu (as the tutorial)
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
PLANB_CHECKPOINT_EVERY            100         save a checkpoint every N steps at most (and at the end)
PLANB_CHECKPOINT_BUDGET           0.03        most of training periodic saves may take; the loop skips
                                              multiples of N to stay within it (planb_train.interval)
PLANB_CHECKPOINT_KEEP             3           checkpoints kept (older ones are deleted)
PLANB_STOP_AFTER                  0           stop after N steps in this run, checkpointing first
                                              (simulates a preemption; 0 = never)
PLANB_SAVE_ON_NOTICE              1           ``1``: SIGTERM (Kueue's eviction, a Spot notice, a DWS
                                              booking's end) makes the loop save a checkpoint at the
                                              next step boundary, then stop; ``0``: SIGTERM ends the
                                              process at once, nothing saved (the benchmark's control)
PLANB_SEED                        0           seed of parameters and of the synthetic data
PLANB_LEARNING_RATE               0.1 / 3e-3  learning rate (linear: SGD as the tutorial; transformer:
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
PLANB_ATTENTION                   auto        attention implementation: ``splash`` (JAX's Pallas
                                              splash-attention kernel for TPU, causal blocks only),
                                              ``xla`` or ``cudnn`` (``jax.nn.dot_product_attention``;
                                              cudnn: GPU flash attention); ``auto``: splash on TPU,
                                              xla elsewhere
PLANB_REMAT                       none        rematerialisation of each decoder block
                                              (``jax.checkpoint``): ``none`` keeps every activation;
                                              ``minimal`` keeps the matmul outputs and recomputes the
                                              rest (``dots_with_no_batch_dims_saveable``); ``full``
                                              keeps only each block's input (``nothing_saveable``)
PLANB_MESH                        (empty)     transformer: the device mesh, ``AXIS=SIZE`` pairs of
                                              ``data``, ``fsdp`` and ``tensor`` (``-1``: the devices
                                              left; an axis left out: 1); empty: ``data`` one per
                                              slice, ``fsdp`` every chip of a slice, ``tensor`` 1
                                              (planb_train.sharding)
PLANB_SCAN_LAYERS                 0           transformer: ``1`` runs the decoder blocks as one
                                              ``flax.linen.scan`` over stacked weights, so that the
                                              step compiles in the same time at any depth; ``0``
                                              unrolls them
PLANB_COMPILATION_CACHE_DIR       (empty)     JAX's persistent compilation cache
                                              (``jax_compilation_cache_dir``; a gs:// URL or an
                                              absolute path): a restart loads its step from there
                                              instead of compiling it; the chart puts it beside the
                                              checkpoints. Empty: no persistent cache
PLANB_NOTICE_FILE                 (empty)     a file whose appearance is a stop notice, polled at
                                              every step boundary (the chart's preStop hook creates
                                              it; under Ray the driver creates it on SIGTERM): the
                                              loop saves, writes ``<file>.saved``, and stops
PLANB_PEAK_TFLOPS                 (unset)     peak dense bf16 TFLOP/s of one chip or GPU, for MFU;
                                              the chart sets it from the catalog's profile
                                              (accelerator.peakTflops); unset: no MFU
PLANB_METRICS_FILE                (empty)     if set, worker 0 writes its final metrics here as JSON
PLANB_COORDINATOR_ADDRESS         (unset)     plain runner, several processes: process 0's
                                              ``HOST:PORT``; with the two below set too, each process
                                              starts ``jax.distributed`` before it touches a device
                                              and all train one model (planb_train.processes)
PLANB_NUM_PROCESSES               (unset)     plain runner: how many processes train together
PLANB_PROCESS_ID                  (unset)     plain runner: this process's index, 0 to N - 1. Each
                                              of the three unset: JAX's JAX_COORDINATOR_ADDRESS,
                                              JAX_NUM_PROCESSES, JAX_PROCESS_ID
RAY_TRAIN_HEALTH_CHECK_INTERVAL_S 0.2         (Ray's own variable; Ray's default is 2.0) how often
                                              the Train controller collects reports; each
                                              ``ray.train.report`` waits for the previous one to be
                                              collected, so 2.0 would stall fast training loops
================================  ==========  ========================================================

Bad values raise ``ConfigError`` (a ``ValueError``) naming the variable and the valid choices; the
command line turns it into exit status 2.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping
from typing import Any

from planb_train.variables import ConfigError, choice, integer, location, number, run_id, switch

MODELS = ("linear", "transformer")
RUNNERS = ("ray", "plain")
ACCELERATORS = ("tpu", "gpu", "cpu")
DTYPES = ("float32", "bfloat16")
ATTENTION_IMPLS = ("auto", "xla", "cudnn", "splash")
REMAT_POLICIES = ("none", "minimal", "full")
RESUME_MODES = ("auto", "never", "force")
#: The device mesh's axes (planb_train.sharding): whole replicas, sharded data parallelism, tensor parallelism.
MESH_AXIS_NAMES = ("data", "fsdp", "tensor")
# Ray's accelerator types, not ours: the GOOGLE_TPU_* and NVIDIA_* constants of
# ray.util.accelerators in Ray 2.53.0, the version training/requirements.txt and the chart's image
# pin (tests/integration/training/test_config.py checks these tuples against the installed Ray).
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
# single-host TPU7x job runs without accelerator_type (see planb_train.runners.ray_train.scaling_config_kwargs);
# a multi-host one stops with UnsupportedByRayError instead of waiting for a slice Ray cannot see.
TPU7X_ACCELERATOR_TYPE = "TPU-V7X"
TPU_ACCELERATOR_TYPES = (*RAY_TPU_ACCELERATOR_TYPES, TPU7X_ACCELERATOR_TYPE)


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
    checkpoint_budget: float = 0.03
    checkpoint_keep: int = 3
    run_id: str = ""
    resume: str = "auto"
    stop_after: int = 0
    save_on_notice: bool = True
    seed: int = 0
    learning_rate: float = 0.1
    batch_per_device: int = 8
    seq_len: int = 128
    vocab_size: int = 256
    d_model: int = 128
    num_layers: int = 2
    num_heads: int = 4
    dtype: str = "float32"
    attention: str = "auto"
    remat: str = "none"
    mesh: tuple[tuple[str, int], ...] = ()
    scan_layers: bool = False
    compilation_cache_dir: str = ""
    notice_file: str = ""
    peak_tflops: float | None = None
    metrics_file: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrainConfig:
        fields = dict(data)
        fields["mesh"] = tuple((str(axis), int(size)) for axis, size in fields.get("mesh", ()))  # lists in JSON
        return cls(**fields)

    def topology_chips(self) -> int:
        return math.prod(int(part) for part in self.topology.split("x"))

    def tpu_hosts(self) -> int:
        return max(1, self.topology_chips() // self.chips_per_worker)


def load_config(env: Mapping[str, str] | None = None) -> TrainConfig:
    """Read and validate ``PLANB_*`` variables from ``env`` (default: ``os.environ``)."""
    env = os.environ if env is None else env
    model = choice(env, "PLANB_MODEL", "linear", MODELS)
    runner = choice(env, "PLANB_RUNNER", "ray", RUNNERS)
    accelerator = choice(env, "PLANB_ACCELERATOR", "tpu", ACCELERATORS)
    num_workers = integer(env, "PLANB_NUM_WORKERS", 4)
    chips_per_worker = integer(env, "PLANB_CHIPS_PER_WORKER", 4)
    cpus_raw = env.get("PLANB_CPUS_PER_WORKER", "").strip()
    cpus_per_worker: int | None = integer(env, "PLANB_CPUS_PER_WORKER", 1) if cpus_raw else None
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
    learning_rate = number(env, "PLANB_LEARNING_RATE", default_lr)
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
        epochs=integer(env, "PLANB_EPOCHS", 50 if model == "linear" else 200),
        log_every=integer(env, "PLANB_LOG_EVERY", 10),
        checkpoint_dir=_checkpoint_dir(env),
        checkpoint_every=integer(env, "PLANB_CHECKPOINT_EVERY", 100),
        checkpoint_budget=number(env, "PLANB_CHECKPOINT_BUDGET", 0.03, share=True) or 0.0,
        checkpoint_keep=integer(env, "PLANB_CHECKPOINT_KEEP", 3),
        run_id=run_id(env),
        resume=choice(env, "PLANB_RESUME", "auto", RESUME_MODES),
        stop_after=integer(env, "PLANB_STOP_AFTER", 0, minimum=0),
        save_on_notice=switch(env, "PLANB_SAVE_ON_NOTICE", True),
        seed=integer(env, "PLANB_SEED", 0, minimum=0),
        learning_rate=learning_rate,
        batch_per_device=integer(env, "PLANB_BATCH_PER_DEVICE", 8),
        seq_len=integer(env, "PLANB_SEQ_LEN", 128, minimum=2),
        vocab_size=integer(env, "PLANB_VOCAB_SIZE", 256, minimum=8),
        d_model=integer(env, "PLANB_D_MODEL", 128),
        num_layers=integer(env, "PLANB_NUM_LAYERS", 2),
        num_heads=integer(env, "PLANB_NUM_HEADS", 4),
        dtype=choice(env, "PLANB_DTYPE", "float32", DTYPES),
        attention=choice(env, "PLANB_ATTENTION", "auto", ATTENTION_IMPLS),
        remat=choice(env, "PLANB_REMAT", "none", REMAT_POLICIES),
        mesh=parse_mesh(env.get("PLANB_MESH", "")),
        scan_layers=switch(env, "PLANB_SCAN_LAYERS", False),
        compilation_cache_dir=location(env, "PLANB_COMPILATION_CACHE_DIR"),
        notice_file=location(env, "PLANB_NOTICE_FILE", urls=False),
        peak_tflops=number(env, "PLANB_PEAK_TFLOPS", None),
        metrics_file=env.get("PLANB_METRICS_FILE", "").strip(),
    )
    if cfg.d_model % cfg.num_heads:
        raise ConfigError("PLANB_NUM_HEADS", f"must divide PLANB_D_MODEL={cfg.d_model}, got {cfg.num_heads}")
    if accelerator == "tpu":
        _check_tpu_topology(cfg)
    return cfg


def parse_mesh(raw: str) -> tuple[tuple[str, int], ...]:
    """PLANB_MESH's value, ``data=1,fsdp=-1,tensor=1``, as (axis, size) pairs; empty for the default mesh."""
    if not raw.strip():
        return ()
    pairs: dict[str, int] = {}
    for item in raw.split(","):
        axis, sep, size = (part.strip() for part in item.partition("="))
        if not sep or axis not in MESH_AXIS_NAMES or axis in pairs:
            raise ConfigError("PLANB_MESH", f"expected AXIS=SIZE pairs, each axis once, got {raw!r}", MESH_AXIS_NAMES)
        try:
            pairs[axis] = int(size)
        except ValueError:
            raise ConfigError("PLANB_MESH", f"{axis}'s size must be an integer or -1, got {size!r}") from None
        if pairs[axis] < 1 and pairs[axis] != -1:
            raise ConfigError("PLANB_MESH", f"{axis}'s size must be positive or -1, got {pairs[axis]}")
    if list(pairs.values()).count(-1) > 1:
        raise ConfigError("PLANB_MESH", f"at most one axis may be -1, got {raw!r}")
    return tuple(pairs.items())


def _checkpoint_dir(env: Mapping[str, str]) -> str:
    return location(env, "PLANB_CHECKPOINT_DIR")


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
