"""The calendar watch: for a TPU job that waited past the operator's bound, what Compute Engine's calendar mode offers
for its shape in each region (docs/regions.md, "Calendar mode for the long wait")."""
