#!/usr/bin/env bash
# `make sanity`: ansible-test sanity on the planb.gke collection, with the Python the venv runs.
# ansible-test fetches a pip bootstrap script from ci-files.testing.ansible.com, which this
# workplace cannot reach; hack/ansible-test/get_pip.py stands in for it from ansible-test's cache.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv_bin="$repo/.venv/bin"
python_version=$("$venv_bin/python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
pip_version=$("$venv_bin/python" - <<'PY'
import re, pathlib, ansible_test
source = pathlib.Path(ansible_test.__file__).parent / "_internal" / "python_requirements.py"
print(re.search(r"pip='([0-9.]+)'", source.read_text()).group(1))
PY
)
cache="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
if ! cmp -s "$repo/hack/ansible-test/get_pip.py" "$cache" 2>/dev/null; then
  mkdir -p "$(dirname "$cache")"
  cp "$repo/hack/ansible-test/get_pip.py" "$cache"
fi
cd "$repo/collections/ansible_collections/planb/gke"
echo "[planb sanity] ansible-test sanity on planb.gke (Python $python_version; first run installs each test's requirements) ..."
exec "$venv_bin/ansible-test" sanity --python "$python_version" "$@"
