"""Run a train.py whose every process writes JAX's persistent compilation cache (the multihost tests' launcher).

``python cache_every_process.py TRAIN_PY [ARGS...]`` runs TRAIN_PY as ``__main__`` (its folder in place of this one
first on sys.path, as when Python runs it) after one change to JAX: a process other than 0 of a ``jax.distributed``
run writes the executables it compiles to the cache too. JAX writes from process 0 alone (jax/_src/compiler.py,
``_cache_write``: "Only write cache entries from the first process", against write contention on shared filesystems
such as GCS), and on CPU each process's cache key holds its own topology (jax/_src/cache_key.py hashes
``get_topology_for_devices`` of its devices), so without this every process but 0 compiles each step again in every
run: about 3.5 CPU-seconds a process at XLA's optimisation level 0, four of test_multihost's seven processes
(2026-12-07). The cache holds XLA's own output keyed by the computation, its devices and the compiler options, so a
process that loads it runs exactly what it would after compiling; the tests' cache is a local folder that no two
processes write under one key.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

from jax._src import compilation_cache, compiler, distributed

_write_from_process_0 = compiler._cache_write


def _write_from_every_process(
    cache_key: str, compile_time_secs: float, module_name: str, backend: Any, executable: Any, host_callbacks: Any
) -> None:
    if distributed.global_state.process_id == 0 or host_callbacks:
        # JAX's own rules: process 0, or an executable it never keeps (host callbacks are baked into it).
        _write_from_process_0(cache_key, compile_time_secs, module_name, backend, executable, host_callbacks)
        return
    compilation_cache.put_executable_and_time(cache_key, module_name, executable, backend, int(compile_time_secs))


def main() -> None:
    script = Path(sys.argv[1])
    compiler._cache_write = _write_from_every_process
    sys.argv = sys.argv[1:]
    sys.path[0] = str(script.parent)
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
