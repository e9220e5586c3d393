{{/* Chart name. */}}
{{- define "planb.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Base name of a job's objects: the release name (or fullnameOverride). KubeRay names the RayCluster
and its services after the RayJob, so it must stay within 47 characters; refused, not truncated,
so that two releases never end up with the same names.
*/}}
{{- define "planb.fullname" -}}
{{- $name := .Values.fullnameOverride | default .Release.Name -}}
{{- if gt (len $name) 47 -}}
{{- fail (printf "release name %q is %d characters long: a job's RayJob is named after it and KubeRay allows at most 47; use a shorter release name or set fullnameOverride" $name (len $name)) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{- define "planb.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels: what identifies this release's objects. */}}
{{- define "planb.selectorLabels" -}}
app.kubernetes.io/name: {{ include "planb.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Common labels. */}}
{{- define "planb.labels" -}}
helm.sh/chart: {{ include "planb.chart" . }}
{{ include "planb.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: {{ .Values.mode }}
planb.dev/profile: {{ .Values.profile | quote }}
{{- end -}}

{{/* Name of the job's ConfigMap holding the training script. */}}
{{- define "planb.scriptConfigMap" -}}
{{- printf "%s-train-script" (include "planb.fullname" .) -}}
{{- end -}}

{{/*
The profile's accelerator node labels, as GKE sets them on every node of a TPU slice or GPU pool:
the accelerator workers' nodeSelector (job mode), and what every plan's ResourceFlavor selects
beside the plan label (queues mode, planb.ladder), so that the two always name the same shape.
*/}}
{{- define "planb.profileLabels" -}}
{{- include "planb.workerNodeSelector" . -}}
{{- end -}}

{{/* Node selector of the accelerator workers, from GKE's node labels. */}}
{{- define "planb.workerNodeSelector" -}}
{{- if eq .Values.accelerator.kind "tpu" -}}
cloud.google.com/gke-tpu-accelerator: {{ .Values.accelerator.gkeAccelerator }}
cloud.google.com/gke-tpu-topology: {{ .Values.accelerator.topology | quote }}
{{- else -}}
cloud.google.com/gke-accelerator: {{ .Values.accelerator.gkeAccelerator }}
{{- end -}}
{{- end -}}

{{/*
A quantity as Kubernetes writes it. Helm reads YAML numbers as floats and would print 1000000000
as 1e+09; whole numbers are printed as integers.
*/}}
{{- define "planb.quantity" -}}
{{- if and (kindIs "float64" .) (eq (floor .) .) -}}
{{- int64 . -}}
{{- else -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{/* Ray Train workers: one per accelerator host of every slice. */}}
{{- define "planb.numWorkers" -}}
{{- mul .Values.job.workers.replicas .Values.accelerator.hostsPerSlice -}}
{{- end -}}

{{/* The training script's configuration (see training/planb_train/config.py), set on head and workers. */}}
{{- define "planb.trainEnv" -}}
- name: PLANB_MODEL
  value: {{ .Values.job.training.model | quote }}
- name: PLANB_NUM_WORKERS
  value: {{ include "planb.numWorkers" . | quote }}
- name: PLANB_ACCELERATOR
  value: {{ .Values.accelerator.kind | quote }}
- name: PLANB_CHIPS_PER_WORKER
  value: {{ .Values.accelerator.chipsPerHost | quote }}
- name: PLANB_CPUS_PER_WORKER
  value: {{ .Values.job.training.cpusPerWorker | toString | quote }}
- name: PLANB_TOPOLOGY
  value: {{ .Values.accelerator.topology | quote }}
- name: PLANB_ACCELERATOR_TYPE
  value: {{ .Values.accelerator.rayAcceleratorType | quote }}
- name: PLANB_EPOCHS
  value: {{ .Values.job.training.epochs | quote }}
- name: PLANB_CHECKPOINT_DIR
  value: {{ include "planb.checkpointDir" . | quote }}
- name: PLANB_CHECKPOINT_EVERY
  value: {{ .Values.job.training.checkpointEvery | quote }}
- name: PLANB_CHECKPOINT_BUDGET
  value: {{ .Values.job.training.checkpointBudget | toString | quote }}
- name: PLANB_RUN_ID
  value: {{ printf "%s/%s" .Release.Namespace .Release.Name | quote }}
- name: PLANB_RESUME
  value: {{ .Values.job.training.resume | quote }}
{{- with .Values.job.training.transformer }}
- name: PLANB_D_MODEL
  value: {{ .dModel | quote }}
- name: PLANB_NUM_LAYERS
  value: {{ .numLayers | quote }}
- name: PLANB_NUM_HEADS
  value: {{ .numHeads | quote }}
- name: PLANB_SEQ_LEN
  value: {{ .seqLen | quote }}
- name: PLANB_BATCH_PER_DEVICE
  value: {{ .batchPerDevice | quote }}
- name: PLANB_VOCAB_SIZE
  value: {{ .vocabSize | quote }}
- name: PLANB_REMAT
  value: {{ .remat | quote }}
- name: PLANB_DTYPE
  value: {{ .dtype | quote }}
- name: PLANB_ATTENTION
  value: {{ .attention | quote }}
- name: PLANB_MESH
  value: {{ .mesh | default "" | quote }}
- name: PLANB_SCAN_LAYERS
  value: {{ ternary "1" "0" (.scanLayers | default false) | quote }}
{{- end }}
- name: PLANB_COMPILATION_CACHE_DIR
  value: {{ include "planb.compilationCacheDir" . | quote }}
- name: PLANB_NOTICE_FILE
  value: {{ include "planb.noticeFile" . | quote }}
{{- end -}}

{{/*
JAX's persistent compilation cache: job.training.compilationCacheDir, or the release's own
<checkpointDir>/jax_cache/<namespace>/<release name> (no namespace is named jax_cache: a namespace name has no "_",
so it never meets planb.checkpointDir), or empty. A cache entry is a compiled program the job loads and runs:
whoever can write the folder runs code in the job, so no release shares another's by default.
*/}}
{{- define "planb.compilationCacheDir" -}}
{{- if .Values.job.training.compilationCacheDir -}}
{{- .Values.job.training.compilationCacheDir -}}
{{- else if .Values.job.training.checkpointDir -}}
{{- printf "%s/jax_cache/%s/%s" (trimSuffix "/" .Values.job.training.checkpointDir) .Release.Namespace .Release.Name -}}
{{- end -}}
{{- end -}}

{{/*
The directory of the stop-notice file: an emptyDir volume (planb.noticeVolume) mounted in the head and each worker,
so the file is the pod's own. A fixed path in a shared directory (/tmp) would let one job's notice stop another.
*/}}
{{- define "planb.noticeDir" -}}
/var/run/planb-notice
{{- end -}}

{{/*
"true" when the job runs the team's own program (job.command, its code inside job.image: docs/your-code.md), "" when
it runs planb's script from the release's training-files ConfigMap (the training job by default, and the smoke job,
whose script smoke.py is always planb's). Without a ConfigMap script the chart renders neither that ConfigMap, nor
its mounts at /app, nor the `helm test` pod that checks it.
*/}}
{{- define "planb.ownProgram" -}}
{{- if and .Values.job.command (not .Values.job.smoke.enabled) }}true{{ end -}}
{{- end -}}

{{/*
The RayJob's spec.entrypoint: job.command with each item quoted for the shell Ray's job manager runs an entrypoint
with (Ray 2.53.0's python/ray/dashboard/modules/job/job_supervisor.py, JobSupervisor._exec_entrypoint, starts it with
subprocess.Popen(..., shell=True)): an item of
only [A-Za-z0-9_./=:,@%+-] as it is, any other in single quotes (a quote inside as '"'"'); else job.entrypoint.
*/}}
{{- define "planb.entrypoint" -}}
{{- if include "planb.ownProgram" . -}}
{{- $quoted := list -}}
{{- range .Values.job.command -}}
{{- if regexMatch "^[A-Za-z0-9_./=:,@%+-]+$" . -}}
{{- $quoted = append $quoted . -}}
{{- else -}}
{{- $quoted = append $quoted (printf "'%s'" (replace "'" "'\"'\"'" .)) -}}
{{- end -}}
{{- end -}}
{{- join " " $quoted -}}
{{- else -}}
{{- .Values.job.entrypoint -}}
{{- end -}}
{{- end -}}

{{/* The pod's own directory for the stop-notice file (planb.noticeDir): two small files, kept in memory. */}}
{{- define "planb.noticeVolume" -}}
- name: stop-notice
  emptyDir:
    medium: Memory
    sizeLimit: 1Mi
{{- end -}}

{{/*
The stop-notice file train.py polls at each step boundary (PLANB_NOTICE_FILE), in planb.noticeDir: the workers'
preStop hook creates it in the pod and waits for train.py's <file>.saved, since the training loop runs in a Ray
worker's thread, which the pod's SIGTERM never reaches.
*/}}
{{- define "planb.noticeFile" -}}
{{- printf "%s/stop" (include "planb.noticeDir" .) -}}
{{- end -}}

{{/*
The release's own checkpoint directory: <job.training.checkpointDir>/<namespace>/<release name>, or
empty (no checkpoints). Scoped per release so that a second release with the same values neither
resumes nor prunes the first one's checkpoints; train.py also checks the run it finds recorded there.
*/}}
{{- define "planb.checkpointDir" -}}
{{- with .Values.job.training.checkpointDir -}}
{{- printf "%s/%s/%s" (trimSuffix "/" .) $.Release.Namespace $.Release.Name -}}
{{- end -}}
{{- end -}}

{{/*
Checks across values that a JSON schema cannot express; each failure names the values to change.
*/}}
{{- define "planb.validate" -}}
{{- $acc := .Values.accelerator -}}
{{- $want := ternary "google.com/tpu" "nvidia.com/gpu" (eq $acc.kind "tpu") -}}
{{- if ne $acc.resource $want -}}
{{- fail (printf "accelerator.resource %q does not match accelerator.kind %q: a %s profile requests %s (regenerate the values with `planb values PROFILE`)" $acc.resource $acc.kind $acc.kind $want) -}}
{{- end -}}
{{- if and (eq $acc.kind "tpu") (not $acc.topology) -}}
{{- fail "accelerator.topology is empty for a TPU profile: set the slice topology (e.g. 4x4), which the workers' node selector and PLANB_TOPOLOGY need" -}}
{{- else if and (eq $acc.kind "gpu") $acc.topology -}}
{{- fail (printf "accelerator.topology %q is set for a GPU profile: GPUs have no slice topology, leave it empty" $acc.topology) -}}
{{- end -}}
{{- if and (eq $acc.kind "tpu") $acc.topology -}}
{{- include "planb.validateTpuSlice" . -}}
{{- end -}}
{{- if and .Values.job.elastic .Values.dws.enabled -}}
{{- fail "job.elastic=true cannot be combined with dws.enabled=true: Kueue v0.19 does not support elastic jobs (ElasticJobsViaWorkloadSlices) with a ProvisioningRequest admission check, since a ProvisioningRequest cannot be resized and a scale-up would need a second request for the difference (kubernetes-sigs/kueue#6829). Set dws.enabled=false (plan A only) for an elastic job, or job.elastic=false." -}}
{{- end -}}
{{- if and (eq .Values.mode "job") (eq .Values.job.rayAuth "token") (semverCompare "<2.52.0" .Values.job.rayVersion) -}}
{{- fail (printf "job.rayAuth=token needs Ray 2.52.0 or later, but job.rayVersion is %s: KubeRay refuses token authentication on older Ray. Use an image of Ray 2.52.0 or later and set job.rayVersion to its version, or set job.rayAuth=disabled" .Values.job.rayVersion) -}}
{{- end -}}
{{- include "planb.validateKuberay" . -}}
{{- include "planb.validateTeamQuota" . -}}
{{- if and (eq .Values.mode "job") (hasSuffix "-failover" .Values.job.serviceAccountName) -}}
{{- fail (printf "job.serviceAccountName=%s names the failover controller's ServiceAccount (the queues release's <release>-failover): planb's policy: a job never runs as the controller, because the controller may patch every Workload and RayJob of its namespaces; use the job's own ServiceAccount (job.createServiceAccount=true with another name)" .Values.job.serviceAccountName) -}}
{{- end -}}
{{- if and .Values.job.elastic (lt (int .Values.job.workers.maxReplicas) (int .Values.job.workers.replicas)) -}}
{{- fail (printf "job.workers.maxReplicas (%d) is below job.workers.replicas (%d): an elastic job scales between them" (int .Values.job.workers.maxReplicas) (int .Values.job.workers.replicas)) -}}
{{- end -}}
{{- end -}}


{{/*
A TPU slice the values describe must exist on GKE, or its workers pend forever. Which topologies a
TPU generation forms, and from hosts of how many chips, is a catalog fact: the chart reads it from
files/tpu-topologies.yaml, which `make values` generates from src/planb/catalog (a test fails when
it is stale), so no second hand-typed list can drift. A check of the 2D/3D shape alone would pass
4x5 or 2x2x3, which no TPU forms. Checked in order: the accelerator label, the topology's
dimensions, the topology, chips per host, then the arithmetic chips = hostsPerSlice x chipsPerHost.
*/}}
{{- define "planb.validateTpuSlice" -}}
{{- $acc := .Values.accelerator -}}
{{- $fix := "or use a values file from charts/planb/values/ (`planb values PROFILE` writes one for any catalog profile)" -}}
{{- $table := .Files.Get "files/tpu-topologies.yaml" | fromYaml -}}
{{- if or (not $table) (hasKey $table "Error") -}}
{{- fail "files/tpu-topologies.yaml is missing or unreadable in the chart: regenerate it with `make values`" -}}
{{- end -}}
{{- $tpu := get $table $acc.gkeAccelerator -}}
{{- if not $tpu -}}
{{- fail (printf "accelerator.gkeAccelerator=%s is not a TPU accelerator label GKE sets, so no node would match the workers: set it to one of %s %s" $acc.gkeAccelerator (keys $table | sortAlpha | join ", ") $fix) -}}
{{- end -}}
{{- $valid := join ", " $tpu.topologies -}}
{{- $parts := splitList "x" $acc.topology -}}
{{- if ne (len $parts) (int $tpu.dimensions) -}}
{{- fail (printf "accelerator.topology=%s is %dD but TPU %s (accelerator.gkeAccelerator=%s) forms %dD slices: set topology to one of %s %s" $acc.topology (len $parts) $tpu.generation $acc.gkeAccelerator (int $tpu.dimensions) $valid $fix) -}}
{{- end -}}
{{- $machines := get $tpu.chipsPerHost $acc.topology -}}
{{- if not $machines -}}
{{- fail (printf "accelerator.topology=%s is not a TPU %s slice shape (accelerator.gkeAccelerator=%s), so no node pool would match it: set topology to one of %s %s" $acc.topology $tpu.generation $acc.gkeAccelerator $valid $fix) -}}
{{- end -}}
{{- $chips := 1 -}}
{{- range $parts -}}
{{- $chips = mul $chips (atoi .) -}}
{{- end -}}
{{- $chipsPerHost := int $acc.chipsPerHost -}}
{{- $hosted := list -}}
{{- $settings := list -}}
{{- $fits := false -}}
{{- range $machine, $n := $machines -}}
{{- $hosted = append $hosted (printf "%d chips (%s)" (int $n) $machine) -}}
{{- $settings = append $settings (printf "chipsPerHost to %d and hostsPerSlice to %d" (int $n) (div $chips (int $n))) -}}
{{- if eq (int $n) $chipsPerHost -}}
{{- $fits = true -}}
{{- end -}}
{{- end -}}
{{- if not $fits -}}
{{- fail (printf "accelerator.chipsPerHost=%d but TPU %s forms accelerator.topology=%s from hosts of %s: set %s, %s" $chipsPerHost $tpu.generation $acc.topology (join " or " $hosted) (join ", or " $settings) $fix) -}}
{{- end -}}
{{- $hosts := div $chips $chipsPerHost -}}
{{- if ne (int $acc.hostsPerSlice) (int $hosts) -}}
{{- fail (printf "accelerator.hostsPerSlice=%d but accelerator.topology=%s has %d chips = %d hosts x accelerator.chipsPerHost=%d: set hostsPerSlice to %d %s" (int $acc.hostsPerSlice) $acc.topology (int $chips) (int $hosts) $chipsPerHost (int $hosts) $fix) -}}
{{- end -}}
{{- end -}}

{{/*
The ClusterQueue's namespaceSelector: queues.namespaceSelector, or when it is empty the LocalQueue's
namespace alone. Kueue reads an empty selector as every namespace, so none is ever rendered.
*/}}
{{- define "planb.namespaceSelector" -}}
{{- $sel := .Values.queues.namespaceSelector -}}
{{- if or $sel.matchLabels $sel.matchExpressions -}}
{{- toYaml $sel -}}
{{- else -}}
matchLabels:
  kubernetes.io/metadata.name: {{ .Values.queues.localQueue.namespace }}
{{- end -}}
{{- end -}}

{{/* Metadata annotations of every queue object: `helm uninstall` keeps them (queues.keepOnUninstall). */}}
{{- define "planb.queueAnnotations" -}}
{{- include "planb.queueAnnotationsWith" (dict "root" . "extra" (dict)) -}}
{{- end -}}

{{/*
The same, with `extra` annotations beside the keep (a reservation plan's flavor: planb.dev/reservation).
Called with (dict "root" $ "extra" (dict ...)).
*/}}
{{- define "planb.queueAnnotationsWith" -}}
{{- $annotations := deepCopy .extra -}}
{{- if .root.Values.queues.keepOnUninstall -}}
{{- $_ := set $annotations "helm.sh/resource-policy" "keep" -}}
{{- end -}}
{{- with $annotations -}}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/*
The capacity kinds a rung can be (files/rung-kinds.yaml, generated by `make values` from
planb.catalog.rung_kinds): kind -> queued, reservationBound, nodeLabels, tolerations.
*/}}
{{- define "planb.rungKinds" -}}
{{- $kinds := .Files.Get "files/rung-kinds.yaml" | fromYaml -}}
{{- if not $kinds -}}
{{- fail "files/rung-kinds.yaml is missing or unreadable in the chart: regenerate it with `make values`" -}}
{{- end -}}
{{- toYaml $kinds -}}
{{- end -}}

{{/*
The capacity ladder as a JSON list of rungs, in the order Kueue tries them; each rung is one
ResourceFlavor: {name, kind, nodeLabels, planLabels, tolerations, quota, reservation}. queues.ladder when it is
set; else the tutorial's two plans from plans, queues.flavors and queues.quotas (on-demand, then dws
while dws.enabled).
planLabels select the plan's pools (planb.dev/plan, or plans.*); nodeLabels are planLabels plus the
profile's accelerator labels (planb.profileLabels), so a job rendered for another profile matches no
flavor: Kueue v0.19.2 skips a flavor whose nodeLabels a PodSet's nodeSelector contradicts
(pkg/scheduler/flavorassigner/flavorassigner.go, checkFlavorForPodSets: "flavor %s doesn't match node
affinity") and leaves the Workload pending with that message (QuotaReserved=False).
What differs by kind is the kind's entry in files/rung-kinds.yaml, which `make values` generates from
planb.catalog.rung_kinds: a queued kind (dws) needs dws.enabled, a reservation-bound kind's flavor
names its reservation, and a kind's flavor selects its nodeLabels and gives its tolerations (Spot
rungs select GKE's Spot node label and tolerate the Spot taint GKE documents for Spot node pools,
https://cloud.google.com/kubernetes-engine/docs/how-to/spot-vms); Kueue adds a flavor's tolerations
to the pods it admits on it (https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/).
*/}}
{{- define "planb.ladder" -}}
{{- $q := .Values.queues -}}
{{- $kinds := include "planb.rungKinds" . | fromYaml -}}
{{- $profile := include "planb.profileLabels" . | fromYaml -}}
{{- $rungs := list -}}
{{- if $q.ladder -}}
{{- $seen := dict -}}
{{- range $i, $r := $q.ladder -}}
{{- if hasKey $seen $r.name -}}
{{- fail (printf "queues.ladder[%d].name %q repeats queues.ladder[%d]: each plan is one ResourceFlavor and one plan label value, so give every plan its own name" $i $r.name (get $seen $r.name)) -}}
{{- end -}}
{{- if eq $r.name $q.flavors.cpu -}}
{{- fail (printf "queues.ladder[%d].name %q is the CPU flavor's name (queues.flavors.cpu): rename the plan" $i $r.name) -}}
{{- end -}}
{{- $kind := get $kinds $r.kind -}}
{{- if and $kind.queued (not $.Values.dws.enabled) -}}
{{- fail (printf "queues.ladder[%d] (%s) is a %s plan but dws.enabled=false, which leaves out the ProvisioningRequest admission check every DWS flavor needs: set dws.enabled=true, or remove the %s plan from queues.ladder" $i $r.name $r.kind $r.kind) -}}
{{- end -}}
{{- $_ := set $seen $r.name $i -}}
{{- $labels := dict "planb.dev/plan" $r.name -}}
{{- $labels = merge $labels (deepCopy $kind.nodeLabels) -}}
{{- $tolerations := deepCopy $kind.tolerations -}}
{{- $reservation := "" -}}
{{- if and $kind.reservationBound $r.reservation -}}
{{- $reservation = ternary (printf "projects/%s/reservations/%s" $r.reservationProject $r.reservation) $r.reservation (not (empty $r.reservationProject)) -}}
{{- end -}}
{{- $rungs = append $rungs (dict "name" $r.name "kind" $r.kind "planLabels" (dict "planb.dev/plan" $r.name) "nodeLabels" $labels "tolerations" $tolerations "quota" $r.quota "reservation" $reservation) -}}
{{- end -}}
{{- else -}}
{{- $rungs = append $rungs (dict "name" $q.flavors.onDemand "kind" "on-demand" "planLabels" .Values.plans.onDemand "nodeLabels" (deepCopy .Values.plans.onDemand) "tolerations" (list) "quota" $q.quotas.onDemand) -}}
{{- if .Values.dws.enabled -}}
{{- $rungs = append $rungs (dict "name" $q.flavors.dws "kind" "dws" "planLabels" .Values.plans.dws "nodeLabels" (deepCopy .Values.plans.dws) "tolerations" (list) "quota" $q.quotas.dws) -}}
{{- end -}}
{{- end -}}
{{- range $rungs -}}
{{- $rung := . -}}
{{- range $key, $value := $profile -}}
{{- if and (hasKey $rung.nodeLabels $key) (ne (toString (get $rung.nodeLabels $key)) (toString $value)) -}}
{{- fail (printf "plan %s selects node label %s=%v but the profile's accelerator (accelerator.*) is %s=%v: a flavor selecting both would match no node and no job; remove %s from the plan's labels (the chart adds the profile's)" $rung.name $key (get $rung.nodeLabels $key) $key $value $key) -}}
{{- end -}}
{{- $_ := set $rung.nodeLabels $key $value -}}
{{- end -}}
{{- if gt (len $rung.nodeLabels) 8 -}}
{{- fail (printf "plan %s's ResourceFlavor would select %d node labels (%s) but Kueue allows at most 8 (apis/kueue/v1beta2/resourceflavor_types.go, nodeLabels MaxProperties=8): give the plan fewer labels" $rung.name (len $rung.nodeLabels) (keys $rung.nodeLabels | sortAlpha | join ", ")) -}}
{{- end -}}
{{- end -}}
{{- toJson $rungs -}}
{{- end -}}

{{/*
Concurrent mode's inputs, checked before anything renders. Kueue's webhook refuses the same
(pkg/webhooks/clusterqueue_webhook.go validateConcurrentAdmissionPolicy): constraints with a mode
other than TryPreferredFlavors, a lastAcceptableFlavorName that is not a flavor of the ClusterQueue,
more than 16 flavors. planb's own: concurrent mode needs queues.ladder (its quotas hold the heads),
and is not combined with the failover controller.
*/}}
{{- define "planb.validateConcurrent" -}}
{{- $q := .Values.queues -}}
{{- $c := $q.concurrentAdmission -}}
{{- if not $q.ladder -}}
{{- fail "queues.ladderMode=concurrent needs queues.ladder: planb's policy: the tutorial's two plans keep the sequential mode, because in concurrent mode each plan's quota must also hold the job's head and submitter (Kueue holds every PodSet of a variant to one flavor), which only the ladder's quotas (the admin role's planb_plans) are sized for" -}}
{{- end -}}
{{- if and $c.lastAcceptableFlavor (ne $c.migrationMode "TryPreferredFlavors") -}}
{{- fail (printf "queues.concurrentAdmission.lastAcceptableFlavor=%s needs migrationMode TryPreferredFlavors, not %s: Kueue accepts migration constraints only with TryPreferredFlavors (a job under RetainFirstAdmission never migrates)" $c.lastAcceptableFlavor $c.migrationMode) -}}
{{- end -}}
{{- if $c.lastAcceptableFlavor -}}
{{- $names := list -}}
{{- range $q.ladder }}{{ $names = append $names .name }}{{ end -}}
{{- if not (has $c.lastAcceptableFlavor $names) -}}
{{- fail (printf "queues.concurrentAdmission.lastAcceptableFlavor=%s is not a plan of queues.ladder (%s): Kueue accepts only a flavor of the ClusterQueue" $c.lastAcceptableFlavor (join ", " $names)) -}}
{{- end -}}
{{- end -}}
{{- if gt (float64 .Values.failover.afterMinutes) 0.0 -}}
{{- fail (printf "queues.ladderMode=concurrent cannot be combined with failover.afterMinutes=%v: planb's policy: concurrent mode already pursues every plan at once, so a stockout on one plan leaves the job's other variants pursuing theirs and the job starts on the first that admits it, while the failover controller would evict the job from plan A after the PodsReady timeout and bar plan A to it, which Kueue's variant of plan A could never win back. Set failover.afterMinutes=0, or queues.ladderMode=sequential" .Values.failover.afterMinutes) -}}
{{- end -}}
{{- end -}}

{{/* Names of the ladder's DWS rungs (JSON list): the ProvisioningRequest admission check applies to these flavors only. */}}
{{- define "planb.dwsRungs" -}}
{{- $kinds := include "planb.rungKinds" . | fromYaml -}}
{{- $names := list -}}
{{- range include "planb.ladder" . | fromJsonArray -}}
{{- if (get $kinds .kind).queued -}}
{{- $names = append $names .name -}}
{{- end -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/*
planb's policy: a job of two or more multi-host TPU slices stays off the ladder's DWS plans. Kueue asks
for all of a job's workers in one ProvisioningRequest (count = replicas x hosts), GKE's autoscaler
provisions a request only in one node pool that holds all its pods, and a multi-host TPU pool holds
one slice, so such a request would fail on every DWS rung (docs/capacity-ladder.md). The plan label
values of those rungs as a JSON list (empty for any other job): the workers' node affinity keeps Kueue's
flavor assignment off them.
*/}}
{{- define "planb.offDwsPlans" -}}
{{- $plans := list -}}
{{- if and .Values.dws.enabled (gt (int .Values.job.workers.replicas) 1) (gt (int .Values.accelerator.hostsPerSlice) 1) -}}
{{- $kinds := include "planb.rungKinds" . | fromYaml -}}
{{- range include "planb.ladder" . | fromJsonArray -}}
{{- if (get $kinds .kind).queued -}}
{{- $plans = append $plans (get .nodeLabels "planb.dev/plan" | default .name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $plans -}}
{{- end -}}

{{/* Why the job stays off its DWS plans (the RayJob's planb.dev/off-dws annotation and NOTES.txt); empty when it does not. */}}
{{- define "planb.offDwsReason" -}}
{{- $plans := include "planb.offDwsPlans" . | fromJsonArray -}}
{{- if $plans -}}
planb's policy: this job of {{ .Values.job.workers.replicas }} slices x {{ .Values.accelerator.hostsPerSlice }} hosts stays off DWS plan(s) {{ join ", " $plans }} because Kueue asks for its {{ mul (int .Values.job.workers.replicas) (int .Values.accelerator.hostsPerSlice) }} workers in one ProvisioningRequest and GKE provisions a request only in one node pool that holds all its pods, while a multi-host TPU pool holds one slice; run it with job.workers.replicas=1 to use DWS
{{- end -}}
{{- end -}}

{{/* The failover controller's own namespace: failover.namespace, "" for the release's. */}}
{{- define "planb.failoverNamespace" -}}
{{- .Values.failover.namespace | default .Release.Namespace -}}
{{- end -}}

{{/*
planb's policy: the controller's ServiceAccount, Deployment and code (its ConfigMap) stay out of the jobs' reach.
A namespace that holds a LocalQueue is a namespace where job authors create pods: with the controller there, a job
could run as its ServiceAccount or a ConfigMap edit could swap its code. Its rights over other namespaces
(extraNamespaces, clusterWide) are refused while it shares one with a LocalQueue.
*/}}
{{- define "planb.validateFailoverNamespace" -}}
{{- $ns := include "planb.failoverNamespace" . -}}
{{- $queues := include "planb.failoverNamespaces" . | fromJsonArray -}}
{{- if and (has $ns $queues) (or .Values.failover.clusterWide .Values.failover.extraNamespaces) -}}
{{- fail (printf "failover.namespace %q (\"\": the release's) holds a LocalQueue (%s), and failover.clusterWide or failover.extraNamespaces would give the controller's ServiceAccount there rights over other namespaces: planb's policy: the controller gets a namespace of its own whenever it acts beyond one namespace, because a job author in a LocalQueue namespace could run as that ServiceAccount or edit its code's ConfigMap; set failover.namespace to a namespace without a LocalQueue (the default, planb-failover)" $ns (join ", " $queues)) -}}
{{- end -}}
{{- end -}}

{{/*
The failover controller's namespaces (JSON list): the release's LocalQueues' (every team's with queues.teams,
planb.localQueueNamespaces), then failover.extraNamespaces. It gets a Role in each, and in no other.
*/}}
{{- define "planb.failoverNamespaces" -}}
{{- concat (include "planb.localQueueNamespaces" . | fromJsonArray) (.Values.failover.extraNamespaces | default list) | uniq | toJson -}}
{{- end -}}

{{/* The failover controller's rights, each a call planb.failover.controller makes. */}}
{{- define "planb.failoverRules" -}}
# get: the Workload again after the RayJob's patch; list: every poll; patch: the affinity (JSON patch).
- apiGroups: ["kueue.x-k8s.io"]
  resources: ["workloads"]
  verbs: ["get", "list", "patch"]
# get: the owner of an evicted Workload; list: the metrics; patch: the annotation and the affinity.
- apiGroups: ["ray.io"]
  resources: ["rayjobs"]
  verbs: ["get", "list", "patch"]
# The MovedToPlanB Event on the RayJob.
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
{{- end -}}


{{/*
The KubeRay operator's layout, read from the cluster by the queues release, which the admin installs with
cluster-wide reads (Helm's lookup: a list or get with the installer's own rights). Only the namespace the admin named
for the operator is read (queues.kuberay.namespace): a Deployment elsewhere, which anyone who may create one in their
own namespace can label as KubeRay's, is never taken for the operator. Returns JSON: {} when there is no cluster to
read (helm template, a client-side dry run: lookup answers nothing, not even kube-system), else
  layout       in-cluster: exactly one Deployment in that namespace whose pods carry app.kubernetes.io/name=kuberay-operator (the
               label KubeRay's Helm chart gives them: ray-project/kuberay helm-chart/kuberay-operator/templates/
               deployment.yaml, spec.template.metadata.labels, container named after the chart);
               hosted: rayjobs.ray.io is served but no such Deployment runs there, as with GKE's Ray Operator
               add-on ("GKE automatically installs and hosts the KubeRay operator",
               https://cloud.google.com/kubernetes-engine/docs/add-on/ray-on-gke/concepts/overview; Google does
               not say where it runs, in which namespace, or at which KubeRay version);
               none: rayjobs.ray.io is not served.
  namespace, deployment, version   of the in-cluster operator (version: its image tag, "" when not a version)
  authOptions  "true" when the served rayjobs.ray.io v1 schema has spec.rayClusterSpec.authOptions (KubeRay 1.5.1
               or later: https://github.com/ray-project/kuberay/releases/tag/v1.5.1). An older schema would make
               the API server prune the field, and the RayCluster would run without authentication.
planb's policy: more than one operator Deployment is refused, because two operators that watch the same
namespaces both reconcile every RayJob and its RayCluster.
*/}}
{{- define "planb.kuberayDetect" -}}
{{- $out := dict -}}
{{- if lookup "v1" "Namespace" "" "kube-system" -}}
{{- $crd := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "rayjobs.ray.io" -}}
{{- $auth := "false" -}}
{{- range (dig "spec" "versions" list $crd) -}}
{{- if and (eq .name "v1") (dig "schema" "openAPIV3Schema" "properties" "spec" "properties" "rayClusterSpec" "properties" "authOptions" "" .) -}}
{{- $auth = "true" -}}
{{- end -}}
{{- end -}}
{{- $ops := list -}}
{{- range (dig "items" list (lookup "apps/v1" "Deployment" $.Values.queues.kuberay.namespace "")) -}}
{{- if eq (toString (get (dig "spec" "template" "metadata" "labels" dict .) "app.kubernetes.io/name")) "kuberay-operator" -}}
{{- $image := "" -}}
{{- range (dig "spec" "template" "spec" "containers" list .) -}}
{{- if or (not $image) (eq .name "kuberay-operator") -}}{{- $image = toString .image -}}{{- end -}}
{{- end -}}
{{- $tag := regexFind ":v?[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?$" (regexReplaceAll "@sha256:[0-9a-f]+$" $image "") -}}
{{- $ops = append $ops (dict "namespace" .metadata.namespace "deployment" .metadata.name "version" (trimPrefix "v" (trimPrefix ":" $tag))) -}}
{{- end -}}
{{- end -}}
{{- if gt (len $ops) 1 -}}
{{- $names := list -}}
{{- range $ops }}{{ $names = append $names (printf "%s/%s" .namespace .deployment) }}{{ end -}}
{{- fail (printf "queues.kuberay.detect: %d KubeRay operator Deployments (pods labelled app.kubernetes.io/name=kuberay-operator): %s. planb's policy: one operator, because two that watch the same namespaces both reconcile every RayJob and its RayCluster. Fix: keep one in %s (helm uninstall the other's release), or, for operators that watch separate namespaces, set queues.kuberay.detect=false and give each job job.networkPolicy.kuberayNamespace" (len $ops) (join ", " $names) $.Values.queues.kuberay.namespace) -}}
{{- else if $ops -}}
{{- $out = merge (dict "layout" "in-cluster" "authOptions" $auth) (first $ops) -}}
{{- else if $crd -}}
{{- $out = dict "layout" "hosted" "namespace" "" "deployment" "" "version" "" "authOptions" $auth -}}
{{- else -}}
{{- $out = dict "layout" "none" "namespace" "" "deployment" "" "version" "" "authOptions" "false" -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
A job release's view of the operator: the data of the ConfigMap job.kuberayRecord (NAMESPACE/NAME: planb-kuberay,
which the queues release writes in the operator's namespace, where job authors cannot write, and lets them read), as
JSON; {} without a cluster (helm template), without that ConfigMap, or with job.kuberayRecord="" (then the values
alone decide, as before). Never a ConfigMap of the job's own namespace, which its author could have written.
*/}}
{{- define "planb.kuberayRecord" -}}
{{- $data := dict -}}
{{- if and (eq .Values.mode "job") .Values.job.kuberayRecord -}}
{{- $at := splitList "/" .Values.job.kuberayRecord -}}
{{- $data = (lookup "v1" "ConfigMap" (first $at) (last $at)).data | default dict -}}
{{- end -}}
{{- toJson $data -}}
{{- end -}}

{{/*
A job refused before anything is created when the recorded operator cannot run it: no operator; job.rayAuth=token
on an operator without authOptions (KubeRay before 1.5.1); a hosted operator, which no namespace peer admits, with
the NetworkPolicy on and no peer given for it, since a blocked operator never sees the job end while its slice bills.
*/}}
{{- define "planb.validateKuberay" -}}
{{- if eq .Values.mode "job" -}}
{{- $rec := include "planb.kuberayRecord" . | fromJson -}}
{{- $where := printf "ConfigMap %s, written by the queues release" .Values.job.kuberayRecord -}}
{{- if eq (toString $rec.layout) "none" -}}
{{- fail (printf "no KubeRay operator serves this cluster (%s: rayjobs.ray.io is not served), so the RayJob would never run. Fix: install KubeRay 1.5.1 or later in the namespace the queues release reads (site.yml does, with the kuberay role), or turn on GKE's Ray Operator add-on (the gke_cluster role's gke_cluster_ray_operator; docs/kuberay.md), then run site.yml again to record it" $where) -}}
{{- end -}}
{{- if and $rec.layout (eq .Values.job.rayAuth "token") -}}
{{- $old := and $rec.version (semverCompare "<1.5.1-0" (toString $rec.version)) -}}
{{- if or (ne (toString $rec.authOptions) "true") $old -}}
{{- $seen := ternary (printf "the %s operator %s/%s is KubeRay %s" $rec.layout $rec.namespace $rec.deployment (default "of an unknown version" $rec.version)) (printf "the %s operator's version is not visible" $rec.layout) (ne (toString $rec.layout) "hosted") -}}
{{- fail (printf "job.rayAuth=token needs KubeRay 1.5.1 or later (authOptions), but %s and the served rayjobs.ray.io schema %s authOptions (%s); an older operator runs the Ray cluster without authentication. Fix: upgrade the operator to KubeRay 1.5.1 or later (a self-installed one: helm upgrade its release; GKE's add-on: a GKE version whose add-on serves authOptions) and run site.yml again, or set job.rayAuth=disabled" $seen (ternary "has" "lacks" (eq (toString $rec.authOptions) "true")) $where) -}}
{{- end -}}
{{- end -}}
{{- if and (eq (toString $rec.layout) "hosted") .Values.job.networkPolicy.enabled (not .Values.job.networkPolicy.dashboardFrom) (eq (toString $rec.dashboardFrom) "[]") -}}
{{- fail (printf "the KubeRay operator runs outside this cluster's pods (%s: layout hosted, as GKE's Ray Operator add-on, which Google hosts without saying from where it connects), so job.networkPolicy, which admits the operator by namespace, would keep it from polling the job on TCP 8265, and the RayJob would never finish while its nodes bill. Fix: give the operator's source as a NetworkPolicy peer, for every job in queues.kuberay.dashboardFrom (site.yml: kueue_queues_values) or for this one in job.networkPolicy.dashboardFrom (an ipBlock of its range), or set job.networkPolicy.enabled=false (then only token authentication guards the Ray ports); or install KubeRay in the cluster instead of the add-on, as site.yml does by default (docs/kuberay.md)" $where) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The training state's bytes of the model this job trains: 12 bytes a parameter (float32 weights, Adam's two moments)
and Adam's 4-byte step count; the parameters are the transformer's (job.training.transformer); the linear model's few
bytes count as none (planb.catalog.training.TransformerSize.state_bytes, the same arithmetic).
*/}}
{{- define "planb.stateBytes" -}}
{{- $job := .Values.job -}}
{{- $state := 0 -}}
{{- if eq $job.training.model "transformer" -}}
{{- $t := $job.training.transformer -}}
{{- $d := int64 $t.dModel -}}
{{- $block := add (mul 12 $d $d) (mul 9 $d) -}}
{{- $params := add (mul (int64 $t.numLayers) $block) (mul 2 (int64 $t.vocabSize) $d) (mul (int64 $t.seqLen) $d) (mul 2 $d) -}}
{{- $state = add (mul 12 $params) 4 -}}
{{- end -}}
{{- $state -}}
{{- end -}}

{{/*
A save on notice's write of this job's state, in whole seconds rounded up, "WRITE MARGIN": at the rate measured on a
TPU chip (2,631,180,292 bytes in 5.787 s), and three times that, what the grace period allows for gs:// and a busy
host (planb.catalog.training.notice_write_seconds, the same arithmetic). Integers: the rate as 2,631,180,292,000
bytes a 5,787 s.
*/}}
{{- define "planb.noticeWrite" -}}
{{- $state := include "planb.stateBytes" . | int64 -}}
{{- $write := div (add (mul $state 5787) 2631180291999) 2631180292000 -}}
{{- $margin := div (add (mul 3 $state 5787) 2631180291999) 2631180292000 -}}
{{- printf "%d %d" $write $margin -}}
{{- end -}}

{{/*
The workers' terminationGracePeriodSeconds: job.workers.terminationGracePeriodSeconds where set, else what a save on
notice of the model this job trains needs, by planb's policy (planb.catalog.training.grace_period_seconds, the same
arithmetic): 30 s, plus three times the training state's write at the rate measured on a TPU chip (planb.noticeWrite's
margin), rounded up to 5 s; 30 s for the linear model (Kubernetes' default).
*/}}
{{- define "planb.workerGracePeriod" -}}
{{- $job := .Values.job -}}
{{- if $job.workers.terminationGracePeriodSeconds -}}
{{- $job.workers.terminationGracePeriodSeconds -}}
{{- else -}}
{{- $write := include "planb.noticeWrite" . | splitList " " | last | int64 -}}
{{- mul 5 (div (add 30 $write 4) 5) -}}
{{- end -}}
{{- end -}}
