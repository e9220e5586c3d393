"""planb training job: the tutorial's JAX ``JaxTrainer`` script, made configurable and resumable.

The command line of the ``planb_train`` package beside it (its ``__init__`` names the modules and what each holds);
the Helm chart mounts both from one ConfigMap at /app, the package's directory on ``PYTHONPATH``. Default behaviour
is the tutorial's: a JAX linear regression under Ray Train v2 ``JaxTrainer`` on a v6e 4x4 slice (4 workers x 4
chips), loss printed every 10 epochs, then "Training Complete!".

Configuration comes from environment variables (the chart sets them from the accelerator profile);
command-line flags of the same name (``--num-workers`` for ``PLANB_NUM_WORKERS``, ...) override them.
Bad values raise ``ConfigError`` (a ``ValueError``) naming the variable and the valid choices; the
command line turns it into exit status 2, as it does a ``CheckpointOwnerError`` (another run's
checkpoints) and an ``UnsupportedByRayError`` (a job the installed Ray cannot schedule).

Exit status. 0 and "Training Complete!" only when the run reached its last step (PLANB_EPOCHS, or the end
PLANB_STOP_AFTER sets). A run stopped on a notice before it saves and is not finished: the process ends by the
signal it got (SIGTERM: status 143 from a shell, -15 to Python's subprocess), or, when the notice reached only the
notice file (the Ray workers' pods on GKE, whose preStop hooks create it), with ``EXIT_STOPPED`` (75, EX_TEMPFAIL).
Either way the RayJob fails, never succeeds: KubeRay's retry (the chart's job.backoffLimit) resumes it from the
checkpoint. 2 is a configuration error; any other failure is 1.

Cluster notes: a ``gs://`` checkpoint directory needs ``orbax-checkpoint`` and ``gcsfs`` (the gs://
backend of etils.epath when TensorFlow is absent) in the Ray runtime environment. flax and optax are
only imported for the transformer, orbax only when checkpointing, so the tutorial's default needs just
``jax`` and ``ray[train]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from planb_train.checkpoints import Checkpointer, CheckpointOwnerError
from planb_train.config import ConfigError, load_config
from planb_train.processes import load_processes
from planb_train.runners.outcome import EXIT_STOPPED, StoppedOnNoticeError, UnsupportedByRayError
from planb_train.runners.plain import run_plain
from planb_train.runners.ray_train import run_ray

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
    "PLANB_CHECKPOINT_BUDGET",
    "PLANB_CHECKPOINT_KEEP",
    "PLANB_RUN_ID",
    "PLANB_RESUME",
    "PLANB_STOP_AFTER",
    "PLANB_SAVE_ON_NOTICE",
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
    "PLANB_REMAT",
    "PLANB_COMPILATION_CACHE_DIR",
    "PLANB_NOTICE_FILE",
    "PLANB_PEAK_TFLOPS",
    "PLANB_METRICS_FILE",
    "PLANB_COORDINATOR_ADDRESS",
    "PLANB_NUM_PROCESSES",
    "PLANB_PROCESS_ID",
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
        processes = load_processes({**os.environ, **overrides})
    except ConfigError as exc:
        print(f"planb train: configuration error: {exc}", file=sys.stderr)
        return 2
    if show:
        print(json.dumps(cfg.to_dict(), indent=2, sort_keys=True))
        return 0
    try:
        if cfg.runner == "plain":
            result = run_plain(cfg, processes)
            if result.stopped:
                where = f"after step {result.end_step} of {cfg.epochs}"
                raise StoppedOnNoticeError(f"stopped on a notice {where}: the run saved and is not finished")
            return 0
        # The driver checks the checkpoints' owner before Ray starts a worker; workers check again.
        Checkpointer(cfg, writer=False).close()
        run_ray(cfg)
    except (UnsupportedByRayError, CheckpointOwnerError) as exc:
        print(f"planb train: {exc}", file=sys.stderr)
        return 2
    except StoppedOnNoticeError as exc:
        print(f"planb train: {exc} (exit status {EXIT_STOPPED})", file=sys.stderr)
        return EXIT_STOPPED
    return 0


if __name__ == "__main__":
    sys.exit(main())
