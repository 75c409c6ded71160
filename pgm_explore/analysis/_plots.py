"""Plots of a transcript, drawn with matplotlib from the tables.

matplotlib is imported inside the functions, so that ``import pgm_explore.analysis`` (and the
``pgm-explore table`` command) works without it. Every function draws on ``ax`` when given, else on
a new pyplot figure, and returns the Axes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pgm_explore.analysis._columns import FEASIBILITY_COLUMNS
from pgm_explore.analysis._feasibility import _feasibility_requests, pa_status_counts
from pgm_explore.dialogue import Message, Transcript, simple_time_seconds
from pgm_explore.spec import DATA_TYPES, OVERALLS
from pgm_explore.spec.process_actions import PA_STATUS_CODES

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_feasibility", "plot_pa_status", "plot_timeline"]

# Ack green, the failures in colours that stay apart, what is not known grey. The values come
# from spec (zip's strict: a code added there without a colour here fails at import).
_UNKNOWN_COLOURS = {"other": "black", "not reported": "lightgrey"}
_STATUS_COLOURS: Mapping[str, str] = {
    **dict(
        zip(
            PA_STATUS_CODES,
            [
                "tab:green",
                "tab:red",
                "tab:purple",
                "tab:brown",
                "tab:pink",
                "tab:orange",
                "gold",
                "tab:cyan",
                "tab:olive",
                "tab:blue",
            ],
            strict=True,
        )
    ),
    **_UNKNOWN_COLOURS,
}
_OVERALL_COLOURS: Mapping[str, str] = {
    **dict(zip(OVERALLS, ("tab:green", "gold", "tab:red"), strict=True)),
    **_UNKNOWN_COLOURS,
}
_TYPE_COLOURS: Mapping[str, str] = {
    "PC Prompt": "tab:gray",
    "BKN-PRC": "tab:blue",
    "BKN-DAC": "tab:orange",
    "BKN-PAL": "tab:green",
}
_MODE_MARKERS: Mapping[str | None, str] = {None: "*", "RQ": ">", "RS": "<"}
_NO_DIALOG = "(no DialogID)"


def _axes(ax: Axes | None, size: tuple[float, float] = (7.0, 4.0)) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new = plt.subplots(figsize=size, layout="constrained")
    return new


def _integer_y(ax: Axes) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _legend(ax: Axes, **kwargs: Any) -> None:
    # matplotlib warns when asked for a legend with nothing to put in it (an empty transcript).
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def plot_pa_status(t: Transcript, *, ax: Axes | None = None, predicted: bool = False) -> Axes:
    """Bar chart of :func:`pa_status_counts`: how many steps got each of the ten PA Status codes.

    With ``predicted=True`` the heuristic's predictions stand beside the reported statuses (two bars
    per code), which shows where the ActionContext and Domain Access disagree in bulk.
    """
    ax = _axes(ax)
    codes = list(PA_STATUS_CODES)
    reported = pa_status_counts(t)["count"].tolist()
    positions = list(range(len(codes)))
    colours = [_STATUS_COLOURS[c] for c in codes]
    if predicted:
        guessed = pa_status_counts(t, predicted=True)["count"].tolist()
        ax.bar([p - 0.2 for p in positions], reported, width=0.4, color=colours, label="reported")
        ax.bar(
            [p + 0.2 for p in positions],
            guessed,
            width=0.4,
            color=colours,
            alpha=0.45,
            hatch="//",
            edgecolor="black",
            label="predicted (heuristic)",
        )
        _legend(ax)
    else:
        ax.bar(positions, reported, color=colours)
    ax.set_xticks(positions, codes, rotation=45, ha="right")
    ax.set_ylabel("steps")
    ax.set_title("PA Status of the feasibility steps")
    _integer_y(ax)
    return ax


def plot_feasibility(t: Transcript, *, ax: Axes | None = None, by: Literal["step", "request"] = "step") -> Axes:
    """Feasibility outcomes per dialogue, as stacked bars (one bar per DialogID, in order of appearance).

    ``by="step"`` stacks the reported PA Status of every step of the dialogue's feasibility
    Requests (``not reported`` while unanswered); ``by="request"`` stacks the Overall of each
    feasibility Request (``feasible``, ``partially_feasible``, ``infeasible``, ``not reported``).
    """
    if by not in ("step", "request"):
        raise ValueError(f"by must be 'step' or 'request', not {by!r}")
    ax = _axes(ax)
    counts: dict[str, Counter[str]] = {}
    status_index = FEASIBILITY_COLUMNS.index("PAStatus")
    palette = _STATUS_COLOURS if by == "step" else _OVERALL_COLOURS
    for request in _feasibility_requests(t):
        tally = counts.setdefault(request.dialog or _NO_DIALOG, Counter())
        values = [row[status_index] for row in request.rows] if by == "step" else [request.overall]
        for value in values:
            category = "not reported" if value is None else value if value in palette else "other"
            tally[category] += 1
    dialogs = list(counts)
    positions = list(range(len(dialogs)))
    bottom = [0] * len(dialogs)
    for category, colour in palette.items():
        heights = [counts[d][category] for d in dialogs]
        if any(heights):
            ax.bar(positions, heights, bottom=bottom, color=colour, label=category)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_xticks(positions, dialogs, rotation=30, ha="right")
    ax.set_xlabel("DialogID")
    ax.set_ylabel("steps" if by == "step" else "feasibility Requests")
    ax.set_title("PA Status per dialogue" if by == "step" else "Overall feasibility per dialogue")
    _integer_y(ax)
    _legend(ax, fontsize="small")
    return ax


def plot_timeline(t: Transcript, *, ax: Axes | None = None, x: Literal["auto", "time", "position"] = "auto") -> Axes:
    """The turns of every dialogue: one row per DialogID, a marker per message, a line per exchange.

    Markers: ``*`` a PC Prompt, ``>`` a Request, ``<`` a Response, coloured by data type; a line joins
    a Request to its Response, and a red ring marks a Request still unanswered. ``x="time"`` places
    messages at their QueryTime (PCPromptTime), in seconds since the earliest one, leaving out those
    without a readable time; ``x="position"`` at their order in the transcript; ``x="auto"`` (the
    default) uses time when every message has one and all are absolute or all relative.
    """
    if x not in ("auto", "time", "position"):
        raise ValueError(f"x must be 'auto', 'time' or 'position', not {x!r}")
    plotted = [m for m in t.messages if m.type is not None]
    if x == "auto":
        reads = [_clock(m) for m in plotted]
        x = "time" if reads and None not in reads and len(set(reads)) == 1 else "position"
    where: dict[int, float] = {}
    if x == "time":
        times = {m.position: m.time for m in plotted if m.time is not None}
        start = min(times.values(), default=0.0)
        where = {position: time - start for position, time in times.items()}
    else:
        where = {m.position: float(m.position) for m in plotted}

    rows: dict[str, int] = {}
    for m in plotted:
        if m.position in where:
            rows.setdefault(m.dialog or _NO_DIALOG, len(rows))
    ax = _axes(ax, (8.0, 1.5 + 0.45 * max(len(rows), 1)))

    for e in t.exchanges():
        if e.response is not None and e.request.position in where and e.response.position in where:
            row = rows[e.dialog]
            ax.plot(
                [where[e.request.position], where[e.response.position]],
                [row, row],
                color=_TYPE_COLOURS.get(e.type, "black"),
                alpha=0.5,
                zorder=1,
            )
        elif e.response is None and e.request.position in where:
            ax.scatter(
                [where[e.request.position]],
                [rows[e.dialog]],
                s=160,
                facecolors="none",
                edgecolors="red",
                zorder=3,
                label="unanswered",
            )
    for dt in DATA_TYPES:
        for mode, marker in _MODE_MARKERS.items():
            group = [m for m in plotted if m.type == dt.name and m.mode == mode and m.position in where]
            if group:
                ax.scatter(
                    [where[m.position] for m in group],
                    [rows[m.dialog or _NO_DIALOG] for m in group],
                    marker=marker,
                    s=60,
                    color=_TYPE_COLOURS[dt.name],
                    zorder=2,
                    label=f"{dt.name} {mode}" if mode else dt.name,
                )
    ax.set_yticks(list(rows.values()), list(rows))
    ax.set_ylim(max(len(rows), 1) - 0.5, -0.5)  # the first dialogue on top; one empty row when nothing is drawn
    ax.set_xlabel("seconds since the first message" if x == "time" else "position in the transcript")
    ax.set_title("Dialogue timeline")
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))  # one "unanswered" entry, however many rings
    if unique:
        ax.legend(unique.values(), unique.keys(), fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return ax


def _clock(message: Message) -> bool | None:
    """Whether the message's time is absolute (True) or relative (False); None when unreadable."""
    read = simple_time_seconds(message.get("QueryTime", message.get("PCPromptTime")))
    return read[0] if read else None
