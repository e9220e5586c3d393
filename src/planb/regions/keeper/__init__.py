"""The regions keeper, one controller on the MultiKueue manager: it quarantines a lost region (quarantine), releases the
quota an evicted RayJob holds (release, grace, unreached) and lets a region back once nothing stale is left (rejoin,
leftovers); each tick reads (reads), decides over what it read (these) and writes (writes) (docs/regions.md,
section 4)."""
