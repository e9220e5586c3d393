"""What a refusal looks like in ansible-playbook's output: planb's sentence alone, not wrapped in Ansible's words.

A refusal raised while Ansible templates a task's arguments or conditions (a filter in a set_fact, an inventory
lookup that refuses) reaches the user inside Ansible's own sentences; planb runs every validation as a task
instead, whose failure message is planb's sentence. Ansible 2.19 heads every failed task's error line with
"Task failed: Action failed:" (or "Module failed:"); the task's `msg` itself must be planb's sentence.
"""

from __future__ import annotations

import re

#: Ansible's words around an error raised while it templates a task (its arguments, a condition, a filter).
ANSIBLE_WRAPPINGS = (
    "Finalization of task args",
    "Error while resolving value",
    "Error while evaluating conditional",
    "The filter plugin",
)
#: A failed task's `msg` (callback_result_format yaml) that is Ansible's "Task failed: ..." instead of planb's.
_WRAPPED_MSG = re.compile(r"^\s*msg: ['\"]?Task failed:", re.M)


def assert_plain_refusal(output: str, *sentences: str) -> None:
    """`output` shows each of `sentences` and none of Ansible's wrappings around them."""
    for sentence in sentences:
        assert sentence in output, output[-4000:]
    wrapped = [words for words in ANSIBLE_WRAPPINGS if words in output]
    assert not wrapped, f"refusal wrapped in Ansible's words {wrapped}:\n{output[-4000:]}"
    assert not _WRAPPED_MSG.search(output), output[-4000:]
