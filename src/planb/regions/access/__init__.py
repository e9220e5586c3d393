"""What the regions keeper and dispatcher share: reaching a region from the manager (connection, kubeconfig) and
reading what Kueue and KubeRay write on the objects MultiKueue makes (kueue_objects)."""
