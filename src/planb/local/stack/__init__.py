"""The local Kubernetes stack: kwok control plane, CRDs and the real Kueue as host processes."""
