#!/usr/bin/env bash
# planb's training job on one TPU chip: every figure of BENCHMARKS.md's "TPU v5e, one chip" table, one JSON line
# per measurement (hack/tpu_bench.py says what each is). For a TPU machine with no network and no sockets: flax,
# optax and orbax-checkpoint come from the machine's own package index (PLANB_TPU_INDEX, default
# file:///opt/pypi/simple) or, where it has none, from wheels in .whl-tpu/; they go to a directory of their own
# at the END of PYTHONPATH, so the machine's JAX stays the one imported. That directory is a new private one each
# run (mktemp -d, removed on exit), or $PLANB_TPU_SITE (kept), which must be this user's and writable by no one
# else: whatever lies there is imported, so a directory another user could write is refused.
#   hack/tpu_bench.sh                 all measurements (about 9 minutes on a v5e chip)
#   hack/tpu_bench.sh --only mfu,saves
#   hack/tpu_bench.sh --only floor     what a restart costs that is the machine's (hack/tpu_floor.py; not in a plain run)
#   hack/tpu_bench.sh --only save-policy --time-limit-s 500   planb's checkpoint interval, two sizes (hack/tpu_save_policy.py)
#   hack/tpu_bench.sh --only save-policy --sizes 6.1gb --time-limit-s 540   one size of the two
#   hack/tpu_bench.sh sweep           sizes x attention x remat in one process (exploration)
#   hack/tpu_bench.sh --smoke         the same plan with tiny models on CPU (a dry run, no chip)
set -euo pipefail
cd "$(dirname "$0")/.."
INDEX="${PLANB_TPU_INDEX:-file:///opt/pypi/simple}"
PACKAGES=(flax optax orbax-checkpoint)

# $1 is a directory of this user's that no one else can write (its owner, and no group or other write bit).
private_dir() {
  [ -d "$1" ] && [ ! -L "$1" ] && [ -O "$1" ] && [ -z "$(find "$1" -maxdepth 0 -perm /022)" ]
}

if ! python3 -c 'import flax, optax, orbax.checkpoint' 2>/dev/null; then
  if [ -n "${PLANB_TPU_SITE:-}" ]; then
    SITE=$PLANB_TPU_SITE
    mkdir -p -m 700 "$SITE"
    if ! private_dir "$SITE"; then
      echo "[tpu-bench] $SITE is not a directory of this user's that only it can write; refusing to import from it" >&2
      exit 2
    fi
  else
    SITE=$(mktemp -d "${TMPDIR:-/tmp}/planb-tpu-site.XXXXXX")
    trap 'rm -rf -- "$SITE"' EXIT
  fi
  if [ ! -d "$SITE/orbax" ]; then
    echo "[tpu-bench] installing ${PACKAGES[*]} into $SITE ..." >&2
    if [ -d .whl-tpu ]; then
      PIP_CONFIG_FILE=/dev/null python3 -m pip install --isolated -q --no-index --no-deps --no-compile \
        --no-cache-dir --target "$SITE" .whl-tpu/*.whl >&2
    else
      PIP_CONFIG_FILE=/dev/null python3 -m pip install --isolated -q --only-binary=:all: --no-cache-dir \
        --index-url "$INDEX" --target "$SITE" "${PACKAGES[@]}" >&2
    fi
  fi
  export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$SITE"
fi
python3 -c 'import jax, jaxlib; print("[tpu-bench] jax", jax.__version__, "jaxlib", jaxlib.__version__)' >&2  # each run prints its devices (opening the chip here costs seconds a call)
# Not exec: the EXIT trap removes a temporary site afterwards.
python3 -u hack/tpu_bench.py "$@"
