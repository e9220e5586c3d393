"""NOTES.txt says when a Spot VM's notice cannot cover a save on notice of the job's state: the write at the rate
measured on a TPU chip and the grace period's three times that (planb.catalog.training.notice_write_seconds), against
what a Spot preemption leaves the job's pods, 15 s, or 105 s where the pool extends its notice to 120 s
(planb.catalog.versions)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from planb.catalog import training, versions

#: What a Spot VM's preemption leaves a non-system pod: the shutdown less the critical pods' part.
SPOT_S = versions.SPOT_SHUTDOWN_SECONDS - versions.SPOT_CRITICAL_PODS_SECONDS
SPOT_EXTENDED_S = versions.SPOT_EXTENDED_SHUTDOWN_SECONDS - versions.SPOT_CRITICAL_PODS_SECONDS


def model(size: training.TransformerSize) -> tuple[str, ...]:
    return (
        "--set", "mode=job",
        "--set", "job.training.model=transformer",
        "--set", f"job.training.transformer.dModel={size.d_model}",
        "--set", f"job.training.transformer.numLayers={size.num_layers}",
        "--set", f"job.training.transformer.numHeads={size.num_heads}",
        "--set", f"job.training.transformer.seqLen={size.seq_len}",
        "--set", f"job.training.transformer.vocabSize={size.vocab_size}",
    )  # fmt: skip


def note(text: str) -> str:
    """The NOTE paragraph of NOTES.txt, one line; empty when there is none."""
    paragraphs = [p for p in text.split("\n\n") if p.strip().startswith("NOTE: a save on notice")]
    assert len(paragraphs) <= 1
    return " ".join(paragraphs[0].split()) if paragraphs else ""


def test_the_spot_notices_are_the_catalog_s() -> None:
    assert (SPOT_S, SPOT_EXTENDED_S) == (15, 105)


EXTENDED = "a Spot pool that extends its notice to 120 s (105 s for the pods)"


@pytest.mark.parametrize(
    ("size", "spot", "extended"),
    [
        (training.V5E_PROFILE_SIZE, "may not", f"A{EXTENDED[1:]} covers it"),
        (training.V5E_LARGE_SIZE, "may not", f"A{EXTENDED[1:]} covers it"),
        (training.TransformerSize(2048, 40, 16, 2048, 8), "cannot", f"Even {EXTENDED} may not cover it"),
        (training.TransformerSize(4096, 32, 32, 2048, 1), "cannot", f"Neither does {EXTENDED}"),
    ],
    ids=["v5e-default-2.6GB", "default-6.5GB", "25.8GB", "80.6GB"],
)
def test_the_note_says_whether_a_spot_notice_covers_the_save(
    notes: Callable[..., str], size: training.TransformerSize, spot: str, extended: str
) -> None:
    write, margin = training.notice_write_seconds(size)
    text = note(notes(*model(size)))
    assert f"training state in about {write} s at the rate measured on a TPU chip, up to {margin} s on gs://" in text
    assert f"(the workers' grace period, {training.grace_period_for(size)} s, is set for that)" in text
    assert f"gives the job's pods {SPOT_S} s: on Spot that {spot} cover the save" in text
    assert f"{extended}: docs/first-run.md" in text
    assert (write > SPOT_S) == (spot == "cannot") and margin > SPOT_S
    assert (margin <= SPOT_EXTENDED_S) == extended.startswith("A Spot pool")


def test_no_note_where_a_spot_notice_covers_the_save(notes: Callable[..., str]) -> None:
    small = training.TransformerSize(512, 2, 8, 1024, 8, vocab_size=1024)
    assert training.notice_write_seconds(small)[1] <= SPOT_S
    assert note(notes(*model(small))) == ""
    assert note(notes("--set", "mode=job")) == ""  # the linear model: no state to speak of
