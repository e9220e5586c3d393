"""The kinds of Google capacity a rung of the ladder can be: one entry each, read by every part that lists them.

A plan of the inventory's ``planb_plans`` (one rung) names its kind; everything planb does differently by kind is a
field of the kind's entry here: the GKE node pool settings its pools get, the project quota they draw on, the
provisioning model Google's capacity APIs name for its VMs, whether it answers at once or queues, whether a ladder
may hold only one of it, the node labels and tolerations of its Kueue flavor, and whether it is bound to a
reservation. ``make generate`` copies the entries where the product cannot import this package: the collection's
``module_utils/_generated/rung_kinds.py`` (planb.build.collection: the ladder filter, the day-0 check, the playbooks'
Jinja through ``planb.gke.rung_kinds``), the chart's ``files/rung-kinds.yaml`` and its schema's ``kind`` enum
(planb.build.chart_files). ``planb.regions`` reads the provisioning models here.

A new kind is a new entry; DEVELOPING.md's recipe "Add a capacity rung" says what else changes (the stand-ins'
behaviour), and ``tests/unit/catalog/test_rung_kinds.py`` adds one to a copy of this list to show it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from planb.catalog import quotas

#: GKE: Spot VMs in Standard node pools; the nodes' cloud.google.com/gke-spot label, the taint it recommends.
DOC_SPOT = "https://cloud.google.com/kubernetes-engine/docs/how-to/spot-vms"
#: GKE: consuming a specific (or a shared) Compute Engine reservation in a node pool.
DOC_RESERVATIONS = "https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations"
#: GKE: flex-start VMs with queued provisioning (a ProvisioningRequest, the tutorial's plan B).
DOC_FLEX_START = "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest"
#: GKE's own node pool fields with planb's defaults: the gke_node_pool role's variables without its prefix, which a
#: kind's ``pool_settings`` override (NodeConfig.reservationAffinity, queuedProvisioning, flexStart, spot, ...).
BASE_SETTINGS: Mapping[str, Any] = {
    "reservation_affinity": "NO_RESERVATION",
    "reservation": "",
    "queued_provisioning": False,
    "flex_start": False,
    "spot": False,
    "auto_repair": True,
    "location_policy": "",
    "taints": [],
}
#: The label GKE puts on Spot nodes itself, and the taint its Spot page recommends so only pods that tolerate it land.
SPOT_LABEL = "cloud.google.com/gke-spot"
SPOT_TAINT: Mapping[str, str] = {"key": SPOT_LABEL, "value": "true", "effect": "NoSchedule"}


@dataclass(frozen=True)
class RungKind:
    """One kind of Google capacity a rung can be, and everything planb does differently for it."""

    #: The plan's ``kind`` in the inventory and the chart's ``queues.ladder[].kind``.
    name: str
    #: Words for people after the name in lists ("dws (flex-start, queued provisioning)"); "" for none.
    summary: str
    #: The Google page that documents how GKE provides it.
    doc_url: str
    #: The gke_node_pool role's variables (without the prefix) its pools set over BASE_SETTINGS.
    pool_settings: Mapping[str, Any]
    #: The project quota its pools draw on (quotas.ON_DEMAND or quotas.PREEMPTIBLE), None when they draw on none
    #: (a reservation's VMs took their quota when it was made).
    quota: str | None
    #: Compute Engine's provisioning model of its VMs, as capacity advice names it (compute v1
    #: CapacityAdviceRequestInstancePropertiesScheduling.provisioningModel: STANDARD, SPOT, FLEX_START,
    #: RESERVATION_BOUND).
    provisioning_model: str
    #: True when GKE queues a request for it (a ProvisioningRequest Kueue's admission check waits on: the chart needs
    #: dws.enabled), False when it answers at once (grants or stocks out).
    queued: bool
    #: True when a ladder may hold only one plan of it (planb's policy: two rungs of one kind and profile draw on the
    #: same Google capacity, so the second only splits the first's quota).
    one_per_ladder: bool
    #: True when Kueue admitting a job on it means GKE has the capacity (a queued request provisioned, or a
    #: reservation's room): only such kinds may be a MultiKueue region's rungs (docs/regions.md, section 2).
    admission_means_capacity: bool
    #: True when its pools consume one named Compute Engine reservation (the plan's ``reservation``).
    reservation_bound: bool
    #: Node labels its Kueue flavor selects besides the plan's own (labels GKE puts on such nodes itself).
    node_labels: Mapping[str, str] = field(default_factory=dict)
    #: Tolerations its Kueue flavor gives the pods it admits (Kueue adds a flavor's tolerations to them).
    tolerations: tuple[Mapping[str, str], ...] = ()

    def settings(self) -> dict[str, Any]:
        """Its pools' GKE settings: BASE_SETTINGS with its own over them (fresh lists, so callers may change them)."""
        merged = dict(BASE_SETTINGS, **self.pool_settings)
        merged["taints"] = [dict(taint) for taint in merged["taints"]]
        return merged

    def facts(self) -> dict[str, Any]:
        """The entry as JSON data, for the generated copies."""
        return {
            "name": self.name,
            "summary": self.summary,
            "doc_url": self.doc_url,
            "settings": self.settings(),
            "quota": self.quota,
            "provisioning_model": self.provisioning_model,
            "queued": self.queued,
            "one_per_ladder": self.one_per_ladder,
            "admission_means_capacity": self.admission_means_capacity,
            "reservation_bound": self.reservation_bound,
            "node_labels": dict(self.node_labels),
            "tolerations": [dict(t) for t in self.tolerations],
        }


#: The kinds, in the order a ladder usually climbs them (the inventory sets the order of its own ladder).
KINDS: tuple[RungKind, ...] = (
    # A pool consuming an ordinary specific reservation makes STANDARD VMs ("Standard provisioning with user controlled
    # runtime", the enum's description); RESERVATION_BOUND is the model of VMs made from a future reservation in
    # calendar mode or in AI Hypercomputer (https://cloud.google.com/compute/docs/instances/about-reservation-bound-vms).
    RungKind(
        name="reservation",
        summary="",
        doc_url=DOC_RESERVATIONS,
        pool_settings={"reservation_affinity": "SPECIFIC_RESERVATION"},
        quota=None,
        provisioning_model="STANDARD",
        queued=False,
        one_per_ladder=False,
        admission_means_capacity=True,
        reservation_bound=True,
    ),
    # The tutorial's plan A.
    RungKind(
        name="on-demand",
        summary="",
        doc_url="https://cloud.google.com/compute/docs/instances/provisioning-models",
        pool_settings={},
        quota=quotas.ON_DEMAND,
        provisioning_model="STANDARD",
        queued=False,
        one_per_ladder=True,
        admission_means_capacity=False,
        reservation_bound=False,
    ),
    # The tutorial's plan B: auto-repair off and location policy ANY are planb's policy for flex-start pools
    # (the collection's module_utils/validate.py says why).
    RungKind(
        name="dws",
        summary="flex-start, queued provisioning",
        doc_url=DOC_FLEX_START,
        pool_settings={"queued_provisioning": True, "flex_start": True, "auto_repair": False, "location_policy": "ANY"},
        quota=quotas.PREEMPTIBLE,
        provisioning_model="FLEX_START",
        queued=True,
        one_per_ladder=True,
        admission_means_capacity=True,
        reservation_bound=False,
    ),
    RungKind(
        name="spot",
        summary="",
        doc_url=DOC_SPOT,
        pool_settings={"spot": True, "taints": [SPOT_TAINT]},
        quota=quotas.PREEMPTIBLE,
        provisioning_model="SPOT",
        queued=False,
        one_per_ladder=True,
        admission_means_capacity=False,
        reservation_bound=False,
        node_labels={SPOT_LABEL: "true"},
        tolerations=({"key": SPOT_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"},),
    ),
)


def names(kinds: tuple[RungKind, ...] | None = None) -> list[str]:
    """The kinds' names, in order."""
    return [kind.name for kind in (KINDS if kinds is None else kinds)]


def get(name: str) -> RungKind | None:
    """The kind named ``name``, None when planb knows none of that name."""
    return next((kind for kind in KINDS if kind.name == name), None)


def described(kinds: tuple[RungKind, ...] | None = None) -> str:
    """The kinds for people: "reservation, on-demand, dws (flex-start, queued provisioning) or spot"."""
    words = [kind.name + (f" ({kind.summary})" if kind.summary else "") for kind in (KINDS if kinds is None else kinds)]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
