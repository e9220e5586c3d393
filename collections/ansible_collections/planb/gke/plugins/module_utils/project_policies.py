# planb.gke: the day-0 check's reads of the image and encryption policies an organisation may enforce.
"""Two organisation policies a GKE cluster of planb's meets only if the organisation allows it, read with the Org Policy
API's effective policy by ``project_org_policies.policy_findings`` with the others, which runs ``CHECKS`` on their
rules:

* ``constraints/compute.trustedImageProjects`` (a list constraint): Compute Engine boots a VM only from an image of a
  project the policy allows (DOC_TRUSTED_IMAGES). GKE's nodes boot Container-Optimized OS images from the project
  ``gke-node-images`` (DOC_GKE_IMAGES: "allow ... projects/gke-node-images"), so a policy that does not allow it stops
  every node pool, default-pool included. A blocker, Google's.
* ``constraints/gcp.restrictNonCmekServices`` (a list constraint): its denied values are the services whose new
  resources must be encrypted with a customer-managed key (DOC_CMEK_POLICY). planb creates the cluster (GKE,
  ``container.googleapis.com``), its nodes' boot disks (``compute.googleapis.com``) and the checkpoint bucket
  (``storage.googleapis.com``) without one, so Google refuses each such create. A blocker, Google's; planb sets no
  key (no ``bootDiskKmsKey``, ``databaseEncryption`` or bucket default key), so the fix is an exception or a
  cluster made outside planb.

A rule with a value group (``in:...``) or a condition cannot be decided here: a note.
"""

from __future__ import annotations

from typing import Any

Body = dict[str, Any]
#: One finding of a check: what is refused, the fix, and whether it is a blocker (False: a note).
Found = tuple[str, str, bool]

DOC_TRUSTED_IMAGES = "https://cloud.google.com/compute/docs/images/restricting-image-access"
DOC_GKE_IMAGES = "https://cloud.google.com/kubernetes-engine/docs/concepts/node-images"
DOC_CMEK_POLICY = "https://cloud.google.com/kms/docs/cmek-org-policy"
#: The project GKE's node images come from.
GKE_IMAGES = "projects/gke-node-images"
#: The services whose resources planb creates without a customer-managed key.
PLANB_SERVICES = ("container.googleapis.com", "compute.googleapis.com", "storage.googleapis.com")


def _listed(rules: list[Body], key: str) -> list[str]:
    return [str(v) for r in rules for v in (r.get("values") or {}).get(key) or []]


def _bare(value: str) -> str:
    """A list value without Org Policy's ``is:`` prefix."""
    return value[3:] if value.startswith("is:") else value


def _exception(constraint: str, project: str) -> str:
    return (
        "ask your organisation policy administrator (roles/orgpolicy.policyAdmin) for an exception on project "
        f"{project} (`gcloud org-policies describe {constraint} --effective --project {project}` shows the rules)"
    )


def _images(rules: list[Body], project: str) -> list[Found]:
    name = "constraints/compute.trustedImageProjects"
    allowed = [_bare(v) for v in _listed(rules, "allowedValues")]
    denied = [_bare(v) for v in _listed(rules, "deniedValues")]
    if any(r.get("allowAll") for r in rules) or (
        not allowed and not denied and not any(r.get("denyAll") for r in rules)
    ):
        return []
    if GKE_IMAGES in allowed and GKE_IMAGES not in denied:
        return []
    if any(v.startswith("in:") or v.startswith("under:") for v in allowed) and GKE_IMAGES not in denied:
        return [(f"{name} allows value groups the check cannot expand", f"make sure they include {GKE_IMAGES}", False)]
    return [
        (
            f"{name} does not allow {GKE_IMAGES} on project {project}: Compute Engine boots a VM only from an image "
            f"of a trusted project ({DOC_TRUSTED_IMAGES}), and GKE's nodes boot from that project's images "
            f"({DOC_GKE_IMAGES}), so no node pool of the cluster, default-pool included, gets a node",
            f"add {GKE_IMAGES} to the policy's allowed values (`gcloud org-policies set-policy` with "
            f"allowedValues: [{GKE_IMAGES}]), or " + _exception("compute.trustedImageProjects", project),
            True,
        )
    ]


def _cmek(rules: list[Body], project: str) -> list[Found]:
    name = "constraints/gcp.restrictNonCmekServices"
    denied = {_bare(v) for v in _listed(rules, "deniedValues")}
    every = any(r.get("denyAll") for r in rules)
    hit = [s for s in PLANB_SERVICES if every or s in denied]
    if not hit:
        if any(v.startswith("in:") for v in denied):
            groups = f"{name} denies value groups the check cannot expand"
            return [(groups, f"make sure they do not include {', '.join(PLANB_SERVICES)}", False)]
        return []
    return [
        (
            f"{name} requires customer-managed encryption keys for {', '.join(hit)} on project {project} "
            f"({DOC_CMEK_POLICY}): Google refuses a resource of those services created without one, and planb "
            "creates the cluster, its nodes' boot disks and the checkpoint bucket without a key",
            "ask for those services to be left out of the policy's denied values on this project, or "
            + _exception("gcp.restrictNonCmekServices", project),
            True,
        )
    ]


#: The checks by constraint, which project_org_policies.policy_findings runs on each one's unconditional rules.
CHECKS = {"compute.trustedImageProjects": _images, "gcp.restrictNonCmekServices": _cmek}
