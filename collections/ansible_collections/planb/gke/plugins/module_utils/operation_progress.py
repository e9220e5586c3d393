# planb.gke: what each poll of a GKE long-running operation showed.
"""Every poll of an operation goes into the module's result (``operations[].progress``, printed with -v), as modules
cannot stream output: its elapsed time, status and GKE's ``progress`` (``poll_entry``; GkeClient.wait polls)."""

from __future__ import annotations

from typing import Any

Body = dict[str, Any]

# The shapes are the container v1 discovery document's Operation.progress (name, status, metrics, stages: each an
# OperationProgress), each Metric a name with intValue (a string), doubleValue or stringValue.
#: A Metric's value fields, in the order read; GKE sets one.
_VALUE_FIELDS = ("intValue", "doubleValue", "stringValue")


def metric_value(metric: Body) -> Any:
    """A Metric's value: intValue as an int (the document's int64 travels as a string), else doubleValue or
    stringValue as given; None when it carries none."""
    for field in _VALUE_FIELDS:
        if field in metric:
            value = metric[field]
            if field == "intValue":
                try:
                    return int(value)
                except (TypeError, ValueError):
                    return value
            return value
    return None


def metrics(progress: Body) -> dict[str, Any]:
    """An OperationProgress's metrics as ``{name: value}``; metrics without a name are left out."""
    found = [metric for metric in progress.get("metrics") or [] if isinstance(metric, dict) and metric.get("name")]
    return {str(metric["name"]): metric_value(metric) for metric in found}


def stages(progress: Body) -> list[Body]:
    """An OperationProgress's stages, each ``{name, status, metrics}`` (a stage's own stages are left out)."""
    found = [stage for stage in progress.get("stages") or [] if isinstance(stage, dict)]
    return [{"name": stage.get("name"), "status": stage.get("status"), "metrics": metrics(stage)} for stage in found]


def poll_entry(op: Body, elapsed_s: float) -> Body:
    """One poll: seconds since the wait began, the operation's status and, when GKE sent ``progress``, its metrics
    (and stages, when it has any)."""
    entry: Body = {"elapsed_s": round(elapsed_s, 1), "status": op.get("status")}
    progress = op.get("progress")
    if isinstance(progress, dict):
        entry["metrics"] = metrics(progress)
        found = stages(progress)
        if found:
            entry["stages"] = found
    return entry
