"""train.py under Ray Train v2 JaxTrainer with a local CPU Ray cluster of 2 workers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.training import run_main, run_script

RAY_CPU = {
    "PLANB_ACCELERATOR": "cpu",
    "PLANB_NUM_WORKERS": "2",
    "PLANB_CPUS_PER_WORKER": "1",
    "RAY_DEDUP_LOGS": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
}


@pytest.mark.slow
def test_seed_job_on_two_cpu_workers(tmp_path: Path) -> None:
    """The seed's default job (linear regression, 50 epochs) on 2 Ray workers, with checkpoints on."""
    ckpt, metrics = tmp_path / "ckpt", tmp_path / "metrics.json"
    env = {**RAY_CPU, "PLANB_CHECKPOINT_DIR": str(ckpt), "PLANB_CHECKPOINT_EVERY": "20"}
    proc = run_script({**env, "PLANB_METRICS_FILE": str(metrics)}, timeout=240)
    out = proc.stdout
    assert proc.returncode == 0, out[-4000:]
    workers = set(re.findall(r"\(RayTrainWorker pid=(\d+)(?:, ip=[^)]*)?\)", out))
    assert len(workers) == 2, out[-4000:]
    assert out.count("Training Complete!") == 2  # printed by each worker
    for epoch in (0, 10, 20, 30, 40):
        assert len(re.findall(rf"Epoch {epoch}: Loss \d+\.\d{{4}}", out)) == 2
    m = json.loads(metrics.read_text())  # written by worker 0
    assert (m["runner"], m["world_size"], m["end_step"]) == ("ray", 2, 50)
    assert m["final_loss"] < 1e-3 < 1.0 < m["first_loss"]
    # Worker 0 alone wrote the checkpoints (CPU workers are independent replicas).
    assert sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit()) == [20, 40, 50]


@pytest.mark.slow
def test_transformer_resumes_under_ray(
    train: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plain run (train.py's command line, in this process) stops at step 12 (as if preempted); the Ray job
    resumes it and finishes at 30."""
    ckpt, metrics = tmp_path / "ckpt", tmp_path / "metrics.json"
    lm = {
        "PLANB_MODEL": "transformer",
        "PLANB_D_MODEL": "32",
        "PLANB_NUM_HEADS": "2",
        "PLANB_NUM_LAYERS": "1",
        "PLANB_SEQ_LEN": "16",
        "PLANB_VOCAB_SIZE": "32",
        "PLANB_LEARNING_RATE": "0.01",
        "PLANB_EPOCHS": "30",
        "PLANB_CHECKPOINT_DIR": str(ckpt),
        "PLANB_CHECKPOINT_EVERY": "100",
    }
    plain = run_main(
        train,
        {**lm, "PLANB_ACCELERATOR": "cpu", "PLANB_RUNNER": "plain", "PLANB_STOP_AFTER": "12"},
        monkeypatch,
        capsys,
    )
    assert plain.returncode == 0, plain.stdout[-3000:]
    proc = run_script({**RAY_CPU, **lm, "PLANB_METRICS_FILE": str(metrics)}, timeout=240)
    out = proc.stdout
    assert proc.returncode == 0, out[-4000:]
    assert out.count(f"Resumed from checkpoint step 12 in {ckpt}") == 2  # both workers restore
    assert out.count("resumed from checkpoint step 12; 0 step(s) lost") == 1  # worker 0 alone counts the loss
    assert out.count("Training Complete!") == 2
    m = json.loads(metrics.read_text())
    assert (m["start_step"], m["end_step"], m["world_size"]) == (12, 30, 2)
    assert m["tokens_per_s"] > 0
    assert sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit()) == [12, 30]
