"""The timeline's picture: matplotlib on its Agg canvas (no pyplot, no display), an SVG with its text kept as text
(rcParams ``svg.fonttype: none``, so the labels can be searched and read) or a PNG.

matplotlib is imported here only, and only by ``render``: `planb status` without --timeline never loads it.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from planb.errors import PlanbError
from planb.status.job_status import JobStatus
from planb.status.timeline import LANES, Timeline, build

#: Colours of the spans by kind (matplotlib's tab10 palette names); each rung takes the next of RUNG_COLOURS.
COLOURS = {
    "queued": "tab:gray",
    "Provisioned": "tab:green",
    "Failed": "tab:red",
    "waiting": "tab:orange",
}
RUNG_COLOURS = ("tab:blue", "tab:olive", "tab:cyan", "tab:pink", "tab:purple")
#: A span narrower than this share of the axis has its label above the bar, not inside.
NARROW = 0.08
#: Colours of the marks by lane.
MARK_COLOURS = {"Workload": "tab:purple", "moves": "tab:red", "resumes": "tab:brown"}
#: Alternating vertical offsets of labels within a lane, so that labels close in time do not overwrite each other.
OFFSETS = (0.28, -0.28, 0.12, -0.12)


class TimelineDrawError(PlanbError):
    """matplotlib is missing, or the picture cannot be written."""


def _when(epoch: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC)


def draw(job: JobStatus, path: Path) -> None:
    """Write ``job``'s timeline (planb.status.timeline.build) to ``path`` (.svg or .png)."""
    render(build(job), path)


def render(timeline: Timeline, path: Path) -> None:
    """Draw ``timeline`` into ``path``; its suffix (.svg, .png) picks the format."""
    try:
        import matplotlib
        import matplotlib.dates as mdates
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise TimelineDrawError(
            f"--timeline {path} needs matplotlib, which is not installed: {exc}. Fix: pip install 'planb[timeline]'"
        ) from exc

    def x(epoch: float) -> float:
        """matplotlib's date number of a time (days since its epoch)."""
        return float(mdates.date2num(_when(epoch)))  # type: ignore[no-untyped-call]

    rows = {lane: len(LANES) - 1 - i for i, lane in enumerate(LANES)}
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "planb", "font.size": 8}):
        fig = Figure(figsize=(13, 1.2 + 0.9 * len(LANES)), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        rungs: dict[str, str] = {}
        width = max(timeline.end - timeline.start, 1.0)
        for span in timeline.spans:
            start, end = x(span.start), x(max(span.end, span.start + 0.5))
            y = rows[span.lane]
            if span.kind.startswith("rung:"):
                colour = rungs.setdefault(span.kind, RUNG_COLOURS[len(rungs) % len(RUNG_COLOURS)])
            else:
                colour = COLOURS.get(span.kind, "tab:cyan")
            ax.barh(y, end - start, left=start, height=0.5, color=colour, alpha=0.7, edgecolor="black", linewidth=0.5)
            narrow = (span.end - span.start) / width < NARROW
            ax.text(start, y + (0.36 if narrow else 0.0), " " + span.label, va="center", ha="left")
        seen: dict[str, int] = {}
        for mark in sorted(timeline.marks, key=lambda m: m.at):
            n = seen.get(mark.lane, 0)
            seen[mark.lane] = n + 1
            y = rows[mark.lane]
            colour = MARK_COLOURS.get(mark.lane, "black")
            ax.plot([x(mark.at)], [y], marker="v" if mark.lane == "moves" else "o", color=colour)
            if mark.lane == "moves":
                ax.axvline(x(mark.at), color=colour, linestyle="--", linewidth=0.8)
            ax.text(x(mark.at), y + OFFSETS[n % len(OFFSETS)], mark.label, va="center", ha="left", color=colour)
        ax.set_yticks(list(rows.values()), list(rows))
        ax.set_ylim(-0.6, len(LANES) - 0.4)
        ax.set_xlim(x(timeline.start), x(timeline.end))
        ax.xaxis.set_major_locator(mdates.AutoDateLocator())  # type: ignore[no-untyped-call]
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S", tz=datetime.UTC))  # type: ignore[no-untyped-call]
        ax.set_xlabel(f"UTC, {_when(timeline.start):%Y-%m-%d}")
        ax.set_title(f"planb status {timeline.title}: where the job waited, ran and moved")
        ax.grid(axis="x", alpha=0.3)
        try:
            fig.savefig(path, metadata={"Date": None} if path.suffix.lower() == ".svg" else None)
        except OSError as exc:
            raise TimelineDrawError(f"--timeline {path}: cannot write it: {exc}") from exc
