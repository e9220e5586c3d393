{{/*
The ClusterQueue's spec after its namespaceSelector, for the one queue (team empty) or for one team of
queues.teams, whose quotas replace the plans' (a plan the team has no quota on: 0, borrowing only).
*/}}
{{- define "planb.clusterQueueBody" }}
{{- $team := .team }}
{{- with .root }}
{{- $q := .Values.queues }}
{{- $res := .Values.accelerator.resource }}
{{- $ladder := include "planb.ladder" . | fromJsonArray }}
{{- $dwsRungs := include "planb.dwsRungs" . | fromJsonArray }}
{{- $concurrent := eq $q.ladderMode "concurrent" }}
{{- $cpuQuota := $q.quotas.defaultCpu }}
{{- if $team }}{{ $cpuQuota = index ($team.quotas | default (dict)) $q.flavors.cpu | default $q.quotas.defaultCpu }}{{ end }}
  {{- if $concurrent }}
  # Kueue's ConcurrentAdmission (feature gate ConcurrentAdmission; kueue apis/kueue/v1beta2/
  # clusterqueue_types.go ConcurrentAdmissionPolicy): one variant of each Workload per flavor below,
  # all pursued at once; the first admitted runs the job, and with TryPreferredFlavors a more
  # preferred variant admitted later migrates it (pkg/scheduler/scheduler.go issueMigration).
  concurrentAdmissionPolicy:
    migration:
      mode: {{ $q.concurrentAdmission.migrationMode }}
      {{- with $q.concurrentAdmission.lastAcceptableFlavor }}
      constraints:
        lastAcceptableFlavorName: {{ . }}
      {{- end }}
  {{- end }}
  resourceGroups:
    - coveredResources: ["cpu", "memory", {{ $res | quote }}]
      {{- if $concurrent }}
      # Most preferred first. No CPU flavor: Kueue holds every PodSet of a variant to the variant's
      # one flavor (pkg/workload/concurrentadmission IsFlavorAllowedForVariant), so heads and
      # submitters run on the plan the job runs on, within that plan's quota.
      flavors:
      {{- else }}
      # Kueue tries the flavors in this order: the first that fits the quota wins.
      flavors:
        - name: {{ $q.flavors.cpu }}
          resources:
            - name: cpu
              nominalQuota: {{ include "planb.quantity" $cpuQuota.cpu }}
            - name: memory
              nominalQuota: {{ include "planb.quantity" $cpuQuota.memory }}
            - name: {{ $res | quote }}
              nominalQuota: 0
      {{- end }}
        {{- range $ladder }}
        {{- $quota := .quota }}
        {{- $owned := true }}
        {{- if $team }}
        {{- $owned = hasKey ($team.quotas | default (dict)) .name }}
        {{- $quota = index ($team.quotas | default (dict)) .name | default (dict "cpu" 0 "memory" 0 "accelerator" 0) }}
        {{- /* Kueue's ClusterQueue needs a nominalQuota for every covered resource of a flavor (the API server
        refuses the install after the render otherwise): a plan's quota without chips is refused here, by name. */}}
        {{- if not (hasKey $quota "accelerator") }}
        {{- fail (printf "queues.teams: team %s's quota on plan %s has no accelerator (its chips there); give it, 0 to let the team only borrow on that plan" $team.name .name) }}
        {{- end }}
        {{- end }}
        - name: {{ .name }}
          resources:
            - name: cpu
              nominalQuota: {{ include "planb.quantity" $quota.cpu }}
              {{- include "planb.teamLimits" (dict "team" $team "key" "cpu" "owned" $owned) }}
            - name: memory
              nominalQuota: {{ include "planb.quantity" $quota.memory }}
              {{- include "planb.teamLimits" (dict "team" $team "key" "memory" "owned" $owned) }}
            - name: {{ $res | quote }}
              nominalQuota: {{ include "planb.quantity" $quota.accelerator }}
              {{- include "planb.teamLimits" (dict "team" $team "key" "accelerator" "owned" $owned) }}
        {{- end }}
  {{- if $dwsRungs }}
  admissionChecksStrategy:
    admissionChecks:
      - name: {{ .Values.dws.admissionCheck }}
        onFlavors: [{{ join ", " $dwsRungs }}]
  {{- end }}
{{- end }}
{{- end }}

{{/*
A team's borrowingLimit and lendingLimit of one resource (key: cpu, memory or accelerator) on each plan's
flavor, when the team sets them (queues.teams[].borrowingLimit, .lendingLimit). Kueue: borrowingLimit is
how much of the cohort's unused quota this ClusterQueue may use beyond its nominalQuota (0: it never
borrows; absent: no limit), lendingLimit how much of its nominalQuota others in the cohort may borrow
(absent: all of it), rendered only on the plans the team has quota on, since Kueue refuses a
lendingLimit above the nominalQuota (pkg/webhooks/clusterqueue_webhook.go validateLendingLimit); kueue apis/kueue/v1beta2/clusterqueue_types.go ResourceQuota.
*/}}
{{- define "planb.teamLimits" }}
{{- $key := .key }}
{{- $owned := .owned }}
{{- with .team }}
{{- if hasKey (.borrowingLimit | default (dict)) $key }}
              borrowingLimit: {{ include "planb.quantity" (index .borrowingLimit $key) }}
{{- end }}
{{- if and $owned (hasKey (.lendingLimit | default (dict)) $key) }}
              lendingLimit: {{ include "planb.quantity" (index .lendingLimit $key) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
queues.teams: a ClusterQueue per team in the cohort queues.cohort, a LocalQueue queues.localQueue.name
(and the shared job ServiceAccount) in each of its namespaces, and the WorkloadPriorityClasses that jobs
name with job.priority.
*/}}
{{- define "planb.teamQueues" }}
{{- $q := .Values.queues }}
{{- $seen := dict }}
{{- range $t := $q.teams }}
{{- range $ns := $t.namespaces }}
{{- if hasKey $seen $ns }}
{{- fail (printf "queues.teams: namespace %s is in teams %s and %s; a namespace has one LocalQueue %s, so one team" $ns (get $seen $ns) $t.name $q.localQueue.name) }}
{{- end }}
{{- $_ := set $seen $ns $t.name }}
{{- end }}
{{- end }}
{{- range $team := $q.teams }}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: {{ $team.name }}
  labels:
    {{- include "planb.labels" $ | nindent 4 }}
    planb.dev/team: {{ $team.name }}
  {{- with include "planb.queueAnnotations" $ }}{{ . | nindent 2 }}{{ end }}
spec:
  # The teams' ClusterQueues share one cohort: a team may use another's unused quota (borrowing),
  # within borrowingLimit and lendingLimit (kueue apis/kueue/v1beta2/clusterqueue_types.go cohortName).
  cohortName: {{ $q.cohort }}
  # Only the team's namespaces' LocalQueues may use its quota.
  namespaceSelector:
    matchExpressions:
      - key: kubernetes.io/metadata.name
        operator: In
        values: {{ toJson $team.namespaces }}
  # Kueue's ClusterQueuePreemption (clusterqueue_types.go): reclaimWithinCohort, whether a pending
  # job of this team may preempt other teams' jobs that borrow from the cohort to get its own
  # nominalQuota back (Never, LowerPriority, Any); withinClusterQueue, whether it may preempt its own
  # team's jobs of lower priority (Never, LowerPriority, LowerOrNewerEqualPriority).
  preemption:
    reclaimWithinCohort: {{ $q.preemption.reclaimWithinCohort }}
    withinClusterQueue: {{ $q.preemption.withinClusterQueue }}
  {{- include "planb.clusterQueueBody" (dict "root" $ "team" $team) }}
{{- range $ns := $team.namespaces }}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: {{ $q.localQueue.name }}
  namespace: {{ $ns }}
  labels:
    {{- include "planb.labels" $ | nindent 4 }}
    planb.dev/team: {{ $team.name }}
  {{- with include "planb.queueAnnotations" $ }}{{ . | nindent 2 }}{{ end }}
spec:
  clusterQueue: {{ $team.name }}
{{- with $q.jobServiceAccount }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ . | quote }}
  namespace: {{ $ns }}
  labels:
    {{- include "planb.labels" $ | nindent 4 }}
  {{- with include "planb.queueAnnotations" $ }}{{ . | nindent 2 }}{{ end }}
{{- end }}
{{- end }}
{{- end }}
{{- range $q.priorityClasses }}
---
# Kueue's WorkloadPriorityClass (apis/kueue/v1beta2/workloadpriorityclass_types.go): a job's label
# kueue.x-k8s.io/priority-class names it (job.priority); higher value, admitted first and may preempt.
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: {{ .name }}
  labels:
    {{- include "planb.labels" $ | nindent 4 }}
  {{- with include "planb.queueAnnotations" $ }}{{ . | nindent 2 }}{{ end }}
value: {{ int64 .value }}
description: {{ .description | quote }}
{{- end }}
{{- end }}

{{/*
Every ClusterQueue the queues release renders (JSON list): each team's with queues.teams, else queues.clusterQueue.
The failover controller acts on Workloads these admitted and on no other (its --cluster-queues).
*/}}
{{- define "planb.clusterQueues" -}}
{{- $names := list -}}
{{- range .Values.queues.teams }}{{ $names = append $names .name }}{{ end -}}
{{- if not $names }}{{ $names = list .Values.queues.clusterQueue }}{{ end -}}
{{- toJson $names -}}
{{- end -}}

{{/*
The namespaces of the LocalQueues the queues release renders (JSON list): every team's with queues.teams, else
queues.localQueue.namespace.
*/}}
{{- define "planb.localQueueNamespaces" -}}
{{- $names := list -}}
{{- range .Values.queues.teams }}{{ $names = concat $names .namespaces }}{{ end -}}
{{- if not $names }}{{ $names = list .Values.queues.localQueue.namespace }}{{ end -}}
{{- toJson $names -}}
{{- end -}}

{{/*
The most accelerator chips each team's job can ever hold on each plan, for the record job releases read (the
KubeRay record's key `teams`, JSON: namespace -> {team, plans: {flavor: chips}}): its nominalQuota, plus what it
may borrow, its borrowingLimit when set, else the rest of the cohort's lendable chips there (each other team's
lendingLimit on a plan it has quota on, else its nominalQuota). Chips only: Kueue's quantities of CPU and memory
are not numbers a template adds up.
*/}}
{{- define "planb.teamsRecord" -}}
{{- $q := .Values.queues }}
{{- $ladder := include "planb.ladder" . | fromJsonArray }}
{{- $out := dict }}
{{- range $team := $q.teams }}
{{- $plans := dict }}
{{- range $ladder }}
{{- $plan := .name }}
{{- $own := int (dig $plan "accelerator" 0 ($team.quotas | default dict)) }}
{{- $borrow := 0 }}
{{- if hasKey ($team.borrowingLimit | default dict) "accelerator" }}
{{- $borrow = int $team.borrowingLimit.accelerator }}
{{- else }}
{{- range $other := $q.teams }}
{{- if ne $other.name $team.name }}
{{- $nominal := int (dig $plan "accelerator" 0 ($other.quotas | default dict)) }}
{{- $lends := $nominal }}
{{- if and (hasKey ($other.quotas | default dict) $plan) (hasKey ($other.lendingLimit | default dict) "accelerator") }}
{{- $lends = min $nominal (int $other.lendingLimit.accelerator) }}
{{- end }}
{{- $borrow = add $borrow $lends }}
{{- end }}
{{- end }}
{{- end }}
{{- $_ := set $plans $plan (add $own $borrow) }}
{{- end }}
{{- range $team.namespaces }}{{ $_ := set $out . (dict "team" $team.name "plans" $plans) }}{{ end }}
{{- end }}
{{- toJson $out -}}
{{- end -}}

{{/*
A training job refused at install when its team can never hold it: its slices' chips (job.workers.replicas x
accelerator.hostsPerSlice x chipsPerHost) above what the team's ClusterQueue can ever hold on every plan, nominal
plus borrowable (the record's `teams`, planb.teamsRecord). planb's policy: refused here, because Kueue would keep
such a job pending for ever without saying why in the team's terms. Without a record of the job's namespace (no
teams, helm template, job.kuberayRecord="") nothing is checked.
*/}}
{{- define "planb.validateTeamQuota" -}}
{{- if and (eq .Values.mode "job") (not .Values.job.smoke.enabled) -}}
{{- $rec := include "planb.kuberayRecord" . | fromJson -}}
{{- $mine := get (fromJson (default "{}" $rec.teams)) .Release.Namespace -}}
{{- if $mine -}}
{{- $acc := .Values.accelerator -}}
{{- $need := mul (int .Values.job.workers.replicas) (int $acc.hostsPerSlice) (int $acc.chipsPerHost) -}}
{{- $best := 0 -}}{{- $where := "" -}}
{{- range $plan, $chips := $mine.plans -}}
{{- if gt (int $chips) $best }}{{ $best = int $chips }}{{ $where = $plan }}{{ end -}}
{{- end -}}
{{- if gt $need $best -}}
{{- fail (printf "this job asks for %d %s (job.workers.replicas %v x %v hosts x %v per host) but team %s (namespace %s) can ever hold at most %d on any plan (%s: its quota plus what it may borrow; the queues release's record %s), %d too many, so Kueue would never admit it. Fix: ask for at most %d (fewer job.workers.replicas), or have the platform team raise team %s's quota or borrowingLimit (queues.teams, site.yml's planb_teams)" $need $acc.resource .Values.job.workers.replicas $acc.hostsPerSlice $acc.chipsPerHost $mine.team .Release.Namespace $best (default "no plan" $where) .Values.job.kuberayRecord (sub $need $best) $best $mine.team) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
