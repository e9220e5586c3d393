"""planb training job, checkpoints: who owns a checkpoint directory, and Orbax save/restore.

Checkpoints belong to their run. The first run that checkpoints into a directory writes
``planb-run.json`` there: its PLANB_RUN_ID and the SHA-256 of the settings that shape its state and
its data (RUN_CONFIG_FIELDS; not PLANB_EPOCHS, so a run may be extended). A later start resumes
only when both match; another run's directory, or checkpoints without a record, stop it with
``CheckpointOwnerError`` (exit status 2) before any step, so Orbax's ``max_to_keep`` only ever
deletes the run's own checkpoints. ``PLANB_RESUME=force`` resumes anyway and records the new owner.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from typing import Any

import jax
import numpy as np

from planb_train.config import TrainConfig
from planb_train.interval import SaveInterval

RUN_RECORD = "planb-run.json"  # the owner's record, next to the checkpoints
# The settings a checkpoint's owner is hashed over: those that decide the state's shapes (a resume
# with others would fail in restore) or the batches and updates it was trained with.
RUN_CONFIG_FIELDS = (
    "model", "seed", "learning_rate", "batch_per_device", "seq_len", "vocab_size", "d_model",
    "num_layers", "num_heads", "dtype",
)  # fmt: skip


class CheckpointOwnerError(RuntimeError):
    """The checkpoint directory holds another run's checkpoints (the message says whose and what to do)."""


def run_record(cfg: TrainConfig) -> dict[str, Any]:
    """What the owner of ``cfg.checkpoint_dir`` records there: its run id and its config's hash."""
    config = {name: getattr(cfg, name) for name in RUN_CONFIG_FIELDS}
    if cfg.scan_layers:  # stacked blocks: another tree of the same numbers (named only when on, so hashes stay)
        config["scan_layers"] = True
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
        write_whole(path, json.dumps(mine, indent=2, sort_keys=True) + "\n")


def write_whole(path: Any, text: str) -> None:
    """Write ``text`` to ``path`` (an etils.epath.Path) so that a reader finds it whole or not at all: every process
    of a jax.distributed run reads the run record while process 0 writes it. A local file is replaced by a written
    temporary; an object store's object is written whole."""
    if "://" in str(path):
        path.write_text(text)
        return
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    tmp.replace(path)


def pytree_handler(ocp: Any) -> Any:
    """Orbax's PyTree handler without zstd compression (planb's choice, not Orbax's default, because a training
    state of float32 weights and Adam moments shrinks by about 8% under zstd, while compressing took most of a
    save's commit and decompressing a third of a restore: docs/training-on-tpu.md, "Saves and stop notices").
    Checkpoints written compressed (Orbax's default, StandardSave) restore as before: each array's metadata names
    its codec."""
    try:
        return ocp.PyTreeCheckpointHandler(use_compression=False)
    except TypeError:  # an Orbax without the option
        return ocp.PyTreeCheckpointHandler()


def checkpoint_manager(ocp: Any, directory: str, options: Any) -> Any:
    """Orbax's CheckpointManager over ``directory`` with planb's PyTree handler, told never to look at JAX's preemption
    sync point itself. The loop asks it at every step (planb_train.processes), and each ask sets the step this process
    reports when a notice starts the sync protocol. Orbax's manager asks too, with the saved step, from its commit
    thread once a save is committed, when the loop is steps past it: were every process set back so when the
    protocol ran, the sync step would lie behind every loop and never be reached."""

    class Manager(ocp.CheckpointManager):  # type: ignore[misc]
        def reached_preemption(self, step: int) -> bool:
            return False

    return Manager(directory, options=options, item_handlers=pytree_handler(ocp))


class Checkpointer:
    """Orbax CheckpointManager over ``cfg.checkpoint_dir``; a no-op when it is empty.

    Opening it checks that the directory's checkpoints belong to this run (claim_checkpoints) and,
    for the writer of process 0, records the run there.

    Saves are asynchronous (Orbax's default, ``enable_async_checkpointing``): ``save`` returns once the state is
    copied from the devices to host memory, and a background thread writes and commits it while training goes on.
    That copy is the only part a step waits for; ``blocking_s`` keeps each save's, ``committed_s`` each save's time
    from its start to its commit (seen at the next step boundary after it, so it is up to one step long).
    Restores go straight into the abstract state the model describes (``Task.abstract``): nothing is allocated on
    the devices before the restored arrays, so a state up to the whole of free HBM can come back.

    Which steps save: ``interval`` (planb_train.interval, planb's policy: multiples of PLANB_CHECKPOINT_EVERY, spaced so
    that saves take at most PLANB_CHECKPOINT_BUDGET of training; the first one's cost estimated from ``state_bytes``).
    The loop calls ``maybe_save`` at every step boundary, which is where the policy is told the step's time and finds
    a save committed.
    """

    def __init__(self, cfg: TrainConfig, writer: bool, state_bytes: int = 0) -> None:
        self.enabled = bool(cfg.checkpoint_dir)
        self.every = cfg.checkpoint_every
        self.interval = SaveInterval(cfg.checkpoint_every, cfg.checkpoint_budget, state_bytes)
        self.writer = writer
        self._manager: Any = None
        self.blocking_s: list[float] = []
        self.committed_s: list[float] = []
        self._pending: float | None = None  # perf_counter at the start of the save still being written
        if not self.enabled:
            return
        import orbax.checkpoint as ocp

        self._ocp = ocp
        options = ocp.CheckpointManagerOptions(
            max_to_keep=cfg.checkpoint_keep,
            create=writer,
            read_only=not writer,
            enable_async_checkpointing=True,
            enable_background_delete=True,  # pruning old checkpoints never holds a step up
        )
        self._manager = checkpoint_manager(ocp, cfg.checkpoint_dir, options)
        claim_checkpoints(cfg, self._manager.latest_step() is not None, write=writer and jax.process_index() == 0)

    def latest_step(self) -> int | None:
        if not self.enabled:
            return None
        step = self._manager.latest_step()
        return None if step is None else int(step)

    def restore(self, step: int, abstract: Any) -> Any:
        """Checkpoint ``step`` restored into ``abstract`` (jax.ShapeDtypeStructs with shardings, Task.abstract)."""
        restore_args = self._ocp.checkpoint_utils.construct_restore_args(abstract)
        return self._manager.restore(step, args=self._ocp.args.PyTreeRestore(item=abstract, restore_args=restore_args))

    def maybe_save(self, step: int, state: Any, force: bool = False) -> bool:
        """At the boundary after ``step`` steps: save when the interval says so, or with ``force`` (a notice, the
        run's end). Whether a save began."""
        if not (self.enabled and self.writer):
            return False
        if force:
            self.poll()
        elif not self._due(step):
            return False
        if step in self._manager.all_steps():
            return False
        started = time.perf_counter()
        self._manager.save(step, args=self._ocp.args.PyTreeSave(state), force=True)
        self.blocking_s.append(time.perf_counter() - started)
        if self._pending is not None:  # Orbax waited for the previous save before this one
            self.committed_s.append(started - self._pending)
        self._pending = started
        if not force:
            self.interval.saved(step, self.blocking_s[-1])
        return True

    def _due(self, step: int) -> bool:
        """A periodic boundary: the step's time and any commit told to the interval, then its decision; under
        jax.distributed, process 0's, at each multiple of PLANB_CHECKPOINT_EVERY (planb_train.interval)."""
        self.interval.tick(step, time.perf_counter())
        writing = self._pending is not None
        self.poll()
        if writing and self._pending is None:
            measured = self.interval.committed()
            if measured is not None and self.interval.budget > 0 and jax.process_index() == 0:
                print(self.interval.line(measured))
        due = self.interval.due(step)
        notes, self.interval.notes = self.interval.notes, []
        if notes and jax.process_index() == 0:
            print("\n".join(notes))
        if jax.process_count() > 1 and self.interval.budget > 0 and step % self.every == 0:
            from jax.experimental import multihost_utils

            due = bool(multihost_utils.broadcast_one_to_all(np.int32(due)))
        return due

    def poll(self) -> None:
        """Note the commit of the save in flight, if it has committed since the last look."""
        if self._pending is not None and not self._manager.is_saving_in_progress():
            self.committed_s.append(time.perf_counter() - self._pending)
            self._pending = None

    def wait(self) -> None:
        """Wait until the save in flight has committed."""
        if self._manager is not None:
            self._manager.wait_until_finished()
            self.poll()

    def close(self) -> None:
        if self._manager is not None:
            self.wait()
            self._manager.close()
