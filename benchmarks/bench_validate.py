"""Bulk validation speed: bare ``json.loads`` against the library path and the command.

Generates a JSON Lines file of realistic messages (about 1 KB each: all four data types,
both modes, mostly conforming, one in 200 not, a few with consistency warnings) into
``benchmarks/out/`` (git-ignored), then measures in one run:

1. bare ``json.loads`` over every line of the file (the yardstick), in a new interpreter
   each time (``bench_check.fresh_json``),
2. the library bulk path: :func:`pgm_explore.io.iter_reports` (reader + ``validate``) in
   this process,
3. the command end to end: ``main(["validate", "--format", "json", PATH])`` in process,
   with standard output sent to ``os.devnull``,

and prints messages per second and the ratios to the yardstick (target: the library path
at least 0.5 of ``json.loads``), then the time ``import pgm_explore`` and
``import pgm_explore.cli`` take in a fresh interpreter (target 0.5 s).

With ``--workers N`` (N > 0) the command runs four ways in the same run, to compare one
process with N local Dask workers (issue 20's target: 2 workers at least 2.0 of
``json.loads``):

3. ``--workers 0``: one process;
4. on N local workers the benchmark started before, as the command starts its own (the
   command's code after it has its workers, ``run_on``; results fetched from the workers
   directly), warmed up by a pass of their own: the steady rate a user gets, without the
   workers' start;
5. ``--scheduler ADDRESS`` of those workers: the same, every result relayed by the
   scheduler, as for a cluster started elsewhere (beside; sessions 11 to 13 measured this);
6. ``python -m pgm_explore validate --workers N`` in a new interpreter: end to end, what a
   user waits for (the interpreter, the imports and the workers' start included);

and prints the start-up (6 minus 4) apart from the steady rate, and the CPU a message of
the workers and of this process (the client, with the local cluster's scheduler).

Run: ``.venv/bin/python benchmarks/bench_validate.py [--messages N] [--repeat R] [--workers N]``
(e.g. ``--workers 2 --messages 1000000 --repeat 3``: a file of about 1 GB).
Each figure is the best of R passes (default 5); the passes take turns
(``json.loads``, library, command, ``json.loads``, ...), so that a burst of load from
other work on the machine slows all alike instead of one of them, and the ratios
stay comparable within a run. One warm-up pass over a few messages of every kind comes
first, so that compiling the validators and importing python-jsonschema (which only
non-conforming messages need) are not counted.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench_check import fresh_json

from pgm_explore.cli import main
from pgm_explore.io import iter_reports

OUT = Path(__file__).resolve().parent / "out"
TARGET_RATIO = 0.5
TARGET_WORKERS = 2.0
TARGET_IMPORT = 0.5

# --- realistic messages --------------------------------------------------------------------

PLACES = [
    ("mi-civic-museum", "ue-visitor-kiosk-04", "sp-gallery-4", "ML-Gallery4-Case2", "exh-amphora-0412", "museum guide"),
    (
        "mi-agora-market",
        "ue-flat-turin-12",
        "sp-stall-glass",
        "ML-Stall7-Shelf3",
        "item-lantern-blue-114",
        "shopkeeper",
    ),
    ("mi-open-campus", "ue-lab-vr-02", "sp-lecture-hall-b", "ML-HallB-Desk5", "obj-molecule-model-7", "tutor"),
    ("mi-harbour-tour", "ue-ferry-deck-1", "sp-pier-3", "ML-Pier3-Bench2", "obj-lighthouse-1890", "tour guide"),
]
QUESTIONS = [
    "Can the guide take the amphora out of its case and turn it to show the painted back to the visitor?",
    "Which of the lanterns on the top shelf did the User mean when asking for the blue glass one?",
    "What does the student already know about covalent bonds, judging from the last three answers?",
    "Is the visitor asking about the history of the lighthouse or about the times of the next ferry?",
    "Should the answer be given in French, as the visitor's last sentence was, or stay in English?",
]
TEXTS = [
    "While speaking, the User gazed at the taller cobalt-blue lantern on the top shelf, next to the brass one.",
    "The visitor pointed at display case 2 and asked who painted the vase; the catalogue attributes it to the Berlin Painter.",
    "The student answered the previous two questions correctly but confused ionic and covalent bonds in the third.",
    "The visitor looked at the lighthouse for several seconds before asking about it, then checked a paper timetable.",
]
STATEMENTS = [
    "MM-Move Nil {entity} From {loc} To {loc}-Plinth With SpatialAttitude With Rights (Status=Model)",
    "MM-Animate Nil {entity} At {loc}-Plinth With Stream With Rights (Status=Model)",
    "MM-Send Nil Message-{n} To aua-guide With Rights (Status=Model)",
]


def _time(stamp: int, ident: str) -> dict[str, Any]:
    return {
        "Header": "OSD-STM-V1.5",
        "SimpleTimeID": f"st-{ident}",
        "SimpleTimeData": [
            {
                "FlagsByte": 3,
                "StartTime": stamp,
                "EndTime": stamp,
                "AccuracyMode": "single",
                "AccuracyPlusMinus": 5,
                "TimeType": True,
                "TimeUnit": "01",
            }
        ],
    }


def _dem(ident: str, data_type: str, aim: str, minstance: str) -> dict[str, Any]:
    return {
        "Header": "PTF-DEM-V1.0",
        "DataID": ident,
        "DataType": data_type,
        "Source": [{"AIMID": aim}],
        "MInstanceID": minstance,
        "DataExchangeMetadataID": f"dem-{ident}",
    }


def message(n: int) -> dict[str, Any]:
    """The ``n``-th message of the benchmark: a type and mode in turn, varied text."""
    minstance, uenv, space, loc, entity, role = PLACES[n % len(PLACES)]
    session = f"ses-{n // 1000:05x}"
    stamp = 1794061805000 + n * 350
    question, text = QUESTIONS[n % len(QUESTIONS)], TEXTS[n % len(TEXTS)]
    common = {"MInstance": minstance, "UEnvironment": uenv, "SessionID": session}
    kind = n % 7
    if kind == 0:
        ident = f"pcp-{n:07d}"
        return {
            "Header": "PGM-PCP-V1.0",
            **common,
            "PCPromptID": ident,
            "PCPromptTime": _time(stamp, ident),
            "DialogID": f"dlg-{n // 50:06d}",
            "Prompt": question,
            "SceneContext": {"SpaceID": space, "Entities": [{"EntityID": entity, "MLocation": loc}]},
            "Intent": {"Category": "Informational", "Action": "identify", "Type": "question"},
            "ResolvedReferents": [{"Expression": "this one", "EntityID": entity, "Confidence": 0.88}],
            "ExpressiveConfiguration": {"Role": role, "Locale": "en-GB", "Constraints": ["no speculation"]},
            "DataXMData": _dem(ident, "PGM-PCP-V1.0", "PGM-PRC", minstance),
        }
    header, acronym, sender = [
        ("PGM-KPR-V1.0", "kpr", "PGM-PRC"),
        ("PGM-KDA-V1.0", "kda", "PGM-DAC"),
        ("PGM-KPA-V1.0", "kpa", "PGM-PAL"),
    ][(kind - 1) // 2]
    request = kind % 2 == 1
    ident = f"{acronym}-{n:07d}"
    msg: dict[str, Any] = {
        "Header": header,
        "Mode": "RQ" if request else "RS",
        **common,
        "QueryID": ident,
        "QueryTime": _time(stamp, ident),
        "DialogID": f"dlg-{n // 50:06d}-{acronym}",
        "TurnIndex": (n // 7) % 40,
        "DataXMData": _dem(ident, header, "PGM-BKN" if request else sender, minstance),
    }
    if not request:
        msg["RequestID"] = f"{acronym}-{n - 1:07d}"
        msg["Outcome"] = "answered"
    if kind == 1:
        msg |= {"Kind": "clarification", "Question": question, "EntityIDs": [entity]}
    elif kind == 2:
        msg["Representation"] = {
            "Text": text,
            "ResolvedReferents": [{"Expression": "the blue one", "EntityID": entity, "Confidence": 0.96}],
        }
    elif kind == 3:
        steps = [{"Step": i, "Statement": STATEMENTS[i].format(entity=entity, loc=loc, n=n)} for i in range(2)]
        msg |= {"Kind": "feasibility", "Question": question, "Space": {"SpaceID": space}, "ProcessActions": steps}
    elif kind == 4:
        msg["Feasibility"] = {
            "Steps": [
                {"Step": 0, "PAStatus": "Ack"},
                {"Step": 1, "PAStatus": "LocOOR", "Reason": f"{loc}-Plinth is not among the guide's M-Locations."},
            ],
            "Overall": "partially_feasible",
        }
        msg["SourcesUsed"] = [f"{minstance}-rules", f"{minstance}-rights-service"]
    elif kind == 5:
        msg |= {"Question": question, "Constraints": {"Role": role, "Locale": "en-GB"}}
    else:
        msg["Stance"] = {
            "Label": "warm-informative",
            "Role": role,
            "Locale": "en-GB",
            "ExpressiveConstraints": ["warm", "at most three sentences"],
            "Rationale": text,
        }
    return msg


def _spoil(msg: dict[str, Any], n: int) -> dict[str, Any]:
    """A non-conforming variant, one of the mistakes people make."""
    bad = copy.deepcopy(msg)
    way = (n // 200) % 4
    if way == 0:
        bad.pop("DataXMData")
    elif way == 1:
        bad["TurnIndex" if "TurnIndex" in bad else "Prompt"] = -1
    elif way == 2:
        bad["Comment"] = "not a property of any PGM-AUA data type"
    else:
        bad["Header"] = bad["Header"].replace("V1.0", "V1.1")
    return bad


def _warn(msg: dict[str, Any]) -> dict[str, Any]:
    """A conforming variant with a consistency warning (an answered Response with a Failure)."""
    if msg.get("Header") == "PGM-KDA-V1.0" and msg.get("Mode") == "RS":
        return {**msg, "Failure": {"Service": "rights-service", "Nature": "transient"}}
    return msg


def messages(count: int) -> Iterator[dict[str, Any]]:
    for n in range(count):
        msg = message(n)
        if n % 200 == 199:
            msg = _spoil(msg, n)
        elif n % 100 == 3:
            msg = _warn(msg)
        yield msg


def generate(path: Path, count: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for msg in messages(count):
            out.write(json.dumps(msg, ensure_ascii=False))
            out.write("\n")


# --- measuring -------------------------------------------------------------------------------


def best_of(repeat: int, run: Callable[[], object]) -> float:
    return best_in_turn(repeat, run)[0]


def best_in_turn(repeat: int, *runs: Callable[[], object]) -> list[float]:
    """The best time of each of ``runs`` over ``repeat`` rounds, the runs taking turns."""
    best = [float("inf")] * len(runs)
    for _ in range(repeat):
        for i, run in enumerate(runs):
            start = time.perf_counter()
            got = run()
            # (a run timed elsewhere, fresh_json, says its own (seconds, CPU seconds))
            best[i] = min(best[i], got[0] if isinstance(got, tuple) else time.perf_counter() - start)
    return best


def library(path: Path) -> int:
    nonconforming = 0
    for rep in iter_reports(str(path), parallel=False):
        nonconforming += not rep.conforms
    return nonconforming


def command(path: Path, *where: str) -> int:
    """``pgm-explore validate --format json [WHERE] PATH``, its output sent to ``os.devnull``."""
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        return main(["validate", "--format", "json", *where, str(path)])


def import_time(module: str, runs: int = 7) -> float:
    """Best wall time of a fresh interpreter importing ``module`` (startup included)."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
        best = min(best, time.perf_counter() - start)
    return best


def warm_up() -> None:
    from pgm_explore.validation import validate

    for n in range(400):
        msg = message(n)
        validate(_spoil(msg, n) if n % 3 == 0 else msg)


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200_000, help="messages in the file (default 200000)")
    parser.add_argument("--repeat", type=int, default=5, help="passes per measurement; the best counts (default 5)")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="compare the command on one process with N local workers (default: the command as it decides)",
    )
    args = parser.parse_args(argv)
    count = args.messages

    path = OUT / f"bench-{count}.jsonl"
    start = time.perf_counter()
    generate(path, count)
    size = path.stat().st_size
    print(f"file: {path} ({count} messages, {size / count:.0f} bytes each on average,", end=" ")
    print(f"generated in {time.perf_counter() - start:.1f} s)")

    warm_up()
    nonconforming = library(path)
    print(f"non-conforming messages: {nonconforming}")

    def rate(seconds: float) -> str:
        return f"{count / seconds:>10,.0f} msg/s  ({seconds:.2f} s)"

    if args.workers:
        compare_workers(path, args.workers, args.repeat, rate)
    else:
        t_json, t_lib, t_cli = best_in_turn(
            args.repeat, lambda: fresh_json(path), lambda: library(path), lambda: command(path)
        )
        print(f"json.loads                      {rate(t_json)}")
        print(f"library (read + validate)       {rate(t_lib)}")
        print(f"command (validate --format json) {rate(t_cli)}")
        ratio_lib = t_json / t_lib
        status = "ok" if ratio_lib >= TARGET_RATIO else "BELOW TARGET"
        print(f"validate / json.loads = {ratio_lib:.2f} (target {TARGET_RATIO}) {status}")
        print(f"command  / json.loads = {t_json / t_cli:.2f}")

    bare = import_time("sys")
    for module in ("pgm_explore", "pgm_explore.cli"):
        seconds = import_time(module)
        status = "ok" if seconds <= TARGET_IMPORT else "ABOVE TARGET"
        print(f"import {module:<16} {seconds:.3f} s (target {TARGET_IMPORT} s; bare interpreter {bare:.3f} s) {status}")
    return 0


def compare_workers(path: Path, workers: int, repeat: int, rate: Callable[[float], str]) -> None:
    """One process against ``workers`` local Dask workers, steady and end to end, in one run.

    What each pass measures (they take turns, as in :func:`best_in_turn`):

    - ``json.loads``, the library and the command ``--workers 0``: as without ``--workers``;
    - *started*: the command's own code (``run_on``) on ``workers`` local workers the
      benchmark started beforehand, as the command starts them (the same preload; the
      client fetches results from the workers directly), and warmed up by a pass of their
      own: what a user gets once the workers run, without their start;
    - *--scheduler*: the command given the address of those workers' scheduler, as for a
      cluster started elsewhere: every result then goes through the scheduler, which lives in
      this process (beside, for comparison with the figures of sessions 11 to 13);
    - *new process*: ``python -m pgm_explore validate --workers N`` in a new interpreter,
      what a user waits for from typing the command (the interpreter, the imports, the
      forkserver and the cluster's start included; its CPU is not counted here).

    Besides the wall times, the CPU times (the least of the passes): this process's own (the
    client, with the scheduler of the local cluster), and for the passes on the started
    workers the workers' too. On a machine that others load, the workers do not get a core
    each, and the wall times say little about what they would do on idle cores; the CPU times
    change little with the load. From them, the wall time on ``workers`` idle cores: the work
    of the workers and the client spread evenly, or the client's alone if more (a projection,
    printed as such)."""
    import pgm_explore.cli._validate as command_module
    from pgm_explore._engine import engine
    from pgm_explore.cli import build_parser

    count = sum(1 for _ in path.open("rb"))
    start = time.perf_counter()
    # (The preload of the command's own: the forkserver keeps the first it is given.)
    with engine(workers, preload=command_module.PRELOAD) as cluster:
        started = time.perf_counter() - start
        client = cluster.client  # type: ignore[attr-defined]  # (a Dask engine)
        address = client.scheduler.address
        args = build_parser().parse_args(["validate", "--format", "json", "--workers", str(workers), str(path)])

        def workers_cpu() -> float:
            return sum(client.run(time.process_time).values())

        def on_started() -> int:
            with open(os.devnull, "w", encoding="utf-8") as sink:
                return command_module.run_on(cluster, args, sink, sys.stderr)

        def new_process() -> None:
            argv = ["validate", "--format", "json", "--workers", str(workers), str(path)]
            subprocess.run([sys.executable, "-m", "pgm_explore", *argv], stdout=subprocess.DEVNULL, check=False)

        on_started()  # (the workers compile the validators once)
        runs: list[Callable[[], object]] = [
            lambda: fresh_json(path),
            lambda: library(path),
            lambda: command(path, "--workers", "0"),
            on_started,
            lambda: command(path, "--scheduler", address),
            new_process,
        ]
        on_workers = (3, 4)
        wall = [float("inf")] * len(runs)
        cpu = [float("inf")] * len(runs)
        spread_cpu = {i: float("inf") for i in on_workers}  # (the workers', in the passes on them)
        for _ in range(repeat):
            for i, run in enumerate(runs):
                before = workers_cpu() if i in on_workers else 0.0
                start, own = time.perf_counter(), time.process_time()
                got = run()
                if isinstance(got, tuple):  # (timed in its own interpreter: fresh_json)
                    wall[i], cpu[i] = min(wall[i], got[0]), min(cpu[i], got[1])
                    continue
                wall[i] = min(wall[i], time.perf_counter() - start)
                cpu[i] = min(cpu[i], time.process_time() - own)
                if i in on_workers:
                    spread_cpu[i] = min(spread_cpu[i], workers_cpu() - before)
    t_json, t_lib, t_one, t_steady, t_relayed, t_whole = wall
    print(f"json.loads                                          {rate(t_json)}")
    print(f"library, one process                                {rate(t_lib)}")
    print(f"command, one process (--workers 0)                  {rate(t_one)}")
    print(f"command, {workers} workers started (as the command's own)  {rate(t_steady)}")
    print(f"command, {workers} workers started, via --scheduler        {rate(t_relayed)}")
    print(f"command, {workers} workers, in a new process (--workers)   {rate(t_whole)}")
    print(
        f"start-up: {t_whole - t_steady:.2f} s more in a new process than on the workers started "
        f"({started:.2f} s to start the cluster here)"
    )
    ratio = t_json / t_steady
    status = "ok" if ratio >= TARGET_WORKERS else "BELOW TARGET"
    print(f"command, one process              / json.loads = {t_json / t_one:.2f}")
    print(
        f"command, {workers} workers started       / json.loads = {ratio:.2f} (target {TARGET_WORKERS} for 2) {status}"
    )
    print(f"command, {workers} workers, --scheduler  / json.loads = {t_json / t_relayed:.2f}")
    print(f"command, {workers} workers, new process  / json.loads = {t_json / t_whole:.2f}")
    print(f"command, {workers} workers started       / one process = {t_one / t_steady:.2f}")

    def micro(seconds: float) -> str:
        return f"{seconds / count * 1e6:.2f} µs"

    c_json, c_one = cpu[0], cpu[2]
    print(f"CPU a message: json.loads {micro(c_json)}, command in one process {micro(c_one)}")
    for i, how in ((3, "started"), (4, "via --scheduler")):
        idle = max((spread_cpu[i] + cpu[i]) / workers, cpu[i])
        print(
            f"  on {workers} workers {how}: {micro(spread_cpu[i])} there + {micro(cpu[i])} in the client; "
            f"projected on {workers} idle cores: / json.loads = {c_json / idle:.2f}, / one process = {c_one / idle:.2f}"
        )


if __name__ == "__main__":
    sys.exit(main_())
