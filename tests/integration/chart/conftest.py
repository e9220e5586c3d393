"""The chart's integration tests share one throwaway API server (tests/support/integration/api_server.py), started
once for the folder: starting one costs about 20 s of CPU beside the e2e tier, and each test names its releases and
objects apart (test_packaged_chart.py in `default`, test_helm_test_queues.py in a namespace of its own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.integration.api_server import stack_api_server


@pytest.fixture(scope="package")
def api_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A throwaway etcd and kube-apiserver on free loopback ports, etcd started from the stack's snapshot (made
    first if this toolchain has none, as `planb local up` does); their kubeconfig, once every CRD it holds is served."""
    with stack_api_server(tmp_path_factory.mktemp("chart-api-server")) as kubeconfig:
        yield kubeconfig
