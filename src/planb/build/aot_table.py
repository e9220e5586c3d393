"""BENCHMARKS.md's "Compiled for each slice" table, from the answers planb.build.aot compiled or read from its cache:
one row per profile and model (its size, mesh, state and the compiler's HBM per device, FLOPs per step and the step
time at TABLE_MFU), written between the file's markers by ``python -m planb.build.aot --update BENCHMARKS.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from planb.catalog import profiles, training

#: The MFU the table's step time is given at (MaxText reports 56-67% on whole pods).
TABLE_MFU = 0.6
BEGIN, END = "<!-- planb.build.aot: begin -->", "<!-- planb.build.aot: end -->"


class Compiled(Protocol):
    """What the table reads of one compile (planb.build.aot.Job): the profile, which model, and its size."""

    @property
    def profile(self) -> str: ...

    @property
    def which(self) -> str: ...

    def size(self) -> training.TransformerSize: ...


C = TypeVar("C", bound=Compiled)


def table(answers: Mapping[C, dict[str, Any]]) -> str:
    """BENCHMARKS.md's table: one row per profile and model."""
    head = (
        "| profile | model | parameters | devices (mesh data x fsdp) | state per device | compiler's HBM per device "
        "(share) | FLOPs per step per device | step at 60% MFU |\n|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for job, answer in answers.items():
        size, prof = job.size(), profiles.get(job.profile)
        model = f"{job.which}: d{size.d_model} x {size.num_layers}, seq {size.seq_len}, batch {size.batch_per_device}"
        model += f", remat {size.remat}" + (", scanned" if size.scan_layers else "")
        if "error" in answer:
            rows.append(f"| {job.profile} | {model} | {size.params / 1e9:.2f} B | - | - | refused | - | - |")
            continue
        mesh = answer["mesh"]
        hbm = training.device_hbm_bytes(job.profile)
        step_s = answer["model_flops_per_step"] / (prof.chips_per_slice * prof.peak_tflops * 1e12 * TABLE_MFU)
        rows.append(
            f"| {job.profile} | {model} | {answer['params'] / 1e9:.2f} B | {answer['devices']} "
            f"({mesh['data']} x {mesh['fsdp']}) | {answer['state_bytes_per_device'] / 2**30:.2f} GiB | "
            f"{answer['peak_bytes'] / 2**30:.2f} GiB ({answer['peak_bytes'] / hbm:.0%}) | "
            f"{answer['flops_per_device'] / 1e12:.1f} T | {step_s:.3f} s |"
        )
    return head + "\n".join(rows) + "\n"


def update(path: Path, answers: Mapping[C, dict[str, Any]]) -> None:
    """`path` with the table written between its markers (a SystemExit naming them when it has none)."""
    old = path.read_text(encoding="utf-8")
    if BEGIN not in old or END not in old:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} markers")
    head, rest = old.split(BEGIN, 1)
    path.write_text(f"{head}{BEGIN}\n{table(answers)}{END}{rest.split(END, 1)[1]}", encoding="utf-8")
