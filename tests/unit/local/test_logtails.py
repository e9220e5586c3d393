"""A failed `up` from nothing removes its state; its error keeps the newest logs' last lines (stack.logtails)."""

from __future__ import annotations

import os
from pathlib import Path

from planb.local.stack.logtails import log_tails


def test_the_newest_logs_come_first_with_their_last_lines_only(tmp_path: Path) -> None:
    (tmp_path / "kwok" / "logs").mkdir(parents=True)
    old = tmp_path / "kueue.log"
    old.write_text("k1\nk2\n")
    os.utime(old, (1, 1))
    new = tmp_path / "kwok" / "logs" / "kube-controller-manager.log"
    new.write_text("".join(f"line {n}\n" for n in range(20)))
    (tmp_path / "kubeconfig").write_text("not a log")

    said = log_tails(tmp_path, logs=2, lines=3)

    assert said.index("kwok/logs/kube-controller-manager.log") < said.index("kueue.log")
    assert "line 19" in said and "line 17" in said and "line 16" not in said
    assert "k2" in said and "not a log" not in said


def test_no_logs_say_nothing(tmp_path: Path) -> None:
    assert log_tails(tmp_path) == ""
    assert log_tails(tmp_path / "missing") == ""
