"""Every TPU machine type's vCPUs and memory are those GKE's cluster autoscaler gives its nodes.

The table below is GoogleCloudPlatform/cluster-autoscaler at 7d25050,
pkg/cloudprovider/gke/machinetypes/deprecated_machine_types_config.go: ``NewMachineTypeInfo(name, vCPUs, GiB)``
(machine_type.go L367: memory is ``memoryGb * units.GiB``), copied by hand with each line.
"""

from __future__ import annotations

import pytest

from planb.catalog import tpu
from planb.local.capacity import machines

TABLE = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"

# machine type: (vCPUs, GiB, the table's line)
GKE_AUTOSCALER = {
    "ct4p-hightpu-4t": (240, 407, 1431),
    "ct5lp-hightpu-1t": (24, 48, 1503),
    "ct5lp-hightpu-4t": (112, 192, 1502),
    "ct5lp-hightpu-8t": (224, 384, 1501),
    "ct5p-hightpu-4t": (208, 448, 1535),
    "ct6e-standard-1t": (44, 176, 1571),
    "ct6e-standard-4t": (180, 720, 1573),
    "ct6e-standard-8t": (180, 1440, 1575),
    "tpu7x-standard-4t": (224, 992, 2768),
}


def test_the_table_covers_every_tpu_machine_type_of_the_catalog() -> None:
    assert sorted(GKE_AUTOSCALER) == sorted(m.name for g in tpu.GENERATIONS for m in g.machine_types)


@pytest.mark.parametrize("name", sorted(GKE_AUTOSCALER))
def test_each_shape_is_the_gke_autoscalers(name: str) -> None:
    found = tpu.find_machine(name)
    assert found is not None
    machine = found[1]
    vcpus, gib, _line = GKE_AUTOSCALER[name]
    assert (machine.vcpus, machine.memory_gib) == (vcpus, gib)
    # The simulator sizes its nodes from the same shape.
    shape = machines.machine(name)
    assert (shape.vcpus, shape.memory_gib) == (vcpus, gib)


@pytest.mark.parametrize(("name", "line"), [("ct6e-standard-8t", "#L1575"), ("tpu7x-standard-4t", "#L2768")])
def test_the_two_shapes_google_pages_do_not_give_cite_the_table_line(name: str, line: str) -> None:
    found = tpu.find_machine(name)
    assert found is not None
    url = found[1].shape_url
    assert url.startswith(TABLE + "pkg/cloudprovider/gke/machinetypes/deprecated_machine_types_config.go" + line)
