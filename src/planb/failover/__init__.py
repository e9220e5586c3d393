"""Stockout-aware failover from plan A to plan B (issue 14): see controller.py."""
