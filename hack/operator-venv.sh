#!/usr/bin/env bash
# `make operator-venv` (part of `make setup`): the virtual environment an operator makes on a fresh laptop, by
# docs/first-run.md section 1 and nothing else: `python3 -m venv`, then `pip install --require-hashes -r
# requirements.lock`. The rehearsal test (tests/integration/collection/test_first_run_rehearsal.py) runs the
# collection's tarball with it, outside the checkout. Tests reach no package index, so it is made here, once per
# requirements.lock, in the cache beside the toolchain (a no-op once made, like the tools), and linked as
# .operator-venv. A venv's scripts name its interpreter by absolute path, so it is made where it stays; the file
# `complete` says the install finished (a half-made one is made again).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
key=$(sha256sum "$repo/requirements.lock" | cut -c1-16)
target="${XDG_CACHE_HOME:-$HOME/.cache}/planb/operator-venv/$key"
if [[ ! -f "$target/complete" ]]; then
  echo "[planb setup] the operator's virtual environment, from requirements.lock alone (docs/first-run.md, 1) ..."
  rm -rf "$target"
  mkdir -p "$(dirname "$target")"
  python3 -m venv "$target"
  "$target/bin/python" -m pip install -q --require-hashes -r "$repo/requirements.lock"
  touch "$target/complete"
fi
ln -sfn "$target" "$repo/.operator-venv"
