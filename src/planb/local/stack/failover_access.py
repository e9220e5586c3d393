"""What the host failover controller runs with: the queues chart's ServiceAccount, not the stack's admin.

Local mode runs the same controller (``python -m planb.failover``) as the cluster does, with the rights
the chart grants: the kueue_queues role's Helm install renders the ServiceAccount and its Roles also when
``failover.inCluster=false``, and this module

* asks the API server for a token of that ServiceAccount (``kubectl create token``, the TokenRequest API:
  https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-request-v1/) and
  writes it to ``failover-token`` (0600) in the state folder, where the controller reads it at every
  request; each start asks for a fresh one;
* copies the local API server's CA (from the stack's kubeconfig) to ``failover-ca.crt``;
* reads plan A's node label from its ResourceFlavor with the stack's kubeconfig, because the chart's
  Roles grant no cluster-scoped read (the in-cluster Deployment gets the label from the chart).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from planb.failover.names import plan_label
from planb.kube import Kube, KubeError
from planb.kubeconfig import KubeconfigError, load
from planb.local.stack.errors import LocalStackError
from planb.local.stack.kubectl import kubectl
from planb.local.statefile import write_atomic

TOKEN_FILE = "failover-token"
CA_FILE = "failover-ca.crt"
#: How long a token lasts; `planb local up` and `planb local failover` ask for a new one at each start.
TOKEN_DURATION = "24h"


@dataclass(frozen=True)
class FailoverAccess:
    server: str
    token_file: Path
    ca_file: Path | None

    def flags(self) -> list[str]:
        ca = [f"--ca-file={self.ca_file}"] if self.ca_file else []
        return [f"--server={self.server}", f"--token-file={self.token_file}", *ca]


def service_account_token(state: Path, kubeconfig: Path, service_account: str) -> FailoverAccess:
    """A fresh token of `service_account` (NAMESPACE/NAME) and where the API server is, as files in `state`."""
    namespace, _, name = service_account.rpartition("/")
    try:
        token = kubectl(
            kubeconfig, ["create", "token", name, "-n", namespace or "default", f"--duration={TOKEN_DURATION}"]
        ).strip()
    except LocalStackError as exc:
        raise LocalStackError(
            f"no token for the failover controller's ServiceAccount {service_account}: {exc}. Fix: install the "
            "queues chart with failover.afterMinutes > 0 (the kueue_queues role does, playbooks/kueue.yml)"
        ) from exc
    try:
        conn = load(kubeconfig)
    except KubeconfigError as exc:
        raise LocalStackError(str(exc)) from exc
    token_file = state / TOKEN_FILE
    write_atomic(token_file, token + "\n", private=True)
    ca_file = None
    if conn.ca_file:
        ca_file = state / CA_FILE
        write_atomic(ca_file, Path(conn.ca_file).read_bytes())
    return FailoverAccess(server=conn.server, token_file=token_file, ca_file=ca_file)


def plan_a_label(kubeconfig: Path, flavor: str) -> tuple[str, str]:
    """The node label plan A's ResourceFlavor selects: planb.dev/plan when it has it, else its first key that is
    not one of the profile's accelerator labels (planb.failover.names.plan_label)."""
    try:
        found = Kube(kubeconfig).get(f"/apis/kueue.x-k8s.io/v1beta2/resourceflavors/{flavor}")
    except KubeError as exc:
        raise LocalStackError(f"ResourceFlavor {flavor} could not be read: {exc}") from exc
    labels = dict(((found or {}).get("spec") or {}).get("nodeLabels") or {})
    if not labels:
        raise LocalStackError(
            f"ResourceFlavor {flavor} is missing or has no nodeLabels, so plan A cannot be excluded. "
            "Fix: install the queues chart (the kueue_queues role) before switching failover on"
        )
    label = plan_label(labels)
    if label is None:
        raise LocalStackError(
            f"ResourceFlavor {flavor} selects only the profile's accelerator labels, none of plan A's pools, so plan A "
            "cannot be excluded. Fix: give plan A's pools a label of their own (planb.dev/plan, the admin role's)"
        )
    return label
