#!/usr/bin/env bash
# `make test`: every test, in four pytest processes at once, each a set of folders (tests/README.md, "Tiers"):
#   * tests/e2e, the real local stack, split over two stacks side by side (`--e2e-groups`, tests/conftest.py): the
#     seed's topology, the stack's own tests and those that take it down on the usual ports and .state, in the
#     foreground with their output; the chart's stack tests and the failover, two-slice, ladder and concurrent
#     topologies on a second stack whose every port is moved by PLANB_PORT_OFFSET (planb.loopback) and whose state
#     is in a folder of its own. Both spend most of their time waiting for controllers;
#   * tests/integration/playbooks, ansible-playbook against the GKE emulator, and
#   * tests/unit and the rest of tests/integration (the emulator, modules, molecule's gke scenario, the
#     collection, training), each with its output in a file, printed when it ends.
# pytest-xdist workers for the last two were tried and measured: they added about 140 CPU-seconds (each worker
# imports and collects again) on a machine whose two cores the suite already fills, and the run took 901 s.
# PYTEST_ARGS=... (a path, -k, -x ...) runs one pytest process with them instead.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
if [[ -n "${PYTEST_ARGS:-}" ]]; then
  # shellcheck disable=SC2086 # PYTEST_ARGS is a list of pytest arguments
  exec "$PY" -m pytest -ra $PYTEST_ARGS
fi
logdir=$(mktemp -d -t planb-test.XXXXXX)
start=$SECONDS
declare -A pids=()
declare -A folders=(
  [playbook]="tests/integration/playbooks"
  [other]="tests/unit tests/integration --ignore=tests/integration/playbooks"
)
for half in playbook other; do
  # At the lowest priority: the e2e tests wait on controllers whose timers must not slip (tests/README.md).
  # shellcheck disable=SC2086 # a list of paths and options
  nice -n 19 "$PY" -m pytest -ra --durations=15 -p no:cacheprovider ${folders[$half]} >"$logdir/$half.log" 2>&1 &
  pids[$half]=$!
done
# The second stack: every fixed port 100 up, the GKE emulator on 8865, its state in the log folder.
second=(env PLANB_PORT_OFFSET=100 PLANB_GKE_EMULATOR_PORT=8865 PLANB_STATE_DIR="$logdir/second-stack")
"${second[@]}" "$PY" -m pytest -ra --durations=30 -p no:cacheprovider tests/e2e \
  --e2e-groups=test_chart_stack.py,failover_site,two_slices,ladder,concurrent >"$logdir/e2e-second.log" 2>&1 &
pids[e2e-second]=$!
trap 'kill "${pids[@]}" 2>/dev/null' INT TERM
echo "[planb test] the unit and integration tests and the e2e tests of the chart and of the failover, two-slice," \
  "ladder and concurrent topologies (a second stack) run beside these (output: $logdir/{playbook,other,e2e-second}.log)"
"$PY" -m pytest -ra --durations=30 tests/e2e --e2e-groups=test_local_stack.py,test_loopback.py,test_dws_binding.py,site,teardown
stack_rc=$?
echo "[planb test] e2e tests (the stack's own and the seed's topology): exit $stack_rc after $((SECONDS - start)) s; waiting for the others ..."
rc=$stack_rc
for half in e2e-second playbook other; do
  wait "${pids[$half]}"
  half_rc=$?
  echo "[planb test] $half tests: exit $half_rc after $((SECONDS - start)) s; their summary:"
  sed -n '/short test summary info/,$p' "$logdir/$half.log"
  tail -n 1 "$logdir/$half.log"
  if ((half_rc != 0)); then
    echo "[planb test] full output of the failing run: $logdir/$half.log"
    rc=$half_rc
  fi
done
echo "[planb test] all tests: $((SECONDS - start)) s"
exit "$rc"
