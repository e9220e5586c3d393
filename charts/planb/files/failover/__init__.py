"""Stockout-aware failover from plan A to plan B: see controller.py."""
