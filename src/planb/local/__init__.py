"""The local wing: what stands in on this machine for the parts only Google and Ray run.

Nothing here runs on a real cluster. ``gke_emulator`` is the GKE and Google Cloud APIs the planb.gke
collection calls; ``capacity`` is GKE's cluster autoscaler and Dynamic Workload Scheduler; ``rayhead`` is
the Ray head KubeRay submits to; ``stack`` starts the real Kubernetes control plane, Kueue and the stand-ins
as host processes. What only these use lives here too: the state files (``statefile``), host processes
(``process``), loopback ports (``loopback``), the local CA (``tls``) and the watch cache (``informer``).
The product (``planb.catalog``, ``planb.status``, ``planb.failover``, ``planb.cli``) imports nothing from
here, and nothing of it is imported only from here; ``planb.cli`` names the local sub-commands' modules and
loads one only when it runs (tests/unit/test_imports.py).
"""
