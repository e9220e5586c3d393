"""Progress records (planb.status.progress): what any program prints so that `planb status` shows its goodput.

The logs are shaped as the kubelet's log API gives a submitter pod's (RFC 3339 timestamps with nanoseconds, then the
line), with the records docs/your-code.md defines.
"""

from __future__ import annotations

from planb.kube_objects import parse_time
from planb.status.detail import goodput_lines
from planb.status.goodput import compute
from planb.status.progress import RECORDS, Resume, parse_records
from planb.status.trainlog import parse_log

FIRST = (
    "2026-12-07T10:00:05.000000000Z Job submission server address: http://job-3-head-svc:8265\n"
    '2026-12-07T10:00:06.000000000Z planb-progress {"step": 10, "kept_s": 2.5, "tokens": 5120}\n'
    '2026-12-07T10:00:08.000000000Z planb-progress {"step": 20, "kept_s": 5.0, "tokens": 10240}\n'
)
RESUMED = (
    "2026-12-07T10:01:00.000000000Z Job submission server address: http://job-3-head-svc:8265\n"
    "2026-12-07T10:01:01.000000000Z resuming from step 20\n"
    '2026-12-07T10:01:01.500000000Z planb-progress {"step": 20, "kept_s": 5.0, "tokens": 10240, '
    '"resumes": [{"step": 8, "lost": 1, "kept_s": 2.0, "lost_s": 0.25}, {"step": 20, "lost": 0, "kept_s": 5.0, '
    '"lost_s": 0.0}]}\n'
    '2026-12-07T10:01:03.000000000Z planb-progress {"step": 30, "kept_s": 7.5, "tokens": 15360}\n'
    "2026-12-07T10:01:03.100000000Z planb-progress {not json}\n"
    '2026-12-07T10:01:03.200000000Z planb-progress {"kept_s": 9.0}\n'
)


def test_records_give_the_latest_figure_and_the_tokens() -> None:
    record = parse_records(FIRST)
    assert record is not None
    assert (record.step, record.kept_s, record.tokens, record.resumes) == (20, 5.0, 10240, [])
    assert record.source == RECORDS
    assert record.started == parse_time("2026-12-07T10:00:05Z")


def test_the_newest_list_of_resumes_is_the_history_and_its_last_is_dated_by_its_line() -> None:
    record = parse_records(RESUMED)
    assert record is not None
    assert record.resumes == [
        Resume(8, 1, 2.0, 0.25, None),
        Resume(20, 0, 5.0, 0.0, parse_time("2026-12-07T10:01:01.5Z")),
    ]
    # Lines that are not a record of the format (not JSON, no step) are skipped: the latest is step 30's.
    assert (record.step, record.kept_s, record.tokens) == (30, 7.5, 15360)


def test_records_win_over_train_py_lines_and_without_either_there_is_no_record() -> None:
    both = "training time up to step 99: 50 s kept\n" + FIRST
    record = parse_log(both)
    assert record is not None and record.step == 20 and record.source == RECORDS
    train_py = parse_log("training time up to step 99: 50 s kept\n")
    assert train_py is not None and train_py.source == "train.py" and train_py.tokens is None
    assert parse_log("Job submission server address: x\nplanb-progress [1, 2]\n") is None


def test_status_counts_a_programs_goodput_from_its_records() -> None:
    rayjob = {"metadata": {"namespace": "default", "name": "job-3", "creationTimestamp": "2026-12-07T10:00:00Z"}}
    g = compute(rayjob, None, [], [], [], RESUMED, now=parse_time("2026-12-07T10:01:15Z"))
    assert g.kept_s == 7.5 and g.steps_lost == 1 and g.lost_s == 0.25
    assert g.percent == f"{100 * 7.5 / 75:.1f}%"
    (total,) = [line for line in goodput_lines(g, {}) if line.startswith("    total:")]
    assert "the program's latest record at step 30 (15360 tokens); 1 step(s) lost (0.2s)" in total, total
