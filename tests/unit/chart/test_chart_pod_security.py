"""The job chart renders only pods that the restricted Pod Security Standard admits, on real `helm template` output.

* The schema refuses the values that would make a pod privileged: `privileged`, privilege
  escalation, added capabilities, a kept capability set, root, an unconfined seccomp profile.
* `job.backoffLimit` is bounded, so a job that fails on its own gives its slice back.
* Every pod the release makes or has KubeRay make (submitter, head, workers, the `helm test` pod,
  and the autoscaler container KubeRay adds to an elastic job's head) passes the restricted
  profile's controls (https://kubernetes.io/docs/concepts/security/pod-security-standards/), and so does
  queues mode's `helm test` pod.
* NOTES warn when Ray token authentication is off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from planb.build import golden
from tests.support.shared.chart.helm import Helm
from tests.support.shared.chart.objects import by_kind, pod_specs

Render = Callable[..., list[dict[str, Any]]]
SCHEMA = "values don't meet the specifications of the schema(s)"
GPU = str(golden.CHART_DIR / "values" / "gpu-a3-h100-8.yaml")

# The restricted profile's volume types (its "Volume Types" control).
RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


def restricted_violations(pod: dict[str, Any]) -> list[str]:
    """What in a pod spec the Pod Security Standards' restricted profile (baseline included) refuses."""
    out = [f"spec.{key}" for key in ("hostNetwork", "hostPID", "hostIPC") if pod.get(key)]
    ctx = pod.get("securityContext") or {}
    if ctx.get("sysctls"):
        out.append("spec.securityContext.sysctls")
    for volume in pod.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            out.append(f"volume {volume['name']}: {sorted(kinds)}")
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        out += container_violations(container.get("securityContext") or {}, ctx, container["name"])
        out += [f"{container['name']}: hostPort" for port in container.get("ports") or [] if port.get("hostPort")]
    return out


def container_violations(sec: dict[str, Any], pod_ctx: dict[str, Any], name: str) -> list[str]:
    """The restricted profile's container controls; the pod's securityContext supplies the defaults it allows."""
    out = []
    if sec.get("privileged"):
        out.append(f"{name}: privileged")
    if sec.get("allowPrivilegeEscalation") is not False:
        out.append(f"{name}: allowPrivilegeEscalation must be false")
    caps = sec.get("capabilities") or {}
    if "ALL" not in (caps.get("drop") or []):
        out.append(f"{name}: capabilities.drop must hold ALL")
    if set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
        out.append(f"{name}: capabilities.add {caps['add']}")
    if sec.get("runAsNonRoot", pod_ctx.get("runAsNonRoot")) is not True:
        out.append(f"{name}: runAsNonRoot must be true")
    if sec.get("runAsUser", pod_ctx.get("runAsUser")) == 0:
        out.append(f"{name}: runAsUser 0")
    seccomp = (sec.get("seccompProfile") or pod_ctx.get("seccompProfile") or {}).get("type")
    if seccomp not in ("RuntimeDefault", "Localhost"):
        out.append(f"{name}: seccompProfile {seccomp!r}")
    if sec.get("procMount", "Default") != "Default":
        out.append(f"{name}: procMount")
    if sec.get("seLinuxOptions") or (sec.get("windowsOptions") or {}).get("hostProcess"):
        out.append(f"{name}: seLinuxOptions/hostProcess")
    return out


# (what, helm args, text expected in helm's stderr)
REFUSED: list[tuple[str, tuple[str, ...], list[str]]] = [
    ("privileged", ("--set", "job.securityContext.privileged=true"), ["/job/securityContext/privileged"]),
    (
        "privilege escalation",
        ("--set", "job.securityContext.allowPrivilegeEscalation=true"),
        ["/job/securityContext/allowPrivilegeEscalation", "value must be false"],
    ),
    (
        "added capability",
        ("--set", "job.securityContext.capabilities.add={SYS_ADMIN}"),
        ["/job/securityContext/capabilities", "additional properties 'add' not allowed"],
    ),
    (
        "capabilities kept",
        ("--set", "job.securityContext.capabilities.drop={NET_RAW}"),
        ["/job/securityContext/capabilities/drop"],
    ),
    (
        "no securityContext at all",
        ("--set", "job.securityContext=null"),
        ["missing property 'securityContext'"],
    ),
    (
        "root allowed",
        ("--set", "job.podSecurityContext.runAsNonRoot=false"),
        ["/job/podSecurityContext/runAsNonRoot", "value must be true"],
    ),
    ("uid 0", ("--set", "job.podSecurityContext.runAsUser=0"), ["/job/podSecurityContext/runAsUser", "minimum"]),
    (
        "unconfined seccomp",
        ("--set", "job.podSecurityContext.seccompProfile.type=Unconfined"),
        ["/job/podSecurityContext/seccompProfile/type"],
    ),
    (
        "sysctls",
        ("--set", "job.podSecurityContext.sysctls[0].name=kernel.shm_rmid_forced"),
        ["/job/podSecurityContext", "additional properties 'sysctls' not allowed"],
    ),
    ("unbounded retries", ("--set", "job.backoffLimit=11"), ["/job/backoffLimit", "maximum: got 11, want 10"]),
]


@pytest.mark.parametrize(("what", "args", "expected"), REFUSED, ids=[c[0] for c in REFUSED])
def test_values_that_make_a_pod_privileged_are_refused(
    helm: Helm, what: str, args: tuple[str, ...], expected: list[str]
) -> None:
    done = helm("template", "job-1", str(golden.CHART_DIR), *args)
    assert done.returncode != 0, f"{what}: rendered\n{done.stdout[:2000]}"
    assert SCHEMA in done.stderr, done.stderr
    for text in expected:
        assert text in done.stderr, done.stderr


def test_ten_retries_render(template: Render) -> None:
    (job,) = by_kind(template("--set", "job.backoffLimit=10"), "RayJob")
    assert job["spec"]["backoffLimit"] == 10


@pytest.mark.parametrize(
    "args",
    [(), ("-f", GPU), ("--set", "job.elastic=true", "--set", "dws.enabled=false")],
    ids=["tpu", "gpu", "elastic"],
)
def test_every_pod_passes_the_restricted_pod_security_standard(template: Render, args: tuple[str, ...]) -> None:
    objs = template(*args)
    seen = set()
    for which, _, pod in pod_specs(objs):
        seen.add(which)
        assert restricted_violations(pod) == [], which
    assert {"submitter", "head", "helm test"} <= seen
    (job,) = by_kind(objs, "RayJob")
    cluster = job["spec"]["rayClusterSpec"]
    if cluster.get("enableInTreeAutoscaling"):
        # KubeRay's autoscaler container in the head takes autoscalerOptions.securityContext and no other.
        head = cluster["headGroupSpec"]["template"]["spec"]
        sec = cluster["autoscalerOptions"]["securityContext"]
        assert container_violations(sec, head["securityContext"], "autoscaler") == []
    else:
        assert "autoscalerOptions" not in cluster


def test_the_queues_helm_test_pod_passes_the_restricted_pod_security_standard(template: Render) -> None:
    """Queues mode's `helm test` pod (the failover controller's image and securityContext) is restricted too."""
    (pod,) = by_kind(template("--set", "mode=queues"), "Pod")
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    assert restricted_violations(pod["spec"]) == []


def test_the_checker_sees_a_privileged_pod(template: Render) -> None:
    """The restricted check itself refuses what it should (a pod whose values bypass the schema by hand)."""
    (_, _, pod), *_ = pod_specs(template())
    bad = {
        **pod,
        "hostNetwork": True,
        "containers": [{**pod["containers"][0], "securityContext": {"privileged": True}}],
    }
    found = restricted_violations(bad)
    assert "spec.hostNetwork" in found
    assert "ray-job-submitter: privileged" in found
    assert "ray-job-submitter: allowPrivilegeEscalation must be false" in found


def test_notes_warn_when_ray_auth_is_disabled(notes: Callable[..., str]) -> None:
    off = notes("--set", "job.rayAuth=disabled")
    assert "WARNING: Ray token authentication is disabled (job.rayAuth=disabled)" in off
    assert "anyone who reaches these pods can run code in" in off
    # Without job.rayAuth=disabled there is no such warning (the default images' tag warning is another).
    assert "Ray token authentication is disabled" not in notes()


DIGEST = "sha256:" + "0123456789abcdef" * 4


def test_notes_warn_of_images_pinned_by_tag_only(notes: Callable[..., str]) -> None:
    # job.image and job.test.image may be pinned by digest; NOTES warn of a tag alone.
    by_tag = notes()
    assert "WARNING: job.image=rayproject/ray:2.53.0-py311, job.test.image=rayproject/ray:2.53.0-py311" in by_tag
    assert "pinned by tag only" in by_tag and "NAME[:TAG]@sha256:<digest>" in by_tag
    pinned = notes(
        "--set", f"job.image=rayproject/ray:2.53.0-py311@{DIGEST}",
        "--set", f"job.test.image=rayproject/ray@{DIGEST}",
    )  # fmt: skip
    assert "pinned by tag only" not in pinned
    one = notes("--set", f"job.image=rayproject/ray:2.53.0-py311@{DIGEST}")
    assert "WARNING: job.test.image=rayproject/ray:2.53.0-py311 pinned by tag only" in one


def test_notes_warn_of_pip_packages_without_an_exact_version(notes: Callable[..., str]) -> None:
    # The shipped job.pip pins every package with ==, so no warning; an unpinned one is named.
    assert "without an exact version" not in notes()
    loose = notes("--set", "job.pip={jax[tpu]==0.8.2,pandas,optax>=0.2}")
    assert "WARNING: job.pip installs pandas, optax>=0.2 without an exact version (==)" in loose
    assert "jax[tpu]==0.8.2 without" not in loose
