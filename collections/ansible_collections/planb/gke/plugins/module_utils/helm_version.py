# planb.gke: which helm the pinned kubernetes.core drives, read from `helm version --short` before any write.
"""The helm binary planb's roles hand to ``kubernetes.core.helm`` (``binary_path``), checked before any change.

planb pins kubernetes.core 6.2.0 (requirements.yml, the version the ``ansible`` bundle of requirements.lock carries).
Its helm module runs the helm CLI and parses its output, and it was written for helm 3:

* With helm 4 it fails on every run that finds the release installed while any helm plugin is installed (helm-diff,
  which kubernetes.core's docs suggest for idempotence, included): it reads ``helm plugin list`` to find helm-diff
  and splits each line into three columns, and helm 4 prints six (ValueError "too many values to unpack", reported
  with kubernetes.core 6.2.0 and helm v4.0.0: https://github.com/ansible-collections/kubernetes.core/issues/1041,
  tracked in ansible-collections/kubernetes.core#1038; tests/unit/test_helm_version.py feeds the parser real helm
  4.2.4 output). The first install passes, so the trap shows on the second run of site.yml.
* The maintainers' answer is a range, helm ``>=3.0.0,<4.0.0``, that later kubernetes.core releases enforce
  themselves ("Helm version must be >=3.0.0,<4.0.0", ansible-collections/kubernetes.core#1039); 6.2.0 does not.

So planb refuses, before any write, a helm outside that range: the message names the binary, the version it
printed, why, and the fix. ``helm version --short`` prints ``v3.19.5`` for planb's pinned build (hack/versions.env,
built with its version set as helm's release build sets it) and ``v3.19.5+g<commit>`` for a released binary (helm's
``version.GetVersion()``: the version, then ``+g`` and the commit when it is known); helm 2 prints
``Client: v2.17.0+ga690bad``. The version is the first ``vMAJOR.MINOR.PATCH`` of the output.
"""

from __future__ import annotations

import re

#: The kubernetes.core planb pins (requirements.yml); tests/unit/test_helm_version.py keeps them equal.
KUBERNETES_CORE = "6.2.0"
#: The helm releases it drives: at least the first, below the second (ansible-collections/kubernetes.core#1039).
SUPPORTED = ((3, 0, 0), (4, 0, 0))
#: The helm planb's toolchain builds and its tests run (hack/versions.env's HELM_VERSION; the same test checks it).
TESTED = "v3.19.5"
#: The report of the failure with kubernetes.core 6.2.0 and helm 4.
DOC_HELM4 = "https://github.com/ansible-collections/kubernetes.core/issues/1041"
#: The maintainers' range.
DOC_RANGE = "https://github.com/ansible-collections/kubernetes.core/pull/1039"
DOC_INSTALL = f"https://github.com/helm/helm/releases/tag/{TESTED}"

_VERSION = re.compile(r"\bv?(\d+)\.(\d+)\.(\d+)([-+][0-9A-Za-z.+-]*)?")


class HelmVersionError(ValueError):
    """A helm binary planb's roles cannot use; the message names the binary, what it printed, why and the fix."""


def parse(output: str) -> tuple[int, int, int]:
    """The version ``helm version --short`` printed; HelmVersionError when the output holds none."""
    found = _VERSION.search(output)
    if found is None:
        raise HelmVersionError(f"no version in {output.strip()[:200]!r}")
    return int(found.group(1)), int(found.group(2)), int(found.group(3))


def _text(version: tuple[int, int, int]) -> str:
    return ".".join(str(part) for part in version)


def check(binary: str, rc: int, stdout: str, stderr: str, variable: str = "planb_helm_binary") -> str:
    """The version of ``binary`` from ``binary version --short``'s exit code and output, e.g. ``3.19.5``; raises
    HelmVersionError when it did not run, printed no version, or printed one the pinned kubernetes.core cannot drive
    (``variable``: the variable that names the binary, for the fix)."""
    fix = (
        f"Fix: install a helm 3 release (planb's toolchain builds and tests {TESTED}: {DOC_INSTALL}) and set "
        f"{variable} to its path, or put it first on PATH"
    )
    command = f"`{binary} version --short`"
    if rc != 0:
        said = (stderr or stdout).strip()[:300] or f"exit code {rc}"
        missing = " (no such program: helm is not installed there, or not on PATH)" if rc in (126, 127) else ""
        raise HelmVersionError(f"planb: {command} failed{missing}: {said}. {fix}.")
    try:
        version = parse(stdout)
    except HelmVersionError as exc:
        raise HelmVersionError(f"planb: {command} printed {exc}, which is not a helm version. {fix}.") from exc
    low, high = SUPPORTED
    if low <= version < high:
        return _text(version)
    why = (
        "its kubernetes.core.helm fails with helm 4 on every re-run of an installed release, parsing `helm plugin "
        f"list` once any helm plugin is installed ({DOC_HELM4})"
        if version >= high
        else "it runs helm 3's commands"
    )
    raise HelmVersionError(
        f"planb: {binary} is helm {_text(version)} ({command}: {stdout.strip()[:100]}), and the kubernetes.core "
        f"{KUBERNETES_CORE} planb pins drives helm >={_text(low)},<{_text(high)} only ({DOC_RANGE}): {why}. {fix}; "
        "another helm may stay installed under its own name."
    )
