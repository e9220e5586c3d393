#!/usr/bin/env bash
# `make demo`: the seed's whole flow on this machine. make has already set up the Python
# environment and the pinned tools (make setup); this script runs the flow itself and exits 0
# only if job 1 is admitted on plan A (on-demand) and job 2 on plan B (dws) after its
# ProvisioningRequest was provisioned. Each scenario starts by taking down a stack left from an earlier
# run (any scenario, or the tests), so scenarios run back to back in any order; the stack is left up
# afterwards to explore (make down stops it).
# PLANB_DEMO_SCENARIO=stockout: plan A has no machines (the capacity simulator's stockout) and the
# stockout-aware failover is on as in every scenario but concurrent (the local inventory's
# planb_failover_after_minutes, 0.25 = 15 s; PLANB_DEMO_FAILOVER_MINUTES passes another): job-1 is admitted
# on plan A, moved to plan B when its pods are not ready in time, and admitted there; exits 0 only if that
# move happened.
# PLANB_DEMO_SCENARIO=ladder: the four-rung capacity ladder (docs/capacity-ladder.md):
# plans reserved (a reservation the emulator holds), on-demand, dws and spot, one slice each. Jobs 1-3
# must not be preempted (job.avoidPlans=[spot]) and fill the reservation, then on-demand, then DWS;
# job-4 is preemptible and lands on Spot. Exits 0 only if each lands on its plan.
# PLANB_DEMO_SCENARIO=concurrent: the same four rungs with planb_ladder_mode=concurrent (Kueue's
# ConcurrentAdmission): a job starts on Spot at once, migrates to dws when DWS has room and to the
# reservation when it frees, train.py resuming from its newest checkpoint each time
# (hack/demo_concurrent.py tells the story and exits 0 only if every step landed).
# PLANB_DEMO_SCENARIO=regions: a MultiKueue manager and three regions, each a local stack (planb local up --regions
# 3, docs/regions.md); two regions stocked out, the third grants, the job runs there (hack/demo_regions.py;
# PLANB_DEMO_REGIONS_RUNS=10 repeats it with the regions shuffled). planb local down --regions stops them.
# PLANB_DEMO_SCENARIO=advice: the same three regions with advice-ordered dispatch (planb regions keep --dispatch, the
# manager's Kueue given planb_multikueue_dispatcher; docs/regions.md) of the TPU job, which Google's advice.capacity
# does not advise on ("you can't view the availability of TPUs") and the keeper does not ask about: a first job, the
# ledger empty, is offered to two regions and runs in the one that grants first; a second goes to that region alone
# (the ledger's best) with one ProvisioningRequest, and planb status --capacity shows each pair ordered by the ledger,
# unasked (hack/demo_advice.py); exits 0 only if so, and stops the four stacks it started.
# Every other scenario ends by drawing its jobs' timelines (planb status JOB --timeline) into
# .state/demo-<scenario>-<job>.svg and printing their paths.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/bin:$PWD/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$PWD/ansible.cfg"
PROFILE=${PLANB_DEMO_PROFILE:-tpu-v6e-4x4}
TIMEOUT=${PLANB_DEMO_TIMEOUT:-240}
SCENARIO=${PLANB_DEMO_SCENARIO:-quota}
FAILOVER_MINUTES=${PLANB_DEMO_FAILOVER_MINUTES:-0.25}
case "$SCENARIO" in
  quota) site_args=() ;;
  stockout) site_args=(${PLANB_DEMO_FAILOVER_MINUTES:+-e "planb_failover_after_minutes=$FAILOVER_MINUTES"}) ;;
  ladder|concurrent)
    LADDER_VARS=$PWD/.state/demo-ladder.json
    mkdir -p "$PWD/.state"
    cat > "$LADDER_VARS" <<'JSON'
{"planb_plans": [
  {"name": "reserved", "kind": "reservation", "slices": 1, "nodepool": "reserved-pool",
   "reservation": "planb-demo-reservation"},
  {"name": "on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool"},
  {"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool"},
  {"name": "spot", "kind": "spot", "slices": 1, "nodepool": "spot-pool"}
]}
JSON
    site_args=(-e "@$LADDER_VARS")
    if [[ "$SCENARIO" == concurrent ]]; then site_args+=(-e planb_ladder_mode=concurrent); fi
    ;;
  regions)
    # The manager takes the single stack's ports: a stack left up from another scenario goes first.
    planb local down >/dev/null
    exec python hack/demo_regions.py
    ;;
  advice)
    planb local down >/dev/null
    exec python hack/demo_advice.py
    ;;
  *) echo "PLANB_DEMO_SCENARIO=$SCENARIO: use quota (the default), stockout, ladder, concurrent, regions or advice" >&2
     exit 2 ;;
esac

t0=$SECONDS
declare -a timings=()
phase_start=$SECONDS
phase_name=""
phase() {  # phase SHORT-NAME DESCRIPTION
  if [[ -n "$phase_name" ]]; then timings+=("$(printf '%-22s %4d s' "$phase_name" $((SECONDS - phase_start)))"); fi
  phase_name=$1
  phase_start=$SECONDS
  printf '\n=== %s: %s\n' "$1" "$2"
}

wait_quota_reserved() {  # wait_quota_reserved JOB: until Kueue reserved quota for the RayJob's Workload (60 s)
  local deadline=$((SECONDS + 60)) reserved
  while ((SECONDS < deadline)); do
    reserved=$(kubectl get workloads -n default -o jsonpath="{range .items[?(@.metadata.ownerReferences[0].name=='$1')]}{.status.conditions[?(@.type=='QuotaReserved')].status}{end}" 2>/dev/null || true)
    [[ "$reserved" == *True* ]] && return 0
    sleep 0.2
  done
  echo "[planb demo] Kueue reserved no quota for $1 within 60 s (see planb status)" >&2
  return 1
}

phase "1/5 local stack" "control plane, Kueue, KubeRay, GKE emulator, capacity simulator"
# One job's life on a time axis (planb status JOB --timeline, docs/pending-jobs.md): written to .state/, its path
# printed. A picture that cannot be drawn (matplotlib missing, say) is reported and does not fail the demo.
draw_timeline() {
  local picture="$PWD/.state/demo-$SCENARIO-$1.svg"
  mkdir -p "$PWD/.state"
  rm -f "$picture"
  planb status "$1" --timeline "$picture" >/dev/null || true
  if [[ -s "$picture" ]]; then
    echo "[planb demo] timeline of $1: $picture"
  else
    echo "[planb demo] no timeline of $1: see planb status $1 --timeline $picture" >&2
  fi
}

# Every scenario starts from a known state, whatever ran before (another scenario's jobs, pools, capacity
# switches or reservation, a test's stack): a stack that is here already is taken down first, with its
# local project, capacity settings and Ray payload settings.
if .venv/bin/python -c 'import sys; from planb.local.stack.stack import LocalStack; sys.exit(0 if LocalStack().state.exists() else 1)'; then
  echo "[planb demo] a local stack is here from an earlier run: 'planb local down' first, so this demo starts clean"
  planb local down
fi
# A regions scenario's stacks (planb local up --regions) hold this stack's ports: down too, when there.
planb local down --regions
# `up` runs in the background while site.yml starts: its longest part is the API server taking in the CRDs,
# which only the kueue play needs (that play's `planb local kueue` takes the stack's lock, so it waits for up to
# finish). site.yml starts once the control plane has written its kubeconfig: the GKE emulator then knows the
# cluster's address and CA for get-credentials.
up_log=$(mktemp -t planb-demo-up.XXXXXX)
planb local up >"$up_log" 2>&1 &
up_pid=$!
finish_up() {  # finish_up: wait for `up`, print its output, stop the demo if it failed
  local up_rc=0
  wait "$up_pid" || up_rc=$?
  sed 's/^/  (up) /' "$up_log"
  rm -f "$up_log"
  up_pid=""
  if ((up_rc != 0)); then echo "[planb demo] planb local up failed (exit $up_rc), see above" >&2; exit "$up_rc"; fi
}
local_kubeconfig=$(.venv/bin/python -c 'from planb import paths; print(paths.local_kubeconfig())')
deadline=$((SECONDS + 240))
until [[ -s "$local_kubeconfig" ]] && planb local gke-emulator status >/dev/null 2>&1; do
  if ! kill -0 "$up_pid" 2>/dev/null; then finish_up; break; fi  # up ended (a failure, or already up)
  ((SECONDS < deadline)) || { echo "[planb demo] the control plane did not come up in 240 s" >&2; exit 1; }
  sleep 0.2
done
echo "[planb demo] the control plane is up; site.yml starts while 'planb local up' installs the CRDs, Kueue and KubeRay"

if [[ "$SCENARIO" == ladder || "$SCENARIO" == concurrent ]]; then
  # The reservation the reserved plan's pool consumes, as Google makes it for one slice of the profile: an
  # aggregate reservation of TPU chips (BATCH for a multi-host slice) for a TPU profile, VMs of its machine type
  # for a GPU one.
  planb local gke-emulator reservation create planb-demo-reservation --for-profile "$PROFILE" --slices 1 \
    --zone "${ZONE:-us-east5-b}" || echo "(the reservation exists already)"
fi

phase "2/5 site.yml" "ansible-playbook site.yml: cluster, plan A and plan B pools (one per slice), Kueue, queues"
# The queues and pools of the profile the jobs below are rendered for: the flavors select its shape.
ansible-playbook site.yml -e "planb_profile=$PROFILE" "${site_args[@]}"
if [[ -n "$up_pid" ]]; then finish_up; fi
planb local versions
KUBECONFIG=$(.venv/bin/python -c 'from planb import paths; import sys; print(paths.state_dir() / "gke" / "tpu-cluster.kubeconfig")')
[[ -f "$KUBECONFIG" ]] || KUBECONFIG=$PWD/.state/local/kubeconfig
export KUBECONFIG
# The stack stays up to explore (the header); say where it is and how it goes, whether the demo passed or not.
left_up() {
  echo "[planb demo] the local stack stays up to explore: kubectl --kubeconfig $KUBECONFIG get rayjobs,workloads;" \
    "'make down' stops it"
}

if [[ "$SCENARIO" == concurrent ]]; then
  phase "3/5 concurrent" "job-c starts on Spot now and migrates up as better rungs free (real train.py)"
  rc=0
  .venv/bin/python hack/demo_concurrent.py --kubeconfig "$KUBECONFIG" --profile "$PROFILE" || rc=$?
  timings+=("$(printf '%-22s %4d s' "$phase_name" $((SECONDS - phase_start)))")
  printf '\nphase timings:\n'
  printf '  %s\n' "${timings[@]}"
  printf '  %-22s %4d s\n' "total" $((SECONDS - t0))
  left_up
  if [[ $rc -ne 0 ]]; then echo "demo FAILED: the concurrent ladder did not do what it should (see above)" >&2; exit 1; fi
  echo "demo OK: job-c started on spot, migrated to dws and then to the reservation, resumed from checkpoint each time with at most the step in flight lost"
  exit 0
fi
if [[ "$SCENARIO" == stockout ]]; then
  phase "3/5 helm install" "stockout on plan A's pool, then job-1 (profile $PROFILE)"
  planb local capacity set --stockout on-demand-pool
  stockout_at=$SECONDS
  jobs=(job-1)
elif [[ "$SCENARIO" == ladder ]]; then
  phase "3/5 helm install" "job-1..3 never on Spot (job.avoidPlans=[spot]), then preemptible job-4 (profile $PROFILE)"
  jobs=(job-1 job-2 job-3 job-4)
else
  phase "3/5 helm install" "job-1 and job-2 (profile $PROFILE)"
  jobs=(job-1 job-2)
fi
for job in "${jobs[@]}"; do
  job_args=()
  if [[ "$SCENARIO" == ladder && "$job" != job-4 ]]; then job_args=(--set "job.avoidPlans={spot}"); fi
  if helm status "$job" >/dev/null 2>&1; then
    echo "$job already installed"
  else
    helm install "$job" charts/planb -f "charts/planb/values/$PROFILE.yaml" "${job_args[@]}"
  fi
  # Each job queues behind the one before it, as in the seed: the next is submitted once Kueue has reserved this
  # one's quota (its Workload's QuotaReserved condition), so the order never rests on creation timestamps.
  [[ "$job" == "${jobs[-1]}" ]] || wait_quota_reserved "$job"
done

rc=0
if [[ "$SCENARIO" == stockout ]]; then
  phase "4/5 failover" "wait for job-1 to move off plan A (no capacity) and be admitted on plan B (dws)"
  planb status --expect job-1=dws --timeout "$TIMEOUT" || rc=$?
  moved_after=$((SECONDS - stockout_at))
  # The move is recorded on the RayJob (annotation, Event) and shown by planb status as a MOVED line.
  planb status | grep -q '^MOVED default/job-1: moved to plan B' || rc=1
elif [[ "$SCENARIO" == ladder ]]; then
  phase "4/5 admission" "wait for job-1 on reserved, job-2 on on-demand, job-3 on dws (provisioned), job-4 on spot"
  planb status --expect job-1=reserved --expect job-2=on-demand --expect job-3=dws --expect job-4=spot \
    --timeout "$TIMEOUT" || rc=$?
else
  phase "4/5 admission" "wait for job-1 on plan A (on-demand), job-2 on plan B (dws, after provisioning)"
  planb status --expect job-1=on-demand --expect job-2=dws --timeout "$TIMEOUT" || rc=$?
fi

phase "5/5 status" "where each job landed (planb status), and each job's timeline in .state/"
planb status || true
for job in "${jobs[@]}"; do draw_timeline "$job"; done
timings+=("$(printf '%-22s %4d s' "$phase_name" $((SECONDS - phase_start)))")
printf '\nphase timings:\n'
printf '  %s\n' "${timings[@]}"
printf '  %-22s %4d s\n' "total" $((SECONDS - t0))
if [[ "$SCENARIO" == stockout && $rc -eq 0 ]]; then
  printf '  %-22s %4d s  (failover after %s min)\n' "stockout -> plan B" "$moved_after" "$FAILOVER_MINUTES"
fi
left_up
if [[ $rc -ne 0 ]]; then
  echo "demo FAILED: the jobs did not land as expected (see above)" >&2
  exit 1
fi
if [[ "$SCENARIO" == stockout ]]; then
  echo "demo OK: plan A had no capacity; job-1 moved to plan B (dws) and was admitted there"
  exit 0
fi
if [[ "$SCENARIO" == ladder ]]; then
  echo "demo OK: job-1 on the reservation, job-2 on on-demand, job-3 on dws, preemptible job-4 on spot"
  exit 0
fi
echo "demo OK: job-1 on plan A (on-demand), job-2 on plan B (dws)"
