#!/usr/bin/env bash
# `make test`: every test, in three pytest processes at once (tests/README.md, "Tiers and their budgets"):
#   * the tests that need the local stack (marker `stack`; one stack per machine, so one process), in the
#     foreground with their output; they spend most of their time waiting for controllers;
#   * the tests that run ansible-playbook against the GKE emulator (marker `playbook`), and
#   * all the others (unit, chart, catalog, modules, molecule's gke scenario, collection, training),
#     each with its output in a file, printed when it ends.
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
for half in playbook other; do
  marker="not stack and playbook"
  [[ $half == other ]] && marker="not stack and not playbook"
  # At a lower priority: the stack tests are the longest of the three, and the two others finish minutes before
  # them even so.
  nice -n 10 "$PY" -m pytest -ra -p no:cacheprovider -m "$marker" >"$logdir/$half.log" 2>&1 &
  pids[$half]=$!
done
trap 'kill "${pids[@]}" 2>/dev/null' INT TERM
echo "[planb test] the tests without the stack run beside these (output: $logdir/playbook.log, $logdir/other.log)"
"$PY" -m pytest -ra -m stack
stack_rc=$?
echo "[planb test] stack tests: exit $stack_rc after $((SECONDS - start)) s; waiting for the others ..."
rc=$stack_rc
for half in playbook other; do
  wait "${pids[$half]}"
  half_rc=$?
  echo "[planb test] tests without the stack ($half): exit $half_rc after $((SECONDS - start)) s; their summary:"
  sed -n '/short test summary info/,$p' "$logdir/$half.log"
  tail -n 1 "$logdir/$half.log"
  if ((half_rc != 0)); then
    echo "[planb test] full output of the failing run: $logdir/$half.log"
    rc=$half_rc
  fi
done
echo "[planb test] all tests: $((SECONDS - start)) s"
exit "$rc"
