#!/usr/bin/env bash
# `make demo`: the seed's whole flow on this machine. make has already set up the Python
# environment and the pinned tools (make setup); this script runs the flow itself.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/bin:$PWD/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$PWD/ansible.cfg"

phase() { printf '\n=== %s\n' "$*"; }

phase "1/1 local stack (kwok control plane + the real Kueue)"
planb local up
planb local versions
