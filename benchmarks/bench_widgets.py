"""Per-edit speed of the MessageComposer on a full BKN-DAC Response (target, issue 21: median
under 1 ms with drafts on), and the widget models each composer sends to the browser (target: a
BKN-DAC Response under 120).

One edit is what a keystroke in the browser costs the kernel: a field's widget gets a new
value, the composer rebuilds ``value`` from the form, validates it, moves the finding marks,
updates the badge, the summary table and the JSON view, and keeps the draft's content for the
writer (a background thread writes it at most about once a second: ``_drafts.DraftSchedule``; the
Download link is made when clicked, not at an edit). Measured headless (no front end attached:
the comm messages are built but not sent), with drafts on and off in the same run.

A widget model is what the browser builds a view for: every widget, and every Layout and Style
object, is one model, sent when the composer is displayed (the browser takes them in one by
one, which is most of the time from Run to a usable form). Counted as the growth of ipywidgets'
registry of widgets while one composer is built, for each data type and mode, then for a full
BKN-DAC Response with its expert view closed and opened.

Run: ``.venv/bin/python benchmarks/bench_widgets.py [--edits N]``.
Prints the widget models per composer, the time to build the composer, then the median and
p95 of N edits (default 200) cycling through text, enumeration, number and array edits, half
of them introducing or fixing a finding, with drafts on and with drafts off, and their ratio. No assertion: the figures are for docs/widgets.md and
for regressions. ``benchmarks/bench_browser.py`` measures the time from Run to a usable form
in Chromium.
"""

from __future__ import annotations

import argparse
import copy
import functools
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import ipywidgets

from pgm_explore.spec import DATA_TYPES
from pgm_explore.widgets import MessageComposer

TARGET_MS = 1.0
TARGET_MODELS = 120


def widget_models() -> set[str]:
    """The ids of the widget models alive in this process (ipywidgets' registry)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Widget.widgets: the registry, read-only here
        return set(ipywidgets.Widget.widgets)


def models_made(build: Callable[[], Any]) -> tuple[int, Any]:
    """How many widget models ``build()`` left alive, and what it returned."""
    before = widget_models()
    made = build()
    return len(widget_models() - before), made


def print_models() -> int:
    """Print the widget models per composer for each data type and mode; the BKN-DAC Response count."""
    print("widget models per composer (a fresh composer; the expert view closed):")
    response = 0
    for spec in DATA_TYPES:
        for mode in spec.modes or (None,):
            count, _ = models_made(functools.partial(MessageComposer, spec.name, mode, draft_dir=False))
            print(f"  {spec.name:10} {mode or '--':3} {count:4d}")
            if spec.name == "BKN-DAC" and mode == "RS":
                response = count
    count, full = models_made(lambda: MessageComposer.from_document(full_dac_response(), draft_dir=False))
    opened, _ = models_made(lambda: setattr(full._form.expert_toggle, "value", True))
    print(f"  full BKN-DAC Response: {count} models, {count + opened} with the expert view opened")
    print(
        f"target: a BKN-DAC Response composer under {TARGET_MODELS}: {'met' if response < TARGET_MODELS else 'NOT met'}"
    )
    return response


def _time(label: str, ident: str) -> dict[str, Any]:
    return {
        "Header": "OSD-STM-V1.5",
        "SimpleTimeID": f"st-{ident}",
        "SimpleTimeData": [
            {
                "FlagsByte": 3,
                "StartTime": 1794651346300,
                "EndTime": 1794651346300,
                "AccuracyMode": "single",
                "AccuracyPlusMinus": 5,
                "TimeType": True,
                "TimeUnit": "01",
            }
        ],
    }


def full_dac_response() -> dict[str, Any]:
    """A BKN-DAC Response with every Response property filled, arrays of several items."""
    ident = "kda-bench-0002"
    return {
        "Header": "PGM-KDA-V1.0",
        "Mode": "RS",
        "MInstance": "mi-agora-market",
        "UEnvironment": "ue-flat-turin-12",
        "SessionID": "ses-bench",
        "QueryID": ident,
        "QueryTime": _time("q", ident),
        "DialogID": "dlg-bench-dac",
        "TurnIndex": 4,
        "RequestID": "kda-bench-0001",
        "Outcome": "partially_answered",
        "Answer": {
            "ObjectClasses": [
                {"Class": "Lantern", "Label": "blue glass lantern", "Confidence": 0.92},
                {"Class": "Stall", "Label": "glassware stall", "Confidence": 0.88},
                {"Class": "Vendor", "Label": "stall keeper", "Confidence": 0.75},
            ],
            "Relations": [
                {"Subject": "item-lantern-blue-114", "Predicate": "on_shelf_of", "Object": "stall-07"},
                {"Subject": "stall-07", "Predicate": "owned_by", "Object": "proc-vendor-lucia"},
            ],
            "Affordances": [
                {"EntityID": "item-lantern-blue-114", "Class": "Lantern", "Action": "MM-Add"},
                {"EntityID": "stall-07", "Class": "Stall", "Action": "MM-Move"},
            ],
            "Constraints": ["Payment before pick-up.", "At most one lantern per visitor."],
            "BehaviouralExpectations": ["Greet the stall keeper.", "Ask before touching glassware."],
            "Text": "The blue lantern is on the top shelf of stall 7 and costs 180 AGR.",
        },
        "CommitmentStatus": [
            {"CommitmentID": "c-1", "Status": "retained"},
            {"CommitmentID": "c-2", "Status": "retained"},
            {"CommitmentID": "c-3", "Status": "released"},
        ],
        "Feasibility": {
            "Steps": [
                {"Step": 0, "PAStatus": "Ack"},
                {"Step": 1, "PAStatus": "InsValue", "Reason": "The lantern costs more than the WalletLimit."},
                {"Step": 2, "PAStatus": "InsRights", "Reason": "No Rights to the lantern without step 1."},
                {"Step": 3, "PAStatus": "Ack"},
                {"Step": 4, "PAStatus": "Ack"},
            ],
            "Overall": "partially_feasible",
        },
        "SourcesUsed": ["agora-item-registry", "stall-07-spm", "agora-rights-service"],
        "Failure": {"Service": "agora-price-feed", "Request": "price of item-lantern-blue-114", "Nature": "transient"},
        "DataXMData": {
            "Header": "PTF-DEM-V1.0",
            "DataID": ident,
            "DataType": "PGM-KDA-V1.0",
            "Source": [{"AIMID": "PGM-DAC"}],
        },
        "DescrMetadata": "Benchmark message: every Response property of BKN-DAC.",
    }


def edits(composer: MessageComposer) -> list[Callable[[int], None]]:
    """Edits a user makes, each given the edit number (so that every edit changes something:
    an edit comes back every 6 edits, so ``i // 6`` alternates its value)."""
    return [
        lambda i: composer.set(("Feasibility", "Steps", 1, "Reason"), f"Costs {150 + i} AGR."),
        lambda i: composer.set(("Feasibility", "Steps", 3, "PAStatus"), "Clash" if i // 6 % 2 else "Ack"),
        lambda i: composer.set(("Answer", "ObjectClasses", 0, "Confidence"), (i % 10) / 10),
        lambda i: composer.set(("TurnIndex",), -1 if i // 6 % 2 else 4),  # a range finding comes and goes
        lambda i: composer.set(("Answer", "Text"), f"Answer number {i}."),
        lambda i: composer.set(("SourcesUsed", 1), f"source-{i}"),
    ]


def measure(document: dict[str, Any], draft_dir: Any, n: int) -> tuple[list[float], float, MessageComposer]:
    """Per-edit times (ms, sorted) of ``n`` edits of a composer of ``document``, and its build time (ms)."""
    start = time.perf_counter()
    composer = MessageComposer.from_document(copy.deepcopy(document), draft_dir=draft_dir, draft_name="bench")
    built = (time.perf_counter() - start) * 1000
    steps = edits(composer)
    for i in range(len(steps) * 2):  # warm-up: build the raw editors once
        steps[i % len(steps)](i)
    times = []
    for i in range(n):
        start = time.perf_counter()
        steps[i % len(steps)](i)
        times.append((time.perf_counter() - start) * 1000)
    composer.close()  # the last draft written
    return sorted(times), built, composer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=200)
    args = parser.parse_args(argv)
    document = full_dac_response()
    MessageComposer.from_document(copy.deepcopy(document), draft_dir=False)  # warm-up: imports, validators
    print_models()
    print(f"full BKN-DAC Response: {len(document)} properties, {args.edits} edits")
    medians = {}
    with tempfile.TemporaryDirectory(prefix="pgmx-bench-") as drafts:
        for label, draft_dir in (("drafts on", drafts), ("drafts off", False)):
            ms, built, composer = measure(document, draft_dir, args.edits)
            if composer.errors:
                print(f"errors in callbacks: {composer.errors!r}", file=sys.stderr)
                return 1
            medians[label] = median = statistics.median(ms)
            p95 = ms[int(len(ms) * 0.95) - 1]
            print(
                f"{label:10}: build {built:.0f} ms; per edit median {median:.2f} ms, p95 {p95:.2f} ms, max {ms[-1]:.2f} ms"
            )
    on, off = medians["drafts on"], medians["drafts off"]
    print(f"drafts on / drafts off, median per edit: {on / off:.2f}x")
    print(f"target: median under {TARGET_MS:g} ms with drafts on: {'met' if on < TARGET_MS else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
