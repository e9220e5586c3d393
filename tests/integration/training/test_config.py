"""Configuration of train.py: the seed's defaults, the Ray ScalingConfig it builds, and clear errors."""

from __future__ import annotations

from types import ModuleType

import pytest
from planb_train.config import GPU_ACCELERATOR_TYPES, RAY_TPU_ACCELERATOR_TYPES, load_config
from planb_train.runners.outcome import UnsupportedByRayError
from planb_train.runners.ray_train import ray_detects_tpu7x, scaling_config_kwargs
from planb_train.variables import ConfigError

from tests.support.shared.training import run_script

CPU = {"PLANB_ACCELERATOR": "cpu"}


def test_defaults_are_the_seeds(train: ModuleType) -> None:
    cfg = load_config({})
    assert (cfg.model, cfg.runner, cfg.accelerator) == ("linear", "ray", "tpu")
    assert (cfg.num_workers, cfg.chips_per_worker, cfg.topology) == (4, 4, "4x4")
    assert (cfg.accelerator_type, cfg.epochs, cfg.log_every, cfg.learning_rate) == ("TPU-V6E", 50, 10, 0.1)
    assert cfg.checkpoint_dir == ""
    # The seed's ScalingConfig, and Ray 2.53 accepts it.
    kwargs = scaling_config_kwargs(cfg)
    assert kwargs == {
        "num_workers": 4,
        "resources_per_worker": {"TPU": 4},
        "use_tpu": True,
        "topology": "4x4",
        "accelerator_type": "TPU-V6E",
    }
    from ray.train.v2.api.config import ScalingConfig

    sc = ScalingConfig(**kwargs)
    assert sc.num_tpus_per_worker == 4 and sc.use_tpu


def test_gpu_and_cpu_scaling(train: ModuleType) -> None:
    from ray.train.v2.api.config import ScalingConfig

    gpu = load_config(
        {"PLANB_ACCELERATOR": "gpu", "PLANB_NUM_WORKERS": "2", "PLANB_CHIPS_PER_WORKER": "8",
         "PLANB_CPUS_PER_WORKER": "16", "PLANB_ACCELERATOR_TYPE": "h200"}
    )  # fmt: skip
    kwargs = scaling_config_kwargs(gpu)
    assert kwargs == {
        "num_workers": 2,
        "resources_per_worker": {"GPU": 8, "CPU": 16},
        "use_gpu": True,
        "accelerator_type": "H200",
    }
    assert ScalingConfig(**kwargs).use_gpu
    cpu = load_config({**CPU, "PLANB_NUM_WORKERS": "2"})
    assert cpu.accelerator_type == "" and cpu.cpus_per_worker == 1
    assert scaling_config_kwargs(cpu) == {"num_workers": 2, "resources_per_worker": {"CPU": 1}}


@pytest.mark.parametrize(
    ("topology", "chips", "workers"),
    [("4x4", 4, 4), ("2x4", 8, 1), ("2x2", 4, 1), ("8x8", 4, 16), ("2x2x4", 4, 4)],
)
def test_tpu_topologies_that_match(train: ModuleType, topology: str, chips: int, workers: int) -> None:
    cfg = load_config(
        {"PLANB_TOPOLOGY": topology, "PLANB_CHIPS_PER_WORKER": str(chips), "PLANB_NUM_WORKERS": str(workers)}
    )
    assert cfg.tpu_hosts() == workers


def test_unknown_accelerator(train: ModuleType) -> None:
    with pytest.raises(ConfigError) as err:
        load_config({"PLANB_ACCELERATOR": "fpga"})
    assert err.value.variable == "PLANB_ACCELERATOR"
    assert err.value.choices == ("tpu", "gpu", "cpu")
    assert "'fpga'" in str(err.value) and "tpu, gpu, cpu" in str(err.value)
    assert isinstance(err.value, ValueError)


def test_worker_count_must_match_topology(train: ModuleType) -> None:
    with pytest.raises(ConfigError) as err:
        load_config({"PLANB_NUM_WORKERS": "2"})  # 4x4 v6e with 4 chips per host = 4 hosts
    assert err.value.variable == "PLANB_NUM_WORKERS"
    text = str(err.value)
    assert "PLANB_TOPOLOGY=4x4" in text and "16 chips" in text and "set PLANB_NUM_WORKERS=4" in text
    assert err.value.choices == ("4",)
    # Two slices of 4 hosts: one worker per host of each slice (the chart's workers.replicas=2).
    assert load_config({"PLANB_NUM_WORKERS": "8"}).num_workers == 8
    with pytest.raises(ConfigError, match="multiple of 4"):
        load_config({"PLANB_NUM_WORKERS": "6"})
    with pytest.raises(ConfigError) as err:
        load_config({"PLANB_TOPOLOGY": "2x2", "PLANB_CHIPS_PER_WORKER": "8", "PLANB_NUM_WORKERS": "1"})
    assert err.value.variable == "PLANB_CHIPS_PER_WORKER"


@pytest.mark.parametrize(
    "name",
    ["PLANB_NUM_WORKERS", "PLANB_CHIPS_PER_WORKER", "PLANB_CPUS_PER_WORKER", "PLANB_EPOCHS",
     "PLANB_CHECKPOINT_EVERY", "PLANB_LOG_EVERY", "PLANB_D_MODEL", "PLANB_BATCH_PER_DEVICE"],
)  # fmt: skip
@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_non_positive_numbers(train: ModuleType, name: str, value: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config({**CPU, name: value})
    assert err.value.variable == name
    assert str(err.value).startswith(f"{name}: must be ")
    assert repr(value) in str(err.value) or value in str(err.value)


@pytest.mark.parametrize(
    ("env", "variable", "choice"),
    [
        ({"PLANB_MODEL": "gpt5"}, "PLANB_MODEL", "transformer"),
        ({"PLANB_RUNNER": "k8s"}, "PLANB_RUNNER", "plain"),
        ({"PLANB_ACCELERATOR_TYPE": "TPU-V9"}, "PLANB_ACCELERATOR_TYPE", "TPU-V6E"),
        ({"PLANB_ACCELERATOR_TYPE": "TPU7X", "PLANB_TOPOLOGY": "2x2x2"}, "PLANB_ACCELERATOR_TYPE", "TPU-V7X"),
        ({"PLANB_ACCELERATOR": "gpu", "PLANB_ACCELERATOR_TYPE": "TPU-V6E"}, "PLANB_ACCELERATOR_TYPE", "H100"),
        ({**CPU, "PLANB_DTYPE": "fp8"}, "PLANB_DTYPE", "bfloat16"),
        ({"PLANB_TOPOLOGY": "4by4"}, "PLANB_TOPOLOGY", ""),
        ({**CPU, "PLANB_NUM_HEADS": "3"}, "PLANB_NUM_HEADS", ""),
        ({**CPU, "PLANB_LEARNING_RATE": "-1"}, "PLANB_LEARNING_RATE", ""),
    ],
)
def test_other_bad_values(train: ModuleType, env: dict[str, str], variable: str, choice: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(env)
    assert err.value.variable == variable
    assert str(err.value).startswith(variable)
    if choice:
        assert choice in err.value.choices


def test_save_on_notice_is_on_unless_switched_off(train: ModuleType) -> None:
    """PLANB_SAVE_ON_NOTICE: on by default; 0 (the benchmark's control column) keeps SIGTERM's default."""
    assert load_config(CPU).save_on_notice is True
    for value, expected in (("1", True), ("on", True), ("TRUE", True), ("0", False), ("off", False), ("no", False)):
        assert load_config({**CPU, "PLANB_SAVE_ON_NOTICE": value}).save_on_notice is expected, value
    with pytest.raises(ConfigError) as err:
        load_config({**CPU, "PLANB_SAVE_ON_NOTICE": "sometimes"})
    assert err.value.variable == "PLANB_SAVE_ON_NOTICE" and "0" in err.value.choices


def test_accelerator_types_are_the_installed_rays(train: ModuleType) -> None:
    """train.py's TPU and GPU type lists are Ray's own (ray.util.accelerators), TPU7x aside."""
    from ray.util.accelerators import accelerators

    names = {k: v for k, v in vars(accelerators).items() if k.isupper() and isinstance(v, str)}
    assert set(RAY_TPU_ACCELERATOR_TYPES) == {v for k, v in names.items() if k.startswith("GOOGLE_TPU_")}
    assert set(GPU_ACCELERATOR_TYPES) == {v for k, v in names.items() if k.startswith("NVIDIA_")}


def test_tpu7x_with_a_ray_that_cannot_see_it(train: ModuleType) -> None:
    """Ray 2.53 reads GKE's tpu7x-<n> node type as invalid: one worker runs by the TPU resource alone,
    several workers (a multi-host slice Ray cannot reserve) stop with a message instead of waiting."""
    from ray.train.v2.api.config import ScalingConfig

    assert not ray_detects_tpu7x()  # the pinned Ray 2.53
    single = load_config({"PLANB_ACCELERATOR_TYPE": "TPU-V7X", "PLANB_TOPOLOGY": "2x2x1", "PLANB_NUM_WORKERS": "1"})
    kwargs = scaling_config_kwargs(single)
    assert kwargs == {"num_workers": 1, "resources_per_worker": {"TPU": 4}, "use_tpu": True}
    assert ScalingConfig(**kwargs).num_tpus_per_worker == 4
    multi = load_config({"PLANB_ACCELERATOR_TYPE": "TPU-V7X", "PLANB_TOPOLOGY": "2x2x2", "PLANB_NUM_WORKERS": "2"})
    with pytest.raises(UnsupportedByRayError, match=r"2 workers on TPU7x .*ray-project/ray#60338"):
        scaling_config_kwargs(multi)


def test_cli_overrides_env_and_reports_errors() -> None:
    ok = run_script({"PLANB_ACCELERATOR": "tpu"}, ("--accelerator", "cpu", "--model", "transformer", "--print-config"))
    assert ok.returncode == 0, ok.stdout
    assert '"accelerator": "cpu"' in ok.stdout and '"model": "transformer"' in ok.stdout
    bad = run_script({}, ("--num-workers", "3"))
    assert bad.returncode == 2
    assert "configuration error: PLANB_NUM_WORKERS: 3 does not match PLANB_TOPOLOGY=4x4" in bad.stdout
