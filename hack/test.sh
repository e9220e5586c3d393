#!/usr/bin/env bash
# `make test`: every test, in three pytest processes at once, each a set of folders (tests/README.md, "Tiers"):
#   * tests/e2e, the real local stack (one stack per machine, so one process), in the foreground with its
#     output; it spends most of its time waiting for controllers;
#   * tests/integration/playbooks, ansible-playbook against the GKE emulator, and
#   * tests/unit and the rest of tests/integration (the emulator, modules, molecule's gke scenario, the
#     collection, training), each with its output in a file, printed when it ends.
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
  # At the lowest priority: the e2e tests wait on controllers whose timers must not slip; the three processes
  # together are CPU-bound on two cores and end within about a minute of each other (tests/README.md).
  # shellcheck disable=SC2086 # a list of paths and options
  nice -n 19 "$PY" -m pytest -ra --durations=15 -p no:cacheprovider ${folders[$half]} >"$logdir/$half.log" 2>&1 &
  pids[$half]=$!
done
trap 'kill "${pids[@]}" 2>/dev/null' INT TERM
echo "[planb test] the unit and integration tests run beside these (output: $logdir/playbook.log, $logdir/other.log)"
"$PY" -m pytest -ra --durations=60 tests/e2e
stack_rc=$?
echo "[planb test] e2e tests: exit $stack_rc after $((SECONDS - start)) s; waiting for the others ..."
rc=$stack_rc
for half in playbook other; do
  wait "${pids[$half]}"
  half_rc=$?
  echo "[planb test] unit and integration tests ($half): exit $half_rc after $((SECONDS - start)) s; their summary:"
  sed -n '/short test summary info/,$p' "$logdir/$half.log"
  tail -n 1 "$logdir/$half.log"
  if ((half_rc != 0)); then
    echo "[planb test] full output of the failing run: $logdir/$half.log"
    rc=$half_rc
  fi
done
echo "[planb test] all tests: $((SECONDS - start)) s"
exit "$rc"
