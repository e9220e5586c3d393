#!/usr/bin/env bash
# Build planb's pinned toolchain from the Go module proxy into a cache outside
# the checkout, keyed by the hash of hack/versions.env, and link it to .tools.
#
#   hack/build-tools.sh            build what is missing (a no-op when all is there)
#   hack/build-tools.sh chart      only helm and the chart's tools (ct, helm-docs): what `make lint` needs
#   PLANB_CACHE_DIR=/path ...      put the cache somewhere else (default ~/.cache/planb)
#
# The chart's publishing tools (ct, helm-docs) are pinned in hack/chart-tools.env and cached under a key of
# their own (its hash, in chart-tools/), then linked into the main cache's bin/: a new pin there rebuilds those
# two only, not the whole toolchain.
#
# The previous Kueue and KubeRay operator, which the upgrade e2e test starts from, are pinned in
# hack/upgrade-from.env and cached under its hash (upgrade-from/), then linked into bin/ as kueue-upgrade-from and
# kuberay-operator-upgrade-from: only those two binaries, and a new pin there rebuilds them alone.
#
# Each tool is built once; a stamp file records success, so a re-run only
# checks the stamps. Progress is printed per tool with its build time.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
versions_file="$repo/hack/versions.env"
# shellcheck source=versions.env
source "$versions_file"
chart_versions_file="$repo/hack/chart-tools.env"
# shellcheck source=chart-tools.env
source "$chart_versions_file"
upgrade_from_file="$repo/hack/upgrade-from.env"
# shellcheck source=upgrade-from.env
source "$upgrade_from_file"

cache_root=${PLANB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/planb}
key=$(sha256sum "$versions_file" | cut -c1-16)
prefix="$cache_root/tools/$key"
bin="$prefix/bin"
manifests="$prefix/manifests"
src="$prefix/src"
logs="$prefix/logs"
stamps="$prefix/stamps"
mkdir -p "$bin" "$manifests" "$src" "$logs" "$stamps"

export CGO_ENABLED=0
export GOFLAGS=-buildvcs=false
export GOTOOLCHAIN=local

say() { printf '[planb tools] %s\n' "$*"; }

fail_build() {
  local tool=$1 log=$2
  say "FAILED: $tool — last lines of $log:"
  tail -n 25 "$log" >&2 || true
  if grep -qiE 'dial tcp|no such host|i/o timeout|connection refused|proxyconnect|TLS handshake' "$log"; then
    say "The Go module proxy ($(go env GOPROXY)) could not be reached."
    say "Fix: check network access to the proxy, or set GOPROXY to a reachable mirror, then re-run 'make tools'."
  fi
  exit 1
}

# build_step NAME COMMAND...: run once, record a stamp, print progress and time.
build_step() {
  local name=$1
  shift
  if [[ -f "$stamps/$name" ]]; then
    say "$name: cached"
    return 0
  fi
  local log="$logs/$name.log" start=$SECONDS
  say "$name: building (log: $log) ..."
  if ! "$@" >"$log" 2>&1; then
    fail_build "$name" "$log"
  fi
  say "$name: done in $((SECONDS - start)) s"
  date -u +%FT%TZ >"$stamps/$name"
}

check_proxy() {
  if [[ -f "$stamps/proxy-checked" ]]; then return 0; fi
  local out
  if ! out=$(timeout 120 go list -m -json "sigs.k8s.io/kueue@$KUEUE_VERSION" 2>&1); then
    say "Cannot resolve sigs.k8s.io/kueue@$KUEUE_VERSION from the Go module proxy ($(go env GOPROXY))."
    say "$out"
    say "Fix: make the proxy reachable (or set GOPROXY), or pick a served version in hack/versions.env."
    exit 1
  fi
  touch "$stamps/proxy-checked"
}

# module_dir MODULE@VERSION: download a module and print its directory.
module_dir() {
  go mod download -json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'
}

k8s_ldflags() {
  local v=$KUBERNETES_VERSION major minor
  major=$(echo "${v#v}" | cut -d. -f1)
  minor=$(echo "${v#v}" | cut -d. -f2)
  local flags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}

build_helm() {
  local kube
  kube=$(helm_kube_ldflags)
  go_install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" \
    "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean$kube"
}

# The Kubernetes wrapper module: k8s.io/kubernetes maps its staging modules to
# ./staging/src with replace lines, which a dependency cannot use; we replace
# each of them with its published k8s.io/<name> v0.<minor>.<patch>.
prepare_k8s_wrapper() {
  local dir="$src/kubernetes" kdir staging_v
  mkdir -p "$dir"
  kdir=$(module_dir "k8s.io/kubernetes@$KUBERNETES_VERSION")
  staging_v="v0.${KUBERNETES_VERSION#v1.}"
  {
    echo "module planb.local/kubernetes-wrapper"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
    echo
    sed -n 's|^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*$|\1|p' "$kdir/go.mod" |
      sort -u | while read -r m; do echo "replace $m => $m $staging_v"; done
  } >"$dir/go.mod"
  cat >"$dir/tools.go" <<'EOF'
//go:build tools

package tools
EOF
  (cd "$dir" && GOFLAGS=-mod=mod go mod download k8s.io/kubernetes)
}

build_k8s() {
  local cmd=$1 dir="$src/kubernetes"
  (cd "$dir" && GOFLAGS=-mod=mod go build -trimpath -ldflags "$(k8s_ldflags)" \
    -o "$bin/$cmd" "k8s.io/kubernetes/cmd/$cmd")
}

# build_wrapped NAME MODULE VERSION PACKAGE: build PACKAGE into $bin/NAME from a small module of
# our own that requires MODULE@VERSION. etcd's server module has relative replace lines, so
# `go install` of it fails; as a dependency they are ignored and the published siblings are used.
build_wrapped() {
  local name=$1 module=$2 version=$3 pkg=$4 dir="$src/$1"
  mkdir -p "$dir"
  printf 'module planb.local/%s-wrapper\n\ngo 1.26\n\nrequire %s %s\n' "$name" "$module" "$version" >"$dir/go.mod"
  (cd "$dir" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$bin/$name" "$pkg")
}

# helm_kube_ldflags: the Kubernetes version helm assumes without a cluster (`helm template`, `helm lint`), set as
# helm's own release build sets it: 1.<minor of the k8s.io/client-go it requires> (helm's Makefile, the
# K8S_MODULES_VER lines). Without it helm assumes v1.20.0 and refuses every chart whose kubeVersion is newer
# (charts/planb's is >=1.34.0-0), while the released helm v3.19 binaries assume v1.34.
helm_kube_ldflags() {
  local dir minor flags=""
  dir=$(module_dir "helm.sh/helm/v3@$HELM_VERSION")
  minor=$(sed -n 's|^[[:space:]]*k8s.io/client-go v0\.\([0-9]*\)\..*|\1|p' "$dir/go.mod")
  [[ -n $minor ]] || { say "no k8s.io/client-go in $dir/go.mod"; return 1; }
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    flags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$minor"
  done
  echo "$flags"
}

go_install() {
  local pkg=$1 ldflags=${2:-}
  GOBIN="$bin" go install -trimpath -ldflags "-s -w $ldflags" "$pkg"
}

copy_manifests() {
  local kueue kuberay provreq
  kueue=$(module_dir "sigs.k8s.io/kueue@$KUEUE_VERSION")
  kuberay=$(module_dir "github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION")
  provreq=$(module_dir "k8s.io/autoscaler/cluster-autoscaler/apis@$AUTOSCALER_APIS_VERSION")
  rm -rf "$manifests"/{kueue,kuberay,provisioningrequest}
  mkdir -p "$manifests"/{kueue/crds,kuberay/crds,provisioningrequest}
  cp "$kueue"/config/components/crd/bases/*.yaml "$manifests/kueue/crds/"
  cp "$kueue/config/components/webhook/manifests.yaml" "$manifests/kueue/webhooks.yaml"
  cp -r "$kueue/charts/kueue" "$manifests/kueue/chart"
  cp "$kuberay"/config/crd/bases/ray.io_*.yaml "$manifests/kuberay/crds/"
  cp "$provreq"/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml "$manifests/provisioningrequest/"
  chmod -R u+w "$manifests"
}

# kwok's own default stages (what kwokctl uses when a configuration names none), as YAML files:
# planb passes them to kwokctl with one change (planb.local.stack.control_plane), and giving any
# stage replaces all of kwokctl's defaults.
copy_kwok_stages() {
  local kwok stages="$prefix/manifests/kwok/stages"
  kwok=$(module_dir "sigs.k8s.io/kwok@$KWOK_VERSION")
  rm -rf "$stages"
  mkdir -p "$stages"
  cp "$kwok"/kustomize/stage/node/fast/node-initialize.yaml \
    "$kwok"/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    "$kwok"/kustomize/stage/pod/fast/pod-ready.yaml \
    "$kwok"/kustomize/stage/pod/fast/pod-complete.yaml \
    "$kwok"/kustomize/stage/pod/fast/pod-delete.yaml "$stages/"
  chmod -R u+w "$stages"
}

# The chart's publishing tools, in their own cache (keyed by chart-tools.env): chart-testing's ct with the
# schema and yamllint configuration its lint reads (etc/ of its module, passed by `make lint`), and helm-docs.
# They are linked into the main cache as chart-tools/ and bin/ct, bin/helm-docs.
build_chart_tools() {
  local chart_key chart_prefix saved_stamps saved_logs
  chart_key=$(sha256sum "$chart_versions_file" | cut -c1-16)
  chart_prefix="$cache_root/chart-tools/$chart_key"
  mkdir -p "$chart_prefix/bin" "$chart_prefix/etc/ct" "$chart_prefix/logs" "$chart_prefix/stamps"
  saved_stamps=$stamps saved_logs=$logs
  stamps="$chart_prefix/stamps" logs="$chart_prefix/logs"
  build_step ct build_chart_tool "$chart_prefix" ct github.com/helm/chart-testing/v3 "$CHART_TESTING_VERSION" \
    github.com/helm/chart-testing/v3/ct "-X github.com/helm/chart-testing/v3/ct/cmd.Version=$CHART_TESTING_VERSION"
  build_step ct-etc copy_ct_etc "$chart_prefix/etc/ct"
  build_step helm-docs build_chart_tool "$chart_prefix" helm-docs github.com/norwoodj/helm-docs "$HELM_DOCS_VERSION" \
    github.com/norwoodj/helm-docs/cmd/helm-docs "-X main.version=${HELM_DOCS_VERSION#v}"
  stamps=$saved_stamps logs=$saved_logs
  ln -sfn "$chart_prefix" "$prefix/chart-tools"
  ln -sfn ../chart-tools/bin/ct "$bin/ct"
  ln -sfn ../chart-tools/bin/helm-docs "$bin/helm-docs"
}

# build_chart_tool PREFIX NAME MODULE VERSION PACKAGE LDFLAGS: as build_wrapped, into PREFIX/bin. Not `go install
# MODULE@VERSION`: that also reads the module's version list for deprecations, which the proxy refuses for
# chart-testing (403 on @v/list), while a require of the exact version needs only that version.
build_chart_tool() {
  local out=$1 name=$2 module=$3 version=$4 pkg=$5 ldflags=$6 dir="$1/src/$2"
  mkdir -p "$dir"
  printf 'module planb.local/%s-wrapper\n\ngo 1.26\n\nrequire %s %s\n' "$name" "$module" "$version" >"$dir/go.mod"
  (cd "$dir" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w $ldflags" -o "$out/bin/$name" "$pkg")
}

# copy_ct_etc DIR: chart-testing's chart_schema.yaml (yamale) and lintconf.yaml (yamllint) from its module.
copy_ct_etc() {
  local ct
  ct=$(module_dir "github.com/helm/chart-testing/v3@$CHART_TESTING_VERSION")
  cp "$ct/etc/chart_schema.yaml" "$ct/etc/lintconf.yaml" "$1/"
  chmod u+w "$1"/*.yaml
}

# The previous pins (hack/upgrade-from.env) in their own cache, built as the pinned ones are (the same steps, into
# another bin/). A KubeRay operator pinned at KUBERAY_VERSION is the pinned binary itself: linked, not built again.
build_upgrade_from() {
  local up_key up_prefix saved_bin saved_src saved_stamps saved_logs
  up_key=$(sha256sum "$upgrade_from_file" | cut -c1-16)
  up_prefix="$cache_root/upgrade-from/$up_key"
  mkdir -p "$up_prefix/bin" "$up_prefix/src" "$up_prefix/logs" "$up_prefix/stamps"
  saved_bin=$bin saved_src=$src saved_stamps=$stamps saved_logs=$logs
  bin="$up_prefix/bin" src="$up_prefix/src" stamps="$up_prefix/stamps" logs="$up_prefix/logs"
  build_step "kueue-$UPGRADE_FROM_KUEUE_VERSION" go_install "sigs.k8s.io/kueue/cmd/kueue@$UPGRADE_FROM_KUEUE_VERSION" \
    "-X sigs.k8s.io/kueue/pkg/version.GitVersion=$UPGRADE_FROM_KUEUE_VERSION"
  if [[ $UPGRADE_FROM_KUBERAY_VERSION != "$KUBERAY_VERSION" ]]; then
    build_step "kuberay-operator-$UPGRADE_FROM_KUBERAY_VERSION" build_wrapped kuberay-operator \
      github.com/ray-project/kuberay/ray-operator "$UPGRADE_FROM_KUBERAY_VERSION" github.com/ray-project/kuberay/ray-operator
  fi
  bin=$saved_bin src=$saved_src stamps=$saved_stamps logs=$saved_logs
  ln -sfn "$up_prefix" "$prefix/upgrade-from"
  ln -sfn ../upgrade-from/bin/kueue "$bin/kueue-upgrade-from"
  if [[ $UPGRADE_FROM_KUBERAY_VERSION != "$KUBERAY_VERSION" ]]; then
    ln -sfn ../upgrade-from/bin/kuberay-operator "$bin/kuberay-operator-upgrade-from"
  else
    ln -sfn kuberay-operator "$bin/kuberay-operator-upgrade-from"
  fi
}

main() {
  local start=$SECONDS
  say "cache: $prefix"
  check_proxy
  # The step's name says what changed in how helm is built (here: its default Kubernetes version), so that an
  # existing cache rebuilds helm alone.
  build_step helm-default-kube-version build_helm
  if [[ ${1:-} == chart ]]; then
    # `make lint` needs only helm and the chart's tools: a clean clone lints without building the toolchain.
    build_chart_tools
    ln -sfn "$prefix" "$repo/.tools"
    say "helm, ct and helm-docs ready in $((SECONDS - start)) s: $repo/.tools/bin"
    return 0
  fi
  build_step manifests copy_manifests
  build_step kwok go_install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" \
    "-X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION"
  build_step kwok-stages copy_kwok_stages
  build_step kwokctl go_install "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION" \
    "-X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION"
  build_step etcd build_wrapped etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3
  build_step kueue go_install "sigs.k8s.io/kueue/cmd/kueue@$KUEUE_VERSION" \
    "-X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION"
  build_step kubernetes-wrapper prepare_k8s_wrapper
  build_step kube-scheduler build_k8s kube-scheduler
  build_step kube-controller-manager build_k8s kube-controller-manager
  build_step kube-apiserver build_k8s kube-apiserver
  # The KubeRay operator turns admitted RayJobs into RayClusters and pods (KWOK runs the pods).
  build_step kuberay-operator build_wrapped kuberay-operator github.com/ray-project/kuberay/ray-operator \
    "$KUBERAY_VERSION" github.com/ray-project/kuberay/ray-operator
  build_chart_tools
  build_upgrade_from
  # Link the cache into the checkout (ignored by git).
  ln -sfn "$prefix" "$repo/.tools"
  cp "$versions_file" "$prefix/versions.env"
  say "all tools ready in $((SECONDS - start)) s: $repo/.tools/bin"
}

main "$@"
