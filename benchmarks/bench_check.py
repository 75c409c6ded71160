"""Transcript checking speed and memory: bare ``json.loads`` against ``check``.

Generates a JSON Lines transcript into ``benchmarks/out/`` (git-ignored) from the valid
scenarios of ``data/transcripts/``: each scenario is replayed as an *episode* with its ids
made unique (SessionID, DialogIDs, PCPromptIDs, QueryIDs, RequestIDs) and its times shifted,
and several episodes run at once, their messages interleaved, as concurrent A-User sessions
write one log. So the file has what real transcripts have: PC Prompts opening dialogues,
BKN-PRC, BKN-DAC and BKN-PAL Requests answered a few messages later with their TurnIndex
sequences, feasibility checks with PA Status, commitments retained and released; messages of
about 1 KB. Dialogues end as their episode ends, so what the checker keeps open stays bounded;
only the episodes cut by the end of the file leave Requests unanswered (a few warnings).

Then it measures, in one run:

1. bare ``json.loads`` over every line of the file (the yardstick), in a new interpreter each
   time (see ``fresh_json``: in this process, after the other passes, it ran up to a third slower),
2. the library's streaming path: ``for f in check_paths([path])`` (reader, validation and the
   transcript rules),
3. the command end to end: ``main(["check", "--format", "json", PATH])`` in process, with
   standard output sent to ``os.devnull``,
4. the library's path on one core: ``check_paths([path], parallel=False)``,
5. ``validate`` end to end over the same file: ``main(["validate", "--format", "json", "--workers",
   N, PATH])`` in process, with standard output sent to ``os.devnull``, its workers' start counted
   as the check's is,

and prints messages per second and the ratios to the yardstick (targets, issue 20, on every mix:
``check`` at least 1.0 of ``json.loads`` on 2 cores, ``validate`` at least 2.0). For a file this large, 2 and 3 use two cores: Dask worker processes read,
parse and validate partitions of the file while the checking process applies the transcript
rules in order (``pgm_explore.io.iter_worked``); 4 shows what one core does alone. 2 and 3
count the same start-up: each pass starts its own local cluster (``--workers``, default 2),
forked from the forkserver that the untimed pass listing the findings started, and closes it;
4 starts nothing. Beside the clock, each pass's CPU time a message is printed, which a
neighbour's load changes little: this process's main thread (the transcript rules, the output),
all its threads (with Dask's) and the processes it started (the workers, looked at every 50 ms),
and the command's over the library's; then what the ratio of each pass on workers is made of
(:func:`made_of`): the share of the cores its processes kept busy, and their CPU time a message
against ``json.loads``'s.

With ``--memory``, before the throughput passes (see ``main_``), it runs ``pgm-explore check``
in a fresh interpreter on a transcript of 1,000,000 messages (``--memory-messages``) and prints the
peak resident set size of that process, the checking process (``VmHWM`` of ``/proc/self/status``: on
Linux, ``ru_maxrss`` also holds the peak of the process that spawned it, this one, which may have read a
whole file to count its dialogues), against the target of 300 MB (issue 20: the memory of checking 1M
messages), and beside it, not added to it, that of its largest worker process (``ru_maxrss`` of its
children: Linux gives the largest child's peak only), a process of its own with its own peak; then
the peak of ``check --workers 0`` of the same file (all in one
process, without the Dask client), beside the peak of the same command on a 13-message transcript (the
interpreter, the imports and the compiled schemas) and on
the throughput file, to show how memory grows with the transcript. The 1M file (about 1 GB) is
deleted afterwards. ``--memory-only`` skips the throughput part. With ``--findings-lines N`` it
also runs ``check`` on N header-only messages (nine findings each) in this process and on the
workers: the peak must follow what the rules remember, not the findings printed (issue 19). With
``--open-dialogues N`` it runs ``check --workers 0`` on N episodes at once, their first messages
interleaved (N dialogues open, their Requests waiting), against the same target.

The transcript is one of several mixes (``--mix``, several at once separated by commas, or
``all``; each gets its own file and its own ratios, printed together at the end):

- ``scenarios``: every scenario, CONCURRENT at a time (long-deliberation's 105 messages make
  most of its bytes: Requests and Responses of BKN-DAC);
- ``short``: every scenario but long-deliberation: short dialogues of every type, a PC Prompt
  every dozen messages (15,000 dialogues of about 7 messages in 100,000 messages);
- ``long``: long-deliberation alone: long dialogues, many turns each;
- ``open``: every scenario, OPEN_AT_ONCE at a time: a thousand dialogues and their Requests
  open at any moment.

Run: ``.venv/bin/python benchmarks/bench_check.py [--messages N] [--repeat R] [--mix M] [--memory]``.
Each throughput figure is the best of R passes (default 3), after a warm-up pass over the
scenarios, so that compiling the validators is not counted; the passes go round by round
(json.loads, library, command, one core, validate, then again), so that a machine that slows down for
a while slows the yardstick and the subjects alike.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

import psutil  # type: ignore[import-untyped]  # (distributed depends on it; no stubs)

from pgm_explore._engine import cores
from pgm_explore.cli import main
from pgm_explore.dialogue import check_paths

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).resolve().parent / "out"
SCENARIOS = ROOT / "data" / "transcripts"
TARGET_RATIO = 1.0  # issue 20: check at 1.0 of json.loads on 2 cores
TARGET_VALIDATE = 2.0  # issue 20: validate at 2.0 of json.loads on 2 cores, on every mix
TARGET_RSS_MB = 300  # issue 20: 1M messages below 300 MB
NOISY = 0.15  # json.loads passes further apart than this: the machine was busy while measuring
CONCURRENT = 8  # episodes running at once: the open dialogues and Requests at any time
OPEN_AT_ONCE = 400  # episodes running at once in the "open" mix
EPISODE_SPACING_MS = 6_000  # one new episode every 6 s of transcript time
MB = 1024 * 1024

# --- realistic transcripts from the scenarios -------------------------------------------------------

_TIME = re.compile(r'"(?:StartTime|EndTime)":(\d+)')


@dataclass(frozen=True)
class Template:
    """One valid scenario, each line cut where an id code or a time goes in."""

    name: str
    lines: list[list[str | int]]  # literal text (the id code is {0} in it), and times (ms) to shift
    start: int  # the first time of the scenario, in ms

    @classmethod
    def load(cls, path: Path) -> Template:
        raw = path.read_text(encoding="utf-8")
        # Every id of a scenario carries its 4-hex-digit code: ses-4c21-..., dlg-4c21-01, kda-4c21-0003.
        code = re.search(r'"SessionID":"ses-([0-9a-f]{4})-', raw)
        assert code, f"{path.name}: no session code"
        lines: list[list[str | int]] = []
        times: list[int] = []
        for line in raw.splitlines(keepends=True):
            line = line.replace("{", "{{").replace("}", "}}").replace(f"-{code[1]}-", f"-{code[1]}x{{0}}-")
            pieces: list[str | int] = []
            last = 0
            for match in _TIME.finditer(line):
                pieces.append(line[last : match.start(1)])
                pieces.append(int(match[1]))
                times.append(int(match[1]))
                last = match.end(1)
            pieces.append(line[last:])
            lines.append(pieces)
        return cls(path.name, lines, min(times))

    def episode(self, number: int) -> Iterator[bytes]:
        """The scenario's messages with ids unique to episode ``number`` and times shifted to its start."""
        suffix = f"{number:06d}"
        shift = 1_800_000_000_000 + number * EPISODE_SPACING_MS - self.start
        for pieces in self.lines:
            yield "".join(str(p + shift) if isinstance(p, int) else p.format(suffix) for p in pieces).encode()


def templates(mix: str = "scenarios") -> list[Template]:
    paths = sorted(p for p in SCENARIOS.glob("*.jsonl"))
    assert paths, f"no scenarios in {SCENARIOS}"
    if mix == "short":
        paths = [p for p in paths if p.name != "long-deliberation.jsonl"]
    elif mix == "long":
        paths = [p for p in paths if p.name == "long-deliberation.jsonl"]
    return [Template.load(p) for p in paths]


MIXES = ("scenarios", "short", "long", "open")


def generate(path: Path, count: int, mix: str = "scenarios") -> None:
    """``count`` messages of ``mix``: episodes running at once, their messages taken in turn."""
    path.parent.mkdir(parents=True, exist_ok=True)
    at_once = OPEN_AT_ONCE if mix == "open" else CONCURRENT
    with path.open("wb") as out:
        out.writelines(interleaved(templates(mix), count, at_once))


def interleaved(scenarios: list[Template], count: int, at_once: int = CONCURRENT, first: int = 0) -> Iterator[bytes]:
    """``count`` lines of ``at_once`` episodes running at once (numbered from ``first``, so
    that the ids of several transcripts differ), their messages taken in turn."""
    cycle = itertools.cycle(scenarios)
    numbers = itertools.count(first)
    running: list[Iterator[bytes]] = [next(cycle).episode(next(numbers)) for _ in range(at_once)]
    written = 0
    while written < count:
        for slot, episode in enumerate(running):
            line = next(episode, None)
            if line is None:  # this session ended: another one starts
                running[slot] = episode = next(cycle).episode(next(numbers))
                line = next(episode)
            yield line
            written += 1
            if written == count:
                return


# --- measuring ---------------------------------------------------------------------------------------


class Pass(NamedTuple):
    """One pass: its time; the CPU time of this process's main thread, of all its threads, and of
    the processes it started (the workers and their nannies)."""

    seconds: float
    main_cpu: float
    process_cpu: float
    workers_cpu: float


SAMPLE_EVERY = 0.05
"""Seconds between two looks at the CPU time of the processes a pass started: a worker's last
moments (closing, idle) after the last look are not counted."""

LIST_EVERY = 1.0
"""Seconds between two listings of the processes a pass started, after the first second (a
listing walks every process of the machine in ``/proc``: 0.7 ms, measured, which every 50 ms was
1.5% of a core taken from the pass measured; a look at the ones known costs a few µs each)."""


class _Started(threading.Thread):
    """Looks at the CPU time of every process this one started, until told to stop: a worker lives
    as long as its pass, and its CPU time is gone once it has ended (its parent, the forkserver,
    is not waited for when the pass ends). The processes are listed often while the pass starts
    them, then now and then; those known are looked at every :data:`SAMPLE_EVERY` seconds."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self._me = psutil.Process()
        self._known: dict[int, psutil.Process] = {}
        self.before = self._look(listed=True)  # (the forkserver, alive from pass to pass)
        self.last = dict(self.before)
        self._finished = threading.Event()

    def _look(self, *, listed: bool) -> dict[int, float]:
        if listed:
            for process in self._me.children(recursive=True):
                self._known.setdefault(process.pid, process)
        seen = {}
        for pid, process in list(self._known.items()):
            try:
                times = process.cpu_times()
            except psutil.Error:  # (ended meanwhile: its last look counts)
                del self._known[pid]
                continue
            seen[pid] = times.user + times.system
        return seen

    def run(self) -> None:
        started = listed = time.perf_counter()
        while not self._finished.wait(SAMPLE_EVERY):
            now = time.perf_counter()
            due = now - started < 1.0 or now - listed >= LIST_EVERY
            if due:
                listed = now
            self.last.update(self._look(listed=due))

    def stop(self) -> float:
        self._finished.set()
        self.join()
        self.last.update(self._look(listed=True))
        return sum(cpu - self.before.get(pid, 0.0) for pid, cpu in self.last.items())


def timed(run: Callable[[], object]) -> Pass:
    """``run()`` timed on the clock and in CPU time: the main thread's (``time.thread_time``, where
    the transcript rules and the command's output run), this whole process's (``RUSAGE_SELF``,
    with Dask's event-loop threads) and that of the processes it started (the workers, looked at
    every :data:`SAMPLE_EVERY` seconds). Another process's load slows the clock, not the CPU
    seconds a pass takes."""
    started = _Started()
    started.start()
    before = resource.getrusage(resource.RUSAGE_SELF)
    wall, thread = time.perf_counter(), time.thread_time()
    run()
    wall, thread = time.perf_counter() - wall, time.thread_time() - thread
    after = resource.getrusage(resource.RUSAGE_SELF)
    workers = started.stop()
    # (the sampling thread's own CPU is in RUSAGE_SELF: a look every 50 ms costs little, and the
    # same for every pass)
    process = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Pass(wall, thread, process, workers)


_FRESH_JSON = """\
import json, sys, time
loads = json.loads
wall, cpu = time.perf_counter(), time.process_time()
with open(sys.argv[1], "rb") as lines:
    for line in lines:
        loads(line)
print(time.perf_counter() - wall, time.process_time() - cpu)
"""


def fresh_json(path: Path) -> tuple[float, float]:
    """(seconds, CPU seconds) of ``json.loads`` over every line of ``path`` in a new interpreter,
    timed there around the loop alone: the yardstick as a plain program gets it.

    In the benchmark's own process the same loop ran 9% to 35% slower once the subjects had run
    there (the memory as their passes left it, measured: 1M messages of the scenarios mix 6.79 s in
    a new interpreter, 9.08 s in this process after its first passes; ``malloc_trim`` took back
    part of it), which made every ratio to it look better than it was, up to session 16."""
    out = subprocess.run(
        [sys.executable, "-c", _FRESH_JSON, str(path)], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), float(out[1])


WORKERS = 2
"""Local worker processes for passes 2 and 3 (``--workers``)."""


def library(path: Path, *, parallel: bool = True) -> dict[str, int]:
    """Findings by rule: the streaming path of the library."""
    rules: dict[str, int] = {}
    for finding in check_paths([str(path)], workers=WORKERS if parallel else 0):
        rules[finding.rule] = rules.get(finding.rule, 0) + 1
    return rules


def command(path: Path) -> int:
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        return main(["check", "--format", "json", "--workers", str(WORKERS), str(path)])


def validate(path: Path) -> int:
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        return main(["validate", "--format", "json", "--workers", str(WORKERS), str(path)])


def warm_up() -> None:
    for path in sorted(SCENARIOS.glob("*.jsonl")):
        library(path, parallel=False)


_CHILD = """\
import json, resource, sys, time
from pgm_explore.cli import main
start = time.perf_counter()
status = main(["check", "--format", "json", *sys.argv[2:], sys.argv[1]])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:  # Linux: ru_maxrss keeps the peak of the process that spawned this one (vfork), VmHWM does not
    with open("/proc/self/status", encoding="ascii") as proc:
        peak = next(int(line.split()[1]) for line in proc if line.startswith("VmHWM:"))
except OSError:
    pass
helper = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest worker process, if any ran
sys.stderr.write(json.dumps({"status": status, "seconds": seconds, "peak": peak, "helper": helper}) + "\\n")
"""


def peak_rss(path: Path, *options: str) -> tuple[float, float, float]:
    """(peak RSS in MB, that of its largest worker process, seconds) of ``pgm-explore check
    --format json [options] PATH`` in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
        cwd=ROOT,
    )
    report = json.loads(result.stderr.decode().splitlines()[-1])
    assert report["status"] in (0, 1), result.stderr.decode()
    unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux
    return report["peak"] * unit / MB, report["helper"] * unit / MB, report["seconds"]


# --- the two parts -----------------------------------------------------------------------------------


def generated(count: int, mix: str = "scenarios") -> Path:
    path = OUT / (f"check-{count}.jsonl" if mix == "scenarios" else f"check-{mix}-{count}.jsonl")
    start = time.perf_counter()
    generate(path, count, mix)
    size = path.stat().st_size
    dialogues = len(set(re.findall(rb'"DialogID":"([^"]*)"', path.read_bytes())))
    print(
        f"mix {mix}: {path.relative_to(ROOT)} ({count:,} messages, {size / count:.0f} bytes each on average,", end=" "
    )
    print(f"{size / MB:.0f} MB, {dialogues:,} dialogues, generated in {time.perf_counter() - start:.1f} s)")
    return path


def throughput(path: Path, count: int, repeat: int) -> dict[str, float]:
    """Prints the passes over ``path``; returns the ratios to json.loads."""
    rules = library(path)
    described = ", ".join(f"{n} {rule}" for rule, n in sorted(rules.items())) or "none"
    print(f"findings: {described} (only Requests cut off by the end of the file are expected)")

    # Round after round, each pass once per round: a machine that slows down for a while
    # (a busy neighbour) slows every pass alike rather than the yardstick or a subject alone.
    passes: dict[str, Callable[[], object]] = {
        "json": lambda: fresh_json(path),
        "library": lambda: library(path),
        "command": lambda: command(path),
        "one core": lambda: library(path, parallel=False),
        "validate": lambda: validate(path),
    }
    runs: dict[str, list[Pass]] = {name: [] for name in passes}
    for _ in range(repeat):
        for name, run in passes.items():
            if name == "json":  # (timed in its own interpreter: see fresh_json)
                seconds, cpu = fresh_json(path)
                runs[name].append(Pass(seconds, cpu, cpu, 0.0))
            else:
                runs[name].append(timed(run))
    t_json, t_lib, t_cli, t_one, t_val = (min(p.seconds for p in runs[name]) for name in passes)
    # On a shared machine a neighbour can slow a whole pass: the yardstick's own passes,
    # which do the same work each time, show how far that went during this measurement.
    spread = max(p.seconds for p in runs["json"]) / t_json - 1
    if spread > NOISY:
        print(f"(noisy: the json.loads passes differ by {spread:.0%}; the ratios below are less sure)")

    def rate(seconds: float) -> str:
        return f"{count / seconds:>10,.0f} msg/s  ({seconds:.2f} s)"

    print(f"json.loads                         {rate(t_json)}")
    print(f"library (for f in check_paths(...)) {rate(t_lib)}  start of {WORKERS} workers included")
    print(f"command (check --format json)      {rate(t_cli)}  start of {WORKERS} workers included")
    print(f"library on one core (--workers 0)   {rate(t_one)}  nothing to start")
    print(f"validate (validate --format json)  {rate(t_val)}  start of {WORKERS} workers included")
    print(f"check library (one core) / json.loads = {t_json / t_one:.2f}")
    for label, seconds in (("library", t_lib), ("command", t_cli)):
        ratio = t_json / seconds
        status = "ok" if ratio >= TARGET_RATIO else "BELOW TARGET"
        print(f"check {label} / json.loads = {ratio:.2f} (target >= {TARGET_RATIO}) {status}")
    status = "ok" if t_json / t_val >= TARGET_VALIDATE else "BELOW TARGET"
    print(f"validate command / json.loads = {t_json / t_val:.2f} (target >= {TARGET_VALIDATE}) {status}")
    # CPU seconds, which a neighbour's load changes little: the least of the passes of each.
    print(f"CPU a message (least of {repeat}): this process's main thread / all its threads / worker processes")

    def least(name: str, field: str) -> float:
        return min(getattr(p, field) for p in runs[name])

    for name, label in (
        ("json", "json.loads"),
        ("library", "library"),
        ("command", "command"),
        ("one core", "one core"),
        ("validate", "validate"),
    ):
        figures = " / ".join(f"{least(name, field) / count * 1e6:6.2f} us" for field in Pass._fields[1:])
        print(f"  {label:<11} {figures}")
    ratios = ", ".join(
        f"{label} {least('command', field) / least('library', field):.3f}"
        for field, label in zip(Pass._fields[1:], ("main thread", "all threads", "workers"), strict=True)
    )
    print(f"command / library in CPU: {ratios} (each pass starts its {WORKERS} workers, counted for both)")
    print(f"what each ratio is made of (its fastest pass): {cores()} x the share of the cores busy / the CPU a message")
    json_cpu = least("json", "process_cpu")
    for name in ("library", "command", "validate"):
        print(made_of(name, min(runs[name], key=attrgetter("seconds")), json_cpu, cores()))
    return {
        "library": t_json / t_lib,
        "command": t_json / t_cli,
        "one core": t_json / t_one,
        "validate": t_json / t_val,
    }


def made_of(label: str, run: Pass, json_cpu: float, cores: int) -> str:
    """What ``run``'s ratio to ``json.loads`` is made of on ``cores`` cores: the share of them that its
    processes kept busy (all their CPU time, workers too, over ``cores`` times its time) and that CPU
    time against ``json.loads``'s over the same messages (``json_cpu``). The ratio is ``cores`` times the
    first over the second: a pass gains by keeping the cores busier or by spending less, and a busy
    neighbour, which slows the clock more than the CPU time, shows in the first. (The product is the
    clock's ratio as far as ``json.loads`` spends its time on the CPU.)

    >>> made_of("library", Pass(10.0, 5.0, 6.0, 13.0), json_cpu=9.5, cores=2)
    '  library   busy 0.950, CPU 2.00 times json.loads -> 0.95'
    """
    cpu = run.process_cpu + run.workers_cpu
    busy = cpu / (cores * run.seconds)
    spent = cpu / json_cpu
    return f"  {label:<9} busy {busy:.3f}, CPU {spent:.2f} times json.loads -> {cores * busy / spent:.2f}"


def memory_line(count: int, rss: float, helper: float, seconds: float) -> str:
    """The status line of the memory run: the goal is the checking process's (issue 20: the memory
    of checking 1M messages); each worker is a process of its own, its peak shown beside, not added
    (tests/test_bench_check.py)."""
    status = "ok" if rss <= TARGET_RSS_MB else "ABOVE TARGET"
    return (
        f"peak RSS, check of {count:>9,} messages:           {rss:7.1f} MB the checking process, "
        f"target <= {TARGET_RSS_MB} MB: {status}; largest worker {helper:.1f} MB, a process of its own "
        f"({count / seconds:,.0f} msg/s)"
    )


def memory(count: int, throughput_file: tuple[Path, int] | None) -> None:
    small = SCENARIOS / "market-wallet-limit.jsonl"
    base, _, _ = peak_rss(small)
    print(f"peak RSS, check of {small.relative_to(ROOT)} (13 messages): {base:7.1f} MB (interpreter, imports, schemas)")
    middle = None
    if throughput_file is not None:
        middle_path, lines = throughput_file
        rss, helper, seconds = peak_rss(middle_path)
        middle = (lines, rss)
        print(
            f"peak RSS, check of {lines:>9,} messages:           {rss:7.1f} MB the checking process; "
            f"largest worker {helper:.1f} MB, a process of its own ({lines / seconds:,.0f} msg/s)"
        )
    path = OUT / f"check-{count}.jsonl"
    try:
        start = time.perf_counter()
        generate(path, count)
        print(
            f"generated {count:,} messages ({path.stat().st_size / MB:,.0f} MB) in {time.perf_counter() - start:.1f} s"
        )
        rss, helper, seconds = peak_rss(path)
        print(memory_line(count, rss, helper, seconds))
        alone, _, seconds = peak_rss(path, "--workers", "0")
        status = "ok" if alone <= TARGET_RSS_MB else "ABOVE TARGET"
        print(
            f"peak RSS, check --workers 0 of {count:,} messages: {alone:7.1f} MB ({count / seconds:,.0f} msg/s) "
            f"target <= {TARGET_RSS_MB} MB: {status}"
        )
    finally:
        path.unlink(missing_ok=True)  # about 1 GB
    if middle is not None and count > middle[0]:
        growth = (rss - middle[1]) * MB / (count - middle[0])
        print(f"growth between the two: {growth:.0f} bytes per message (ids and dialogues kept for later messages)")


OPEN_MESSAGES = 5
"""Messages of each episode written when ``--open-dialogues`` episodes run at once (a PC Prompt and the
first exchanges: every dialogue opened, its Requests still waiting, when the file ends)."""


def open_memory(dialogues: int) -> None:
    """Peak RSS of ``check --format json --workers 0`` on a transcript of ``dialogues`` episodes all
    running at once (issue 20: 100k dialogues open at once), the first :data:`OPEN_MESSAGES`
    messages of each, interleaved."""
    path = OUT / f"open-{dialogues}.jsonl"
    try:
        with path.open("wb") as out:
            out.writelines(interleaved(templates(), dialogues * OPEN_MESSAGES, at_once=dialogues))
        opened = len(set(re.findall(rb'"DialogID":"([^"]*)"', path.read_bytes())))
        rss, _, seconds = peak_rss(path, "--workers", "0")
    finally:
        path.unlink(missing_ok=True)
    status = "ok" if rss <= TARGET_RSS_MB else "ABOVE TARGET"
    print(
        f"peak RSS, check --workers 0 of {dialogues:,} episodes at once ({dialogues * OPEN_MESSAGES:,} messages, "
        f"{opened:,} dialogues): {rss:7.1f} MB ({dialogues * OPEN_MESSAGES / seconds:,.0f} msg/s) "
        f"target <= {TARGET_RSS_MB} MB: {status}"
    )


HEADER_ONLY = b'{"Header": "PGM-KPA-V1.0"}\n'
"""A message with nine findings (issue 19: memory must not follow the findings printed)."""


def findings_memory(lines: int, workers: int) -> None:
    """Peak RSS of ``check --format json`` on ``lines`` header-only messages (nine findings
    each), in this process (``--workers 0``) and on ``workers`` local workers."""
    path = OUT / f"header-only-{lines}.jsonl"
    path.write_bytes(HEADER_ONLY * lines)
    try:
        for options in (["--workers", "0"], ["--workers", str(workers)]):
            rss, worker, seconds = peak_rss(path, *options)
            print(
                f"peak RSS, check {' '.join(options)} of {lines:,} header-only messages ({9 * lines:,} findings): "
                f"{rss:7.1f} MB + largest worker {worker:.1f} MB ({lines / seconds:,.0f} msg/s)"
            )
    finally:
        path.unlink(missing_ok=True)


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200_000, help="messages for throughput (default 200000)")
    parser.add_argument("--repeat", type=int, default=3, help="passes per measurement; the best counts (default 3)")
    parser.add_argument(
        "--mix",
        default="all",
        help=f"transcript mixes, comma-separated, of {', '.join(MIXES)}; or all (the default)",
    )
    parser.add_argument("--workers", type=int, default=2, help="local worker processes for passes 2 and 3 (default 2)")
    parser.add_argument("--memory", action="store_true", help="also measure peak RSS on a large transcript")
    parser.add_argument("--memory-only", action="store_true", help="only measure peak RSS")
    parser.add_argument(
        "--findings-lines",
        type=int,
        default=0,
        help="with --memory: also the peak on this many header-only messages, nine findings each (e.g. 100000)",
    )
    parser.add_argument(
        "--memory-messages", type=int, default=1_000_000, help="messages for the memory run (default 1000000)"
    )
    parser.add_argument(
        "--open-dialogues",
        type=int,
        default=0,
        help="with --memory: also the peak with this many dialogues open at once (e.g. 100000)",
    )
    args = parser.parse_args(argv)
    global WORKERS
    WORKERS = args.workers
    mixes = list(MIXES) if args.mix == "all" else args.mix.split(",")
    if unknown := set(mixes) - set(MIXES):
        parser.error(f"no mix {', '.join(sorted(unknown))}: the mixes are {', '.join(MIXES)}")
    paths = {} if args.memory_only else {mix: generated(args.messages, mix) for mix in mixes}
    if args.memory or args.memory_only:
        # First, while this process is small: the workers' ru_maxrss starts from the peak of
        # the process that spawned them, which the throughput passes grow.
        first = next(iter(paths.items()), None)
        memory(args.memory_messages, None if first is None else (first[1], args.messages))
        if args.findings_lines:
            findings_memory(args.findings_lines, args.workers)
        if args.open_dialogues:
            open_memory(args.open_dialogues)
    if paths:
        warm_up()
    ratios = {}
    for mix, path in paths.items():
        print(f"--- mix {mix}")
        ratios[mix] = throughput(path, args.messages, args.repeat)
    if len(ratios) > 1:
        print("ratios to json.loads, measured in this run:")
        print(f"{'mix':<10} {'library':>8} {'command':>8} {'one core':>9} {'validate':>9}")
        for mix, found in ratios.items():
            print(
                f"{mix:<10} {found['library']:8.2f} {found['command']:8.2f} {found['one core']:9.2f}"
                f" {found['validate']:9.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main_())
