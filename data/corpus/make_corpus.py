"""Build the small corpus next to this script: two days of A-User sessions, one transcript file each.

Run ``python data/corpus/make_corpus.py``; it rewrites ``day-1/`` and ``day-2/`` next to it.
The output is deterministic (no clock, no randomness) and uses only the standard library and the scenario
templates of ``benchmarks/bench_check.py``.

Each session replays one or two of the valid scenarios of ``data/transcripts/`` one after the other (the
market stall, the butler's placement, the tour planner's commitments, the guide's stances, the full errand
session, and once the gallery's long deliberation), with every id made unique to the episode
(SessionID, DialogIDs, PCPromptIDs, QueryIDs, RequestIDs) and its times shifted, as many simulated A-User
sessions would log them. Every transcript is valid (``pgm-explore check --corpus data/corpus`` finds nothing);
what differs between sessions is what the deliberations met: the PA Status of their feasibility checks
(``InsValue`` at the market, ``LocOOR`` in the gallery and the butler's house, ``Ack`` elsewhere), their
commitments and their stances. Notebook 05 analyses it with :class:`pgm_explore.analysis.Corpus`.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))

from bench_check import Template, templates  # noqa: E402  (a script beside the benchmarks' generator)

DAYS = 2
SESSIONS_A_DAY = 8
LONG_SESSION = 12  # the long deliberation (105 messages) in this session only: the corpus stays small


def sessions(scenarios: list[Template]) -> list[list[tuple[Template, int]]]:
    """(scenario, episode number) of each session, in order: one or two episodes a session."""
    short = [t for t in scenarios if t.name != "long-deliberation.jsonl"]
    long = next(t for t in scenarios if t.name == "long-deliberation.jsonl")
    plan: list[list[tuple[Template, int]]] = []
    episode = 0
    for n in range(DAYS * SESSIONS_A_DAY):
        chosen = [long] if n == LONG_SESSION else []
        chosen += [short[(n * 3 + k) % len(short)] for k in range(1 + n % 2)]
        plan.append([])
        for template in chosen:
            plan[-1].append((template, episode))
            episode += 1
    return plan


def main() -> None:
    for day in range(1, 10):  # (a day of an earlier, longer corpus goes too)
        folder = HERE / f"day-{day}"
        if day > DAYS:
            for old in folder.glob("*.jsonl"):
                old.unlink()
            if folder.is_dir():
                folder.rmdir()
            continue
        folder.mkdir(exist_ok=True)
        for old in folder.glob("*.jsonl"):
            old.unlink()
    for n, session in enumerate(sessions(templates())):
        day, number = divmod(n, SESSIONS_A_DAY)
        path = HERE / f"day-{day + 1}" / f"session-{number + 1:02d}.jsonl"
        with path.open("wb") as out:
            for template, episode in session:
                out.writelines(template.episode(episode))
        print(f"{path.relative_to(HERE)}: {', '.join(t.name for t, _ in session)}")


if __name__ == "__main__":
    main()
