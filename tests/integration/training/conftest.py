"""Fixtures for training/train.py: the script loaded as a module, a runner for it as a process, and JAX's
persistent compilation cache.

Every run of train.py traces and compiles its step functions anew (each run builds new closures), which is
most of a small run's time on CPU. The tests share JAX's persistent compilation cache: the first run of a
configuration compiles it, later runs of the same computation (in this process, in train.py processes and in their
Ray workers, which inherit the environment) load the executable XLA compiled then. The cache holds XLA's own output
keyed by the computation, its devices, the compiler options and JAX's version, so a run computes exactly what it would
after compiling. It lives beside the pinned tools' cache, outside the checkout, in a folder per jax and jaxlib version
(tests.support.shared.training.jax_cache_dir), so that a warm machine compiles nothing the last run compiled: on
2026-12-06 the training tests took 91 CPU-seconds with a cold cache and 52 with a warm one (BENCHMARKS.md, "The test
suite"). PLANB_JAX_CACHE_DIR names another folder (a fresh one: a run that compiles everything).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.support.shared.training import jax_cache_dir, load_train

#: An upper bound that turns on the cache's file lock (JAX locks only a bounded cache), so that two Ray workers
#: compiling the same step at once never read each other's half-written entry.
CACHE_MAX_BYTES = 1 << 30


@pytest.fixture(scope="session", autouse=True)
def _jax_compilation_cache() -> Iterator[None]:
    """JAX's persistent compilation cache, in this process and in the processes it starts."""
    import jax

    folder = jax_cache_dir("training-tests")
    folder.mkdir(parents=True, exist_ok=True)
    cache = str(folder)
    settings = {
        "jax_compilation_cache_dir": cache,
        "jax_persistent_cache_min_compile_time_secs": 0.0,  # the default (1 s) leaves the small steps out
        "jax_compilation_cache_max_size": CACHE_MAX_BYTES,
    }
    before = {name: getattr(jax.config, name) for name in settings}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in settings.items():
            jax.config.update(name, value)
            patch.setenv(name.upper(), str(value))  # JAX reads each option from its upper-case variable
        yield
    for name, value in before.items():
        jax.config.update(name, value)


@pytest.fixture(scope="session", autouse=True)
def _ray_folder() -> Iterator[None]:
    """Ray's folder (its sessions' logs and sockets, /tmp/ray by default, where every run leaves one) is the
    session's own and goes when it ends: RAY_TMPDIR, which ray.init reads here and in the processes started. Short,
    directly under /tmp: its sockets' paths must fit 107 bytes. A RAY_TMPDIR already set is left alone."""
    if os.environ.get("RAY_TMPDIR"):
        yield
        return
    folder = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_TMPDIR", folder)
        yield
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def train() -> ModuleType:
    """training/train.py imported by path (it is a standalone script, not part of the planb package)."""
    return load_train("planb_training_train")
