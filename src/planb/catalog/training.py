"""The training job's defaults per profile: a transformer that fits the accelerator's memory with margin, and the
workers' termination grace period a save on notice needs.

Measured, not guessed. Every size here trained on one TPU v5e chip (16 GiB of HBM) through ``hack/tpu_bench.sh``
(BENCHMARKS.md, "TPU v5e, one chip"; the raw lines in docs/tpu-v5e-bench-2026-12-04.jsonl). A profile's default
is one of them, chosen so that its training state (float32 parameters and Adam's two moments, 12 bytes a
parameter) is at most a quarter of one chip's or GPU's memory: on a 16 GiB v5e it is the 1024-wide model that
trains at 65% MFU beside a 1536-wide one with twice its state; on every larger accelerator the 2048-wide model
with sequences of 2048, which trains without rematerialisation on 16 GiB, at 68.5% MFU there.

The grace period. A save on notice (training/planb_train/loop.py, StopNotice) waits for the step in flight, copies
the state to host memory and writes it; the worker's pod must outlive that. planb's policy: the grace period is
30 s for the pod's own shutdown and the step in flight, plus three times the state's write at the rate measured
on the chip (the slowest commit seen: 2.63 GB in 5.8 s to local disk), rounded up to 5 s, because gs:// writes
and a busy host are slower than the bench's disk and a grace period too short loses the whole save.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planb.catalog import profiles

#: Memory of one chip or GPU in GiB, with Google's page for it.
HBM_GIB: dict[str, tuple[float, str]] = {
    "v4": (32, "https://cloud.google.com/tpu/docs/v4"),
    "v5e": (16, "https://cloud.google.com/tpu/docs/v5e"),
    "v5p": (95, "https://cloud.google.com/tpu/docs/v5p"),
    "v6e": (32, "https://cloud.google.com/tpu/docs/v6e"),
    "tpu7x": (192, "https://cloud.google.com/tpu/docs/tpu7x"),
    "H100": (80, "https://cloud.google.com/compute/docs/gpus#h100-gpus"),
    "H200": (141, "https://cloud.google.com/compute/docs/gpus#h200-gpus"),
    "B200": (180, "https://cloud.google.com/compute/docs/gpus#b200-gpus"),
}
#: Bytes of training state per parameter: float32 weights and Adam's first and second moments.
STATE_BYTES_PER_PARAM = 12
#: The largest share of one chip's memory a profile's default state may take.
MAX_STATE_SHARE = 0.25
#: The slowest commit of a save measured on the chip (bytes/s): 2,631,180,292 bytes in 5.787 s.
MEASURED_SAVE_BYTES_PER_S = 2_631_180_292 / 5.787
#: planb's policy for the grace period (module docstring): fixed seconds, and the factor on the measured write.
GRACE_FIXED_S = 30
GRACE_WRITE_FACTOR = 3


@dataclass(frozen=True)
class TransformerSize:
    """One transformer configuration of train.py (the PLANB_* variables of the same names)."""

    d_model: int
    num_layers: int
    num_heads: int
    seq_len: int
    batch_per_device: int
    vocab_size: int = 32768
    remat: str = "none"
    scan_layers: bool = False  # PLANB_SCAN_LAYERS: the blocks as one scan (what the largest sizes compile with)

    @property
    def params(self) -> int:
        """Parameters: 12 d^2 per block plus its biases and layer norms, the embeddings and the output head."""
        d = self.d_model
        block = 12 * d * d + 4 * d + d + 4 * d  # qkv, proj, mlp (4d bias, d bias), two layer norms (4d)
        return self.num_layers * block + 2 * self.vocab_size * d + self.seq_len * d + 2 * d

    @property
    def state_bytes(self) -> int:
        """What train.py reports as state_bytes: 12 bytes a parameter and Adam's int32 step count."""
        return STATE_BYTES_PER_PARAM * self.params + 4

    def values(self) -> dict[str, int | str]:
        """The chart's job.training.transformer for this size."""
        return {
            "dModel": self.d_model,
            "numLayers": self.num_layers,
            "numHeads": self.num_heads,
            "seqLen": self.seq_len,
            "batchPerDevice": self.batch_per_device,
            "vocabSize": self.vocab_size,
            "remat": self.remat,
        }


@dataclass(frozen=True)
class Measured:
    """A size's run on one TPU v5e chip (hack/tpu_bench.sh, 2026-12-04): MFU as MaxText counts it, seconds a step."""

    mfu: float
    step_s: float
    measure: str


#: Sizes that trained on one 16 GiB v5e chip, bfloat16, splash attention.
V5E_PROFILE_SIZE = TransformerSize(1024, 12, 8, 1024, 16)
V5E_LARGE_SIZE = TransformerSize(2048, 8, 16, 2048, 8)
MEASURED_ON_V5E: dict[TransformerSize, Measured] = {
    V5E_PROFILE_SIZE: Measured(0.653, 0.151, "mfu-profile-default"),
    V5E_LARGE_SIZE: Measured(0.685, 0.367, "mfu-large"),
    TransformerSize(1536, 12, 12, 1024, 16, remat="minimal"): Measured(0.638, 0.320, "fits-d1536-l12-seq1024-b16"),
    TransformerSize(1024, 12, 8, 1024, 32, remat="full"): Measured(0.510, 0.386, "fits-d1024-l12-seq1024-b32"),
    TransformerSize(1024, 12, 8, 2048, 16, remat="full"): Measured(0.498, 0.421, "fits-d1024-l12-seq2048-b16"),
}


def hbm_gib(profile: str) -> float:
    """Memory of one chip or GPU of ``profile``."""
    prof = profiles.get(profile)
    key = prof.generation if prof.kind == "tpu" else prof.ray_accelerator_type
    return HBM_GIB[key][0]


def default_transformer(profile: str) -> TransformerSize:
    """The profile's default transformer: the largest measured default whose state fits MAX_STATE_SHARE."""
    budget = MAX_STATE_SHARE * hbm_gib(profile) * 2**30
    for size in (V5E_LARGE_SIZE, V5E_PROFILE_SIZE):
        if size.state_bytes <= budget:
            return size
    raise ValueError(f"no measured transformer size fits a quarter of {profile}'s memory")


#: The sizes a profile may claim as its largest (the largest that fits is its claim), from about 1 to 52 billion
#: parameters. Each runs as large models train: scanned blocks, every block rematerialised, one sequence of 2,048
#: tokens per device, on a mesh that splits parameters and optimizer state over every chip (fsdp).
LARGEST_LADDER = tuple(
    TransformerSize(d, layers, heads, 2048, 1, remat="full", scan_layers=True)
    for d, layers, heads in ((2048, 16, 16), (4096, 32, 32), (5120, 40, 40), (8192, 64, 64))
)
#: planb's policy for a largest claim: its training state split over every chip of the slice takes at most this
#: share of one chip's memory, and so do one block's float32 weights and their gradients gathered on one chip (what
#: fsdp holds whole while the block runs), because the rest is left to activations, the logits and XLA's buffers.
#: The claim is then checked by the TPU compiler for each profile (tests/integration/training/test_aot.py).
LARGEST_SHARE = 0.3


#: JAX devices per chip where the TPU compiler presents more than one (a device per TensorCore): TPU7x's two
#: chiplets (https://cloud.google.com/tpu/docs/tpu7x), and v4's two cores as jax.experimental.topologies describes
#: them (a v4 VM's runtime joins them into one megacore device; compiling per core is the stricter check).
DEVICES_PER_CHIP = {"v4": 2, "tpu7x": 2}


def device_hbm_bytes(profile: str) -> float:
    """Memory of one JAX device of ``profile`` as the TPU compiler sees it (a chip's, over its devices)."""
    prof = profiles.get(profile)
    return hbm_gib(profile) * 2**30 / DEVICES_PER_CHIP.get(prof.generation, 1)


def largest_transformer(profile: str) -> TransformerSize:
    """The largest model ``profile`` claims to train: the last of LARGEST_LADDER within LARGEST_SHARE of one
    device's memory, else the profile's default."""
    prof = profiles.get(profile)
    budget = LARGEST_SHARE * device_hbm_bytes(profile)
    devices = prof.chips_per_slice * DEVICES_PER_CHIP.get(prof.generation, 1)
    fits = [
        size
        for size in LARGEST_LADDER
        if size.state_bytes / devices <= budget
        and 12 * size.d_model**2 * 4 * 2 <= budget
        and size.d_model % devices == 0  # else fsdp cannot split the weights (planb_train.sharding keeps them whole)
    ]
    return fits[-1] if fits else default_transformer(profile)


def notice_write_seconds(size: TransformerSize | None) -> tuple[int, int]:
    """A save on notice's write of ``size``'s state (None: the linear model, none), in whole seconds rounded up: at the
    rate measured on the chip, and GRACE_WRITE_FACTOR times that (gs://, a busy host), what the grace period allows
    for. The chart's NOTES.txt compares both with what a Spot VM's notice leaves the pods (planb.catalog.versions)."""
    if size is None:
        return 0, 0
    write_s = size.state_bytes / MEASURED_SAVE_BYTES_PER_S
    return math.ceil(write_s), math.ceil(GRACE_WRITE_FACTOR * write_s)


def grace_period_for(size: TransformerSize | None) -> int:
    """terminationGracePeriodSeconds for workers training ``size`` (None: the linear model, no state to speak of),
    by planb's policy (module docstring); the chart computes the same from its values (planb.workerGracePeriod)."""
    write_s = size.state_bytes / MEASURED_SAVE_BYTES_PER_S if size is not None else 0.0
    return 5 * math.ceil((GRACE_FIXED_S + GRACE_WRITE_FACTOR * write_s) / 5)


def grace_period_seconds(profile: str) -> int:
    """terminationGracePeriodSeconds for workers training the profile's default transformer."""
    return grace_period_for(default_transformer(profile))
