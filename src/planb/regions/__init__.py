"""The MultiKueue manager's side of planb across regions (docs/regions.md): reaching each region with the
access Kueue's MultiKueue uses (access), and the keeper that does what Kueue v0.19.2 leaves open when a region is
lost (decisions, keeper): quarantine, release of the quota an evicted RayJob holds, and a clean rejoin."""
