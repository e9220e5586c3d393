#!/usr/bin/env bash
# `make bench`: measure the figures BENCHMARKS.md reports, each printed with the command behind it.
# Run on an otherwise idle machine; results go to stdout and to .state/bench-<date>.log.
usage() {
  cat <<'EOF'
usage: hack/bench.sh [all | loop | regions | concurrent [ARGS...] | dispatch [ARGS...] | aot [ARGS...]]
  all (default)    every figure: the tool build, the local loop, admission latency, training step time
  loop             the local loop only: up, memory, no-op converge, demo
  regions          planb local up --regions 3 (time, idle PSS of the four stacks), then the regions demo with
                   10 shuffled runs (PLANB_DEMO_SCENARIO=regions PLANB_DEMO_REGIONS_RUNS=10 make demo)
  concurrent ARGS  the ladder on one capacity trace, three columns: sequential, concurrent (train.py's save on
                   notice off, PLANB_SAVE_ON_NOTICE=0) and concurrent+save (on); ARGS go to
                   hack/bench_concurrent.py as they are (--reservation-frees T1, --dws-delivers T2, --steps N,
                   --checkpoint-every M, --modes sequential,concurrent,concurrent+save, ...; --help lists them).
                   Needs `planb local up`.
  dispatch ARGS    advice-ordered dispatch against AllAtOnce and an oracle on seeded stockout traces (pure
                   Python, no stack, under a minute), TPU jobs without advice and GPU jobs with it reported apart:
                   hack/bench_dispatch.py --update BENCHMARKS.md ARGS, which prints a table per population and
                   writes them into BENCHMARKS.md's "Dispatch" section (--seed N, --jobs N a population,
                   --populations tpu,gpu, --sweep for the policy's knobs on the tuning seeds; --help lists them)
  aot ARGS         the training step compiled by the TPU compiler on this CPU for every TPU profile, its default
                   and its largest model (python -m planb.build.aot --jobs 2 --update BENCHMARKS.md ARGS; cached
                   in the tool cache, minutes a compile when not): BENCHMARKS.md's "Compiled for each slice"
EOF
}
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then usage; exit 0; fi
case "${1:-all}" in all | loop | regions | concurrent | dispatch | aot) ;; *) usage >&2; exit 2 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/bin:$PWD/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$PWD/ansible.cfg"
mkdir -p .state
log=".state/bench-$(date -u +%Y%m%dT%H%M%SZ).log"
exec > >(tee "$log") 2>&1

measure() {  # measure LABEL COMMAND...: wall seconds of one run
  local label=$1 start end
  shift
  echo "--- $label: $*"
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  printf 'RESULT %-28s %7.1f s   (%s)\n' "$label" "$(echo "$end - $start" | bc)" "$*"
}

# The local loop (figures of "The local loop" in BENCHMARKS.md): `hack/bench.sh loop` measures only these.
loop_figures() {
  planb local down >/dev/null 2>&1 || true
  planb local up >/dev/null 2>&1  # first up after down creates the cluster directory (and makes etcd's snapshot)
  planb local down >/dev/null 2>&1
  PLANB_ETCD_SNAPSHOT=off measure "local up, empty etcd" planb local up
  planb local down >/dev/null 2>&1
  measure "local up (warm tools)" planb local up
  echo "--- up's parts (planb local up writes them to .state/local/up-timings.json)"
  python - <<'PY'
import json

timings = json.load(open(".state/local/up-timings.json"))
for span in timings["spans"]:
    print(f"  {span['name']:<72} {span['start']:6.1f} {span['end']:6.1f}")
PY
  sleep 5
  echo "--- resident memory of the running stack, idle (sum of VmRSS of every stack process)"
  python - <<'PY'
from pathlib import Path
from planb.local.stack.stack import LocalStack

total = 0
for pid in LocalStack().pids():
    name = Path(f"/proc/{pid}/comm").read_text().strip()
    rss = next(int(l.split()[1]) for l in Path(f"/proc/{pid}/status").read_text().splitlines() if l.startswith("VmRSS"))
    total += rss
    print(f"  {name:<24} {rss / 1024:7.1f} MiB")
print(f"RESULT stack RSS                      {total / 1024 / 1024:7.2f} GiB   (planb local up; sum of VmRSS)")
PY
  ansible-playbook site.yml >/dev/null
  echo "--- no-op re-run of site.yml, profiled (ansible.posix.profile_tasks; the ten longest tasks)"
  local recap
  recap=$(mktemp)
  ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks PROFILE_TASKS_TASK_OUTPUT_LIMIT=10 \
    measure "no-op site.yml re-run" ansible-playbook site.yml | tee "$recap" | sed -n '/^PLAY RECAP/,$p'
  grep -Eq 'localhost +: ok=[0-9]+ +changed=0 ' "$recap" || { echo "the re-run changed something"; exit 1; }
  rm -f "$recap"
  planb local down >/dev/null 2>&1
  measure "make demo (warm tools)" make demo
}

# Regions (docs/regions.md; BENCHMARKS.md "Regions"): the four stacks' start and idle memory, then the demo's runs.
regions_figures() {
  planb local down >/dev/null 2>&1 || true
  planb local down --regions >/dev/null 2>&1 || true
  measure "local up --regions 3" planb local up --regions 3
  sleep 30
  echo "--- memory of the four idle stacks (the sum of Pss of every process started with a regions state directory)"
  python - <<'PY'
import os

total, count = 0, 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if b"/regions/" not in open(f"/proc/{pid}/environ", "rb").read():
            continue
        total += next(int(l.split()[1]) for l in open(f"/proc/{pid}/smaps_rollup") if l.startswith("Pss:"))
        count += 1
    except (OSError, StopIteration):
        continue
print(f"RESULT regions PSS                    {total / 1024 / 1024:7.2f} GiB   ({count} processes, idle, 30 s after up)")
PY
  planb local down --regions >/dev/null
  PLANB_DEMO_SCENARIO=regions PLANB_DEMO_REGIONS_RUNS=10 measure "regions demo, 10 runs" make demo
}

if [[ "${1:-all}" == regions ]]; then
  regions_figures
  echo "log: $log"
  exit 0
fi
if [[ "${1:-all}" == concurrent ]]; then  # the ladder's three columns on one capacity trace (BENCHMARKS.md)
  shift
  measure "ladder: sequential, concurrent, concurrent+save" python hack/bench_concurrent.py "$@"
  echo "log: $log"
  exit 0
fi
if [[ "${1:-all}" == dispatch ]]; then  # advice-ordered dispatch, the race and an oracle (BENCHMARKS.md, "Dispatch")
  shift
  measure "dispatch: advice-ordered, race, oracle" python hack/bench_dispatch.py --update BENCHMARKS.md "$@"
  echo "log: $log"
  exit 0
fi
if [[ "${1:-all}" == aot ]]; then  # the step compiled for each slice (BENCHMARKS.md, "Compiled for each slice")
  shift
  measure "aot: the step compiled for every TPU profile" python -m planb.build.aot --jobs 2 --update BENCHMARKS.md "$@"
  echo "log: $log"
  exit 0
fi
if [[ "${1:-all}" == loop ]]; then
  loop_figures
  echo "log: $log"
  exit 0
fi
measure "warm tool build" hack/build-tools.sh
loop_figures
measure "admission latency" python hack/bench_admission.py --jobs 200 --on-demand-slices 100 --dws-slices 100
if [[ -f hack/bench_training.py ]]; then
  measure "training step time" python hack/bench_training.py --rounds 8
fi
echo "log: $log"
