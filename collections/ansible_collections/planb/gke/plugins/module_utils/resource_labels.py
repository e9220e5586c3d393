# planb.gke: Google Cloud resource labels (a cluster's, a node pool's VMs', a bucket's), checked before any API call.
"""Resource labels as Google Cloud takes them on every resource planb creates, for cost allocation: the cluster's
``resourceLabels``, a node pool's ``config.resourceLabels`` and a bucket's ``labels``.

Google's requirements (DOC_LABELS): at most 64 labels; a key 1-63 characters of lowercase letters, digits, ``_`` and
``-``, starting with a lowercase letter; a value 0-63 of the same characters. planb's policy refuses the international
characters Google also allows, because billing exports and ``gcloud --update-labels`` quote them differently and
the label then matches nothing in the cost report; keys starting ``goog-`` are refused, because Google reserves them
(GKE writes ``goog-gke-*`` on the pools it creates).
"""

from __future__ import annotations

import re
from typing import Any

#: Google Cloud's label requirements.
DOC_LABELS = "https://cloud.google.com/resource-manager/docs/labels-overview#requirements"
#: Google's limit of labels on one resource.
MAX_LABELS = 64
_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
_VALUE = re.compile(r"[a-z0-9_-]{0,63}")


def label_problems(option: str, labels: dict[str, Any] | None) -> list[str]:
    """Why ``labels`` (option ``option``) are not Google Cloud resource labels, one line each; [] when they are."""
    problems: list[str] = []
    given = labels or {}
    if len(given) > MAX_LABELS:
        problems.append(f"{option} has {len(given)} labels: Google allows at most {MAX_LABELS} ({DOC_LABELS})")
    for key, value in given.items():
        text = "" if value is None else str(value)
        if str(key).startswith("goog-"):
            problems.append(f"{option} key {key!r} is refused: Google reserves the prefix goog-; rename the key")
        elif not _KEY.fullmatch(str(key)):
            problems.append(
                f"{option} key {key!r} is not a resource label key: 1-63 lowercase letters, digits, _ or -, starting "
                f"with a letter ({DOC_LABELS}; other scripts: planb's policy); for example cost-center"
            )
        if not _VALUE.fullmatch(text):
            problems.append(
                f"{option} value {text!r} of {key!r} is not a resource label value: at most 63 lowercase letters, "
                f"digits, _ or - ({DOC_LABELS}; other scripts: planb's policy); for example ml-research"
            )
    return problems


def as_labels(labels: dict[str, Any] | None) -> dict[str, str]:
    """The labels as the API takes them: every value a string."""
    return {str(key): "" if value is None else str(value) for key, value in (labels or {}).items()}
