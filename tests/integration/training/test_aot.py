"""The training step (forward, backward and the optimizer's update) compiles for the TPU slices the catalog sells,
multi-host slices included, and fits one device's memory: the real TPU compiler (libtpu) on this machine's CPU,
through jax.experimental.topologies (planb.build.aot; training/planb_train/aot.py).

Every TPU profile's (the catalog's 47, from one chip to 4,096; `make bench BENCH=aot` writes their table) default
transformer and the largest model it claims (planb.catalog.training) are compiled on a mesh of the slice's devices;
the compiler's memory for one device (arguments, outputs, temporaries, the program) must be at most 90% of the device's
HBM. Results come from the tool cache outside the checkout, by source key, else by the key of the program the compiler
is given (planb.build.aot's docstring): a change to the model, the slice or the compiler's version compiles again
here (30 s to 30 minutes a compile on a busy two-core machine, two at once; `python -m planb.build.aot --jobs 2`
beforehand).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planb.build import aot
from planb.catalog import profiles, training

JOBS = aot.jobs()


@pytest.fixture(scope="module")
def answers() -> dict[aot.Job, dict[str, Any]]:
    return aot.results(JOBS, workers=2)


@pytest.mark.timeout(7200)  # a cold cache compiles each profile's step (the module docstring)
def test_each_generation_compiles_on_a_single_host_and_a_multi_host_slice(
    answers: dict[aot.Job, dict[str, Any]],
) -> None:
    for generation in ("v4", "v5e", "v5p", "v6e", "tpu7x"):
        hosts = {
            profiles.get(j.profile).multi_host for j in answers if profiles.get(j.profile).generation == generation
        }
        assert hosts == {False, True}, generation
    for job, answer in answers.items():
        if "error" in answer:
            continue
        prof = profiles.get(job.profile)
        assert answer["devices"] == prof.chips_per_slice * training.DEVICES_PER_CHIP.get(prof.generation, 1)
        assert answer["mesh"] == {"data": 1, "fsdp": answer["devices"], "tensor": 1}


@pytest.mark.parametrize("job", JOBS, ids=[f"{job.profile}-{job.which}" for job in JOBS])
def test_the_step_fits_within_90_percent_of_a_devices_memory(
    answers: dict[aot.Job, dict[str, Any]], job: aot.Job
) -> None:
    fits, line = aot.verdict(job, answers[job])
    assert fits, line


def test_parameters_and_optimizer_state_are_split_over_the_slice(answers: dict[aot.Job, dict[str, Any]]) -> None:
    """The largest claim of a 256-chip v6e slice holds its 52 billion parameters' state (about 580 GiB) as about a
    256th on each chip, not whole on every chip."""
    job = aot.Job("tpu-v6e-16x16", "largest")
    answer = answers[job]
    size = job.size()
    assert "error" not in answer, answer
    # a 256th, and a little more: layer norms and biases of d_model or 4 x d_model (57 MB here) are whole on each
    assert answer["state_bytes_per_device"] == pytest.approx(size.state_bytes / 256, rel=0.05)
    # the compiler's own view: the step's arguments on one device are that much (the batch is a few kB more)
    assert answer["argument_bytes"] == pytest.approx(answer["state_bytes_per_device"], rel=0.01)


def test_a_source_change_that_leaves_the_program_as_it_was_compiles_nothing_again(
    answers: dict[aot.Job, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result is found by its program key where its source key misses (here: a cache that holds the answer under
    its program key alone, as after a module is renamed): the step is lowered again, and the compiler's answer is
    the one kept, not a new compile (a compile's own seconds would differ)."""
    job = aot.Job("tpu-v5e-2x4", "largest")  # scanned: lowered in a few seconds
    kept = answers[job]
    assert "program" in kept, "answers made before program keys: python -m planb.build.aot --index"
    (tmp_path / "aot" / aot.PROGRAMS).mkdir(parents=True)
    (tmp_path / "aot" / aot.PROGRAMS / f"{kept['program']}.json").write_text(json.dumps(kept), encoding="utf-8")
    monkeypatch.setenv("PLANB_CACHE_DIR", str(tmp_path))
    again = aot.results([job], progress=False)[job]
    assert again["program"] == kept["program"]
    assert again["compile_s"] == kept["compile_s"]
    assert again["peak_bytes"] == kept["peak_bytes"]
    assert (tmp_path / "aot" / f"{job.key()}.json").is_file()  # kept under its source key for the next read


def test_the_program_key_follows_the_program_and_the_slice() -> None:
    v5e = {"generation": "v5e", "topology": "2x2", "chips_per_host": 4}
    assert aot.program_key("module @jit_step {}", v5e) == aot.program_key("module @jit_step {}", dict(v5e))
    assert aot.program_key("module @jit_step {}", v5e) != aot.program_key("module @jit_step { }", v5e)
    assert aot.program_key("module @jit_step {}", v5e) != aot.program_key(
        "module @jit_step {}", {**v5e, "topology": "2x4", "chips_per_host": 8}
    )
