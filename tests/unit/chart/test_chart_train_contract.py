"""Contract between the chart and training/train.py: every shipped values file renders a job train.py accepts.

Each file of charts/planb/values/ is rendered with the pinned helm (``helm template -f``), and the environment
the RayJob gives its head and worker containers is fed to ``load_config`` and ``scaling_config_kwargs``, as
the job's ``python /app/train.py`` would read it. A profile the installed Ray cannot schedule (multi-host TPU7x on
Ray 2.53) must stop with train.py's own UnsupportedByRayError naming why, not crash.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from planb_train.config import TPU7X_ACCELERATOR_TYPE, load_config
from planb_train.runners.outcome import UnsupportedByRayError
from planb_train.runners.ray_train import ray_detects_tpu7x, scaling_config_kwargs

from planb.build import golden
from tests.support.shared.training import load_train

CHART = golden.CHART_DIR
VALUES = sorted((CHART / "values").glob("*.yaml"))


@pytest.fixture(scope="module")
def train() -> ModuleType:
    return load_train("planb_chart_contract_train")


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: str(e["value"]) for e in container.get("env") or [] if "value" in e}


def test_every_shipped_values_file_is_checked() -> None:
    assert len(VALUES) >= 8 and all(path.suffix == ".yaml" for path in VALUES)


@pytest.mark.parametrize("values_file", VALUES, ids=lambda p: p.stem)
def test_train_py_accepts_the_environment_each_shipped_values_file_renders(
    template: Callable[..., list[dict[str, Any]]], train: ModuleType, values_file: Path
) -> None:
    from ray.train.v2.api.config import ScalingConfig

    values = yaml.safe_load(values_file.read_text())
    (job,) = [o for o in template("-f", str(values_file)) if o["kind"] == "RayJob"]
    cluster = job["spec"]["rayClusterSpec"]
    assert job["spec"]["entrypoint"] == "python /app/train.py"
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    (group,) = cluster["workerGroupSpecs"]
    worker = group["template"]["spec"]["containers"][0]
    env = _env(worker)
    assert _env(head) == env, "head and workers must read the same configuration"
    cfg = load_config(env)
    accelerator = values["accelerator"]
    assert cfg.accelerator == accelerator["kind"]
    assert cfg.num_workers == group["replicas"] * group.get("numOfHosts", 1)
    if accelerator["kind"] == "tpu":
        assert (cfg.topology, cfg.chips_per_worker) == (accelerator["topology"], accelerator["chipsPerHost"])
        assert cfg.tpu_hosts() == accelerator["hostsPerSlice"] == group["numOfHosts"]
    if cfg.accelerator_type == TPU7X_ACCELERATOR_TYPE and not ray_detects_tpu7x() and cfg.num_workers > 1:
        with pytest.raises(UnsupportedByRayError, match="TPU7x"):
            scaling_config_kwargs(cfg)
        return
    scaling = ScalingConfig(**scaling_config_kwargs(cfg))
    assert scaling.num_workers == cfg.num_workers
