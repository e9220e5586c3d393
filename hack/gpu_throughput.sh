#!/usr/bin/env bash
# Tokens/s and MFU of training/train.py's transformer on an NVIDIA GPU machine.
#
#   hack/gpu_throughput.sh [--quick] [--no-install] [--steps N] [--peak-tflops X]
#
# 1. checks for a GPU (nvidia-smi) and a Python >= 3.11;
# 2. creates a fresh venv and installs the pinned jax[cuda12] stack from PyPI (no other network
#    needed): by default a new private directory (mktemp) removed on exit, or $PLANB_GPU_VENV (kept;
#    an existing directory is reused only if it is a venv or empty); --no-install: current python3;
# 3. runs hack/gpu/throughput.py: the transformer (bf16, ~185 M params, 16 x 1024 tokens per GPU per
#    step, 40 steps; --quick: ~40 M params, 20 steps) data parallel over all GPUs, plain JAX, and
#    prints ONE JSON line with tokens_per_s and mfu (peak: 989 TFLOP/s dense bf16 per H200/H100,
#    from the accelerator catalog, src/planb/catalog/gpu.py), also written to $OUT/gpu_throughput.json
#    when OUT is set.
# Budget: ~2-3 min install (CUDA wheels, ~3 GB), ~1 min compile + run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${PLANB_GPU_VENV:-}
INSTALL=1
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-install) INSTALL=0 ;;
    --quick | --allow-cpu) ARGS+=("$1") ;;
    --steps | --peak-tflops) ARGS+=("$1" "$2"); shift ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "gpu_throughput.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
log() { echo "[gpu_throughput $(date +%H:%M:%S)] $*" >&2; }

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >&2 || true
else
  log "nvidia-smi not found: no NVIDIA GPU or driver on this machine"
fi

PY=""
for cand in ${PYTHON:-} python3.12 python3.11 python3.13 python3; do
  if command -v "$cand" >/dev/null 2>&1 &&
    "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    PY=$(command -v "$cand"); break
  fi
done
[ -n "$PY" ] || { log "need Python >= 3.11 (jax 0.8.2)"; exit 2; }

if [ "$INSTALL" = 1 ]; then
  t0=$(date +%s)
  if [ -z "$VENV" ]; then
    # A fresh private directory each run: a fixed /tmp path could be planted or shared by another user.
    VENV=$(mktemp -d "${TMPDIR:-/tmp}/planb-gpu-venv.XXXXXX")
    trap 'rm -rf -- "$VENV"' EXIT
  elif [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ] && [ -n "$(ls -A -- "$VENV" 2>/dev/null)" ]; then
    log "PLANB_GPU_VENV=$VENV exists and is not a venv; refusing to clear it (choose an empty or new path)"
    exit 2
  fi
  log "creating $VENV with $PY ($("$PY" --version))"
  "$PY" -m venv --clear "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
  log "installing jax[cuda12]==0.8.2 flax optax (pinned) from PyPI"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --progress-bar off \
    "jax[cuda12]==0.8.2" "jaxlib==0.8.2" "flax==0.12.2" "optax==0.2.6" \
    "orbax-checkpoint==0.11.28" "numpy==2.3.5"
  log "install took $(($(date +%s) - t0)) s"
  RUNPY="$VENV/bin/python"
else
  RUNPY="$PY"
fi

export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-1}
log "running the transformer with $RUNPY"
# Not exec: the EXIT trap removes a temporary venv afterwards.
rc=0
timeout 360 "$RUNPY" "$ROOT/hack/gpu/throughput.py" ${ARGS[@]+"${ARGS[@]}"} || rc=$?
exit "$rc"
