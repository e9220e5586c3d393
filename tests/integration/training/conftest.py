"""Fixtures for training/train.py: the script loaded as a module, a runner for it as a process, and one
JAX compilation cache for the session.

Every run of train.py traces and compiles its step functions anew (each run builds new closures), which is
most of a small run's time on CPU. The session's tests share JAX's persistent compilation cache in a fresh
directory: the first run of a configuration compiles it, later runs of the same computation (in this process,
in train.py processes and in their Ray workers, which inherit the environment) load the executable XLA
compiled then. The cache holds XLA's own output keyed by the computation, its devices and the compiler
options, so a run computes exactly what it would after compiling; nothing outlives the session.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.support.shared.training import load_train

#: An upper bound that turns on the cache's file lock (JAX locks only a bounded cache), so that two Ray workers
#: compiling the same step at once never read each other's half-written entry.
CACHE_MAX_BYTES = 1 << 30


@pytest.fixture(scope="session", autouse=True)
def _jax_compilation_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """JAX's persistent compilation cache for this session, in this process and in the processes it starts."""
    import jax

    cache = str(tmp_path_factory.mktemp("jax-compilation-cache"))
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


@pytest.fixture(scope="session")
def train() -> ModuleType:
    """training/train.py imported by path (it is a standalone script, not part of the planb package)."""
    return load_train("planb_training_train")
