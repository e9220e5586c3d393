#!/usr/bin/env bash
# `make test`: every test, in two pytest processes at once. The tests that need the local stack
# (marker `stack`, one stack per machine, so one process) run in the foreground with their output;
# the others (no stack: unit, chart, GKE emulator, collection, training tests) run beside them with
# their output in a file, printed when they end. The stack tests spend most of their time waiting
# for controllers, so the two together take about as long as the stack tests alone.
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
"$PY" -m pytest -ra -p no:cacheprovider -m "not stack" >"$logdir/not-stack.log" 2>&1 &
other=$!
trap 'kill "$other" 2>/dev/null' INT TERM
echo "[planb test] tests without the stack run beside these (output: $logdir/not-stack.log)"
"$PY" -m pytest -ra -m stack
stack_rc=$?
echo "[planb test] stack tests: exit $stack_rc after $((SECONDS - start)) s; waiting for the others ..."
wait "$other"
other_rc=$?
echo "[planb test] tests without the stack: exit $other_rc; their summary:"
sed -n '/short test summary info/,$p' "$logdir/not-stack.log"
tail -n 1 "$logdir/not-stack.log"
if ((other_rc != 0)); then
  echo "[planb test] full output of the failing run: $logdir/not-stack.log"
fi
echo "[planb test] all tests: $((SECONDS - start)) s"
((stack_rc == 0 && other_rc == 0))
