#!/usr/bin/env bash
# `make test`: every test, in four pytest processes at once, each a set of folders (tests/README.md, "Tiers"):
#   * tests/e2e but the regions topology, the real local stack (one stack), in the foreground with its output; it
#     spends most of its time waiting for controllers;
#   * the regions topology (tests/e2e/topologies/test_regions.py: three stacks of its own, a manager and two regions)
#     at the same priority, on ports and a state folder of its own (`--e2e-groups`, tests/conftest.py;
#     PLANB_PORT_OFFSET, planb.local.loopback). The whole tier over two stacks overloaded two cores on 2026-12-03
#     (802-1111 s); this topology alone was 171 s of the tier's 660 s chain on 2026-12-06, and beside it takes 250 s;
#     the two_slices, ladder and concurrent topologies moved here too on 2026-12-07 (tried, not kept): both e2e
#     processes then took 895 s in make test, the others ended later still, and a regions test timed out;
#   * tests/integration/playbooks, tests/integration/collection and tests/integration/molecule, ansible-playbook
#     against the GKE emulator from the checkout, from the collection's tarball and through molecule's gke scenario,
#     with tests/integration/regions (the multikueue role's tokens, the keeper against API servers); and
#   * tests/unit and the rest of tests/integration (the emulator, modules, Kueue, the chart, training, the wheel in
#     a fresh venv).
# The last two print their output when they end, and are split so that they end about together (on 2026-12-06 the
# first ended 30 s after the second, and tests/integration/packaging's 20 CPU-seconds moved over): a fifth process
# (the collection, molecule, regions and packaging folders on their own) was measured that day and ended no sooner,
# as the machine's CPU, not the processes' waits, sets the total (tests/README.md, "Tiers").
# PYTEST_ARGS=... (a path, -k, -x ...) runs one pytest process with them instead.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
# Go's collector runs less often in every Go process the tests start (API servers, etcd, Kueue, KubeRay, helm, kubectl;
# planb.local.stack.kwokctl_config gives the API server the environment's GOGC): the processes below keep two
# cores busy from start to end, and the 24 GiB have room for the larger heaps (BENCHMARKS.md, "make test").
export GOGC="${GOGC:-300}"
# Python keeps the bytecode of what it imports (__pycache__, ignored by git, .helmignore and ansible-galaxy's build),
# which a PYTHONDONTWRITEBYTECODE in the environment forbids: without it every Python process the tests start (planb's
# CLI and stand-ins, the emulator, train.py's runs, hundreds of them) compiles each planb module it imports from
# source again, 0.1-0.2 CPU-s a process (`planb local gke-emulator --help`: 0.58-0.66 CPU-s without the bytecode,
# 0.47-0.48 with it, ten runs each, 2026-12-07). src and training are compiled once here, before the processes below
# start at once; pytest keeps its rewritten test modules the same way.
unset PYTHONDONTWRITEBYTECODE
"$PY" -m compileall -q -j 0 src training >/dev/null || true
if [[ -n "${PYTEST_ARGS:-}" ]]; then
  # shellcheck disable=SC2086 # PYTEST_ARGS is a list of pytest arguments
  exec "$PY" -m pytest -ra $PYTEST_ARGS
fi
logdir=$(mktemp -d -t planb-test.XXXXXX)
start=$SECONDS
declare -A pids=()
declare -A folders=(
  [playbook]="tests/integration/playbooks tests/integration/collection tests/integration/molecule
    tests/integration/regions"
  [other]="tests/unit tests/integration --ignore=tests/integration/playbooks --ignore=tests/integration/collection
    --ignore=tests/integration/molecule --ignore=tests/integration/regions"
)
# The unit and integration processes at the lowest priority: the e2e tests wait on controllers whose timers must not
# slip; the processes together fill two cores (tests/README.md, "Tiers"). SCHED_IDLE as well as nice 19: a waking
# task of the e2e tier then preempts them at once, where at nice 19 alone it may wait out the running task's slice
# (EEVDF); on 2026-12-04 (kernel 6.18) make test took 571 s with it and 643 s without, the same code on the same host.
# nice 19 alone where chrt is missing or refused. pytest-xdist workers were measured too: about 140 CPU-seconds more
# (each worker imports and collects every test again), and a slower run (901 s).
lowest=(nice -n 19)
if command -v chrt >/dev/null && chrt --idle 0 true 2>/dev/null; then
  lowest=(chrt --idle 0 nice -n 19)
fi
for part in playbook other; do
  # shellcheck disable=SC2086 # a list of paths and options
  "${lowest[@]}" "$PY" -m pytest -ra --durations=15 -p no:cacheprovider ${folders[$part]} >"$logdir/$part.log" 2>&1 &
  pids[$part]=$!
done
# The regions process: its manager's ports moved by 500 (the regions' own take +100 and +200, planb.local.regions;
# 8765 is planb.local.gke_emulator.address.DEFAULT_PORT), its state in a folder of its own, removed when it ends.
regions_state=$(mktemp -d -t planb-regions-state.XXXXXX)
PLANB_STATE_DIR="$regions_state" PLANB_PORT_OFFSET=500 PLANB_GKE_EMULATOR_PORT=$((8765 + 500)) \
  "$PY" -m pytest -ra --durations=15 -p no:cacheprovider tests/e2e --e2e-groups=regions >"$logdir/regions.log" 2>&1 &
pids[regions]=$!
trap 'kill "${pids[@]}" 2>/dev/null' INT TERM
echo "[planb test] the regions topology, the unit and the integration tests run beside these (output: $logdir, removed if every test passes)"
"$PY" -m pytest -ra --durations=60 tests/e2e --e2e-groups=-regions
stack_rc=$?
echo "[planb test] e2e tests: exit $stack_rc after $((SECONDS - start)) s; waiting for the others ..."
rc=$stack_rc
for part in regions playbook other; do
  wait "${pids[$part]}"
  part_rc=$?
  what="unit and integration tests ($part)"
  if [[ $part == regions ]]; then
    what="e2e tests (the regions topology)"
    rm -rf "$regions_state"
  fi
  echo "[planb test] $what: exit $part_rc after $((SECONDS - start)) s; their summary:"
  sed -n '/short test summary info/,$p' "$logdir/$part.log"
  tail -n 1 "$logdir/$part.log"
  if ((part_rc != 0)); then
    echo "[planb test] full output of the failing run: $logdir/$part.log"
    rc=$part_rc
  fi
done
echo "[planb test] all tests: $((SECONDS - start)) s"
# The processes' output stays for a failure, whose path is printed above; all passing, it goes.
if ((rc == 0)); then
  rm -rf "$logdir"
fi
exit "$rc"
