"""A team's own JAX program that keeps planb's contract (docs/your-code.md): not planb's train.py, nothing of planb
imported, small enough to read in one sitting.

It fits a linear model to synthetic data with plain JAX and numpy. What makes it survive planb's moves:

* checkpoints in ``$PLANB_CHECKPOINT_DIR`` (the release's own directory, given by the chart; a local path or a
  ``gs://`` URL, through etils.epath), one ``.npz`` per saved step written whole (a temporary file, then a rename;
  an object store writes an object whole), every ``--save-every`` steps;
* a stop notice, either SIGTERM or the file ``$PLANB_NOTICE_FILE`` appearing, is looked at after every step: the
  program saves the step it reached, creates ``$PLANB_NOTICE_FILE.saved`` (the chart's preStop hook waits for it)
  and ends with status 75, so that neither Ray nor KubeRay takes the run for finished;
* a start resumes from the newest checkpoint, and says how many steps the run before had done past it (lost);
* progress records on its output (``planb-progress {json}``), which `planb status` counts its goodput from: the step
  reached, the training seconds kept up to it, the tokens (here: samples) trained, and the job's resumes.

Run it here with ``python examples/your-code/team/regression.py --steps 2000`` (no checkpoints without the
variable); the e2e test tests/e2e/topologies/test_your_code.py runs it through the chart with ``job.command``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from etils import epath

EXIT_STOPPED = 75  # EX_TEMPFAIL: stopped on a notice after saving; a retry resumes
FEATURES = 16


class Notice:
    """SIGTERM, or the notice file created after this process started (an older one is a previous container's)."""

    def __init__(self, path: str) -> None:
        self.path, self.signalled, self.born = path, False, time.time()
        signal.signal(signal.SIGTERM, self._on_signal)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.signalled = True

    def given(self) -> bool:
        if self.signalled:
            return True
        try:
            return bool(self.path) and os.stat(self.path).st_mtime >= self.born - 1
        except FileNotFoundError:
            return False

    def saved(self) -> None:
        if self.path:
            Path(f"{self.path}.saved").touch()


class Store:
    """Checkpoints and the progress file in one directory (none when it is empty)."""

    def __init__(self, directory: str, keep: int = 2) -> None:
        self.dir = epath.Path(directory) if directory else None
        self.keep = keep
        if self.dir:
            self.dir.mkdir(parents=True, exist_ok=True)

    def _write(self, name: str, write: Any) -> None:
        assert self.dir is not None
        tmp = self.dir / f".{name}.tmp"
        with tmp.open("wb") as out:
            write(out)
        tmp.replace(self.dir / name)

    def steps(self) -> list[int]:
        return sorted(int(p.stem.split("-")[1]) for p in self.dir.glob("step-*.npz")) if self.dir else []

    def save(self, step: int, params: dict[str, jax.Array], kept_s: float) -> None:
        if not self.dir:
            return
        arrays = {k: np.asarray(v) for k, v in params.items()}
        self._write(f"step-{step:09d}.npz", lambda out: np.savez(out, kept_s=kept_s, **arrays))
        for old in self.steps()[: -self.keep]:
            (self.dir / f"step-{old:09d}.npz").unlink(missing_ok=True)

    def restore(self, step: int) -> tuple[dict[str, jax.Array], float]:
        assert self.dir is not None
        with (self.dir / f"step-{step:09d}.npz").open("rb") as f, np.load(f) as data:
            return {k: jnp.asarray(data[k]) for k in ("w", "b")}, float(data["kept_s"])

    def progress(self) -> dict[str, Any]:
        path = self.dir / "progress.json" if self.dir else None
        return json.loads(path.read_text()) if path and path.exists() else {}

    def record(self, progress: dict[str, Any]) -> None:
        if self.dir:
            self._write("progress.json", lambda out: out.write(json.dumps(progress).encode()))


def report(**fields: Any) -> None:
    """One progress record (docs/your-code.md, "Goodput"), flushed at once."""
    print("planb-progress " + json.dumps(fields), flush=True)


def loss_fn(params: dict[str, jax.Array], x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


@jax.jit
def train_step(params: dict[str, jax.Array], x: jax.Array, y: jax.Array, lr: float = 0.05) -> Any:
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads), loss


def batch(step: int, size: int) -> tuple[jax.Array, jax.Array]:
    """The batch of a step, the same whichever run computes it (seeded by the step), so a resume is exact."""
    rng = np.random.default_rng(step)
    x = rng.normal(size=(size, FEATURES)).astype(np.float32)
    true_w = np.arange(1, FEATURES + 1, dtype=np.float32) / FEATURES
    return jnp.asarray(x), jnp.asarray(x @ true_w + 0.5 + 0.01 * rng.normal(size=size).astype(np.float32))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=2000, help="steps in total")
    parser.add_argument("--batch", type=int, default=256, help="samples per step")
    parser.add_argument("--save-every", type=int, default=500, help="save a checkpoint every N steps")
    parser.add_argument("--report-every", type=int, default=200, help="print a progress record every N steps")
    args = parser.parse_args(argv)
    notice = Notice(os.environ.get("PLANB_NOTICE_FILE", ""))
    store = Store(os.environ.get("PLANB_CHECKPOINT_DIR", ""))

    params = {"w": jnp.zeros(FEATURES), "b": jnp.zeros(())}
    step, kept_s, progress = 0, 0.0, store.progress()
    resumes = list(progress.get("resumes", []))
    saved = store.steps()
    if saved:
        step = saved[-1]
        params, kept_s = store.restore(step)
        reached = int(progress.get("reached", step))
        lost, lost_s = max(0, reached - step), max(0.0, float(progress.get("reached_kept_s", kept_s)) - kept_s)
        resumes.append({"step": step, "lost": lost, "kept_s": kept_s, "lost_s": lost_s})
        print(f"resumed from checkpoint step {step}; {lost} step(s) lost", flush=True)
        report(step=step, kept_s=round(kept_s, 3), tokens=step * args.batch, resumes=resumes)
    else:
        print(f"no checkpoint in {store.dir or '(none: PLANB_CHECKPOINT_DIR is empty)'}; starting at step 0")

    last = time.perf_counter()
    while step < args.steps:
        x, y = batch(step, args.batch)
        params, loss = train_step(params, x, y)
        loss.block_until_ready()
        now = time.perf_counter()
        step, kept_s, last = step + 1, kept_s + (now - last), now
        store.record({"reached": step, "reached_kept_s": kept_s, "resumes": resumes})
        stopping = notice.given()
        if step % args.save_every == 0 or stopping or step == args.steps:
            store.save(step, params, kept_s)
        if step % args.report_every == 0 or stopping or step == args.steps:
            print(f"step {step}: loss {float(loss):.6f}", flush=True)
            report(step=step, kept_s=round(kept_s, 3), tokens=step * args.batch)
        if stopping:
            notice.saved()
            print(f"stop notice at step {step}: checkpoint step {step} saved; stopping", flush=True)
            return EXIT_STOPPED
        last = time.perf_counter()  # a save's time is not training time
    print("training complete", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
