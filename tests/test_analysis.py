"""Tables and plots of a transcript: fixed columns and dtypes, exact values, plots that do not warn."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import EXAMPLES, ROOT, load
from hypothesis import given, settings
from hypothesis import strategies as st

from pgm_explore import analysis
from pgm_explore.analysis import (
    COMMITMENT_EVENTS,
    COMMITMENTS_COLUMNS,
    DTYPES,
    EXCHANGES_COLUMNS,
    FEASIBILITY_COLUMNS,
    FINDINGS_COLUMNS,
    MESSAGES_COLUMNS,
    OUTCOMES_COLUMNS,
    PA_STATUS_COLUMNS,
    TABLES,
    commitments,
    exchanges,
    feasibility,
    findings,
    messages,
    outcomes,
    pa_status_counts,
)
from pgm_explore.dialogue import Transcript

TRANSCRIPTS = sorted((ROOT / "data" / "transcripts").glob("*.jsonl"))
PA_CODES = ["Ack", "Clash", "FaultyReq", "IncID", "IncDQ", "InsRights", "InsValue", "LocOOR", "PostRef", "QualNS"]
COLUMNS = {
    "messages": MESSAGES_COLUMNS,
    "exchanges": EXCHANGES_COLUMNS,
    "feasibility": FEASIBILITY_COLUMNS,
    "pastatus": PA_STATUS_COLUMNS,
    "outcomes": OUTCOMES_COLUMNS,
    "commitments": COMMITMENTS_COLUMNS,
    "findings": FINDINGS_COLUMNS,
}


def values(column: pd.Series) -> list[Any]:
    """A column as a list, missing values as None."""
    return [None if pd.isna(v) else v for v in column]


def example(name: str) -> dict[str, Any]:
    return copy.deepcopy(load(EXAMPLES / name))


def market_documents() -> list[dict[str, Any]]:
    """The Agora market story, cut down: PC Prompt, a feasibility exchange (Ack / InsValue / InsRights),
    a commitment exchange, and a BKN-PAL Request left unanswered. Turns renumbered from 0."""
    feasibility_rq = example("bkn-dac/valid/rq-feasibility-market.json")
    feasibility_rs = example("bkn-dac/valid/rs-feasibility-market.json")
    commitment_rq = example("bkn-dac/valid/rq-commitment.json")
    commitment_rs = example("bkn-dac/valid/rs-commitment.json")
    for document, turn in ((feasibility_rq, 0), (feasibility_rs, 0), (commitment_rq, 1), (commitment_rs, 1)):
        document["TurnIndex"] = turn
    return [
        example("pc-prompt/valid/market-purchase.json"),
        feasibility_rq,
        feasibility_rs,
        commitment_rq,
        commitment_rs,
        example("bkn-pal/valid/rq-minimal.json"),
    ]


@pytest.fixture(scope="module")
def market() -> Transcript:
    return Transcript.from_documents(market_documents(), source="m")


# A transcript whose values have every wrong JSON type the tables must survive.
HOSTILE: list[Any] = [
    [1, 2],
    {"Header": "nope", "QueryID": 5},
    {"Header": "PGM-PCP-V1.0", "DialogID": "d", "SessionID": "s", "ActionContext": ["not", "an", "object"]},
    {
        "Header": "PGM-KDA-V1.0",
        "Mode": "RQ",
        "QueryID": "q-1",
        "DialogID": "d",
        "TurnIndex": "zero",
        "Kind": "feasibility",
        # No integer Step: with one, TranscriptChecker itself fails on the Response's unhashable Steps.
        "ProcessActions": ["junk", {"Step": [1], "Statement": 5}, {"Step": 1.5, "Statement": "MM-Move Nil x"}, {}],
        "Commitments": ["junk", {"CommitmentID": 3}, {"CommitmentID": "c", "Statement": ["x"]}],
        "ReleasedCommitmentIDs": [None, "c"],
        "QueryTime": {"SimpleTimeData": [{"StartTime": "soon"}]},
    },
    {
        "Header": "PGM-KDA-V1.0",
        "Mode": "RS",
        "QueryID": ["q-2"],
        "DialogID": "d",
        "RequestID": "q-1",
        "TurnIndex": 1.5,
        "Outcome": 7,
        "Feasibility": {"Steps": ["junk", {"Step": {"a": 1}, "PAStatus": 3}, {"Step": [1]}], "Overall": None},
        "CommitmentStatus": [{"CommitmentID": "c", "Status": "lost"}, {"CommitmentID": "c", "Status": 1}, "junk"],
    },
    {"Header": "PGM-KDA-V1.0", "Mode": "RQ", "DialogID": 4, "Kind": "feasibility", "ProcessActions": "none"},
]


def transcripts() -> Iterator[tuple[str, Transcript]]:
    yield "empty", Transcript()
    yield "market", Transcript.from_documents(market_documents())
    yield "hostile", Transcript.from_documents(HOSTILE)


# --- the shape of every table ---------------------------------------------------------------------


def test_tables_and_dtypes_have_the_same_names() -> None:
    assert list(TABLES) == ["messages", "exchanges", "feasibility", "pastatus", "outcomes", "commitments", "findings"]
    assert list(DTYPES) == list(TABLES)
    for name, columns in COLUMNS.items():
        assert tuple(DTYPES[name]) == columns, name


def test_all_is_sorted_and_public() -> None:
    assert analysis.__all__ == sorted(analysis.__all__)
    for name in analysis.__all__:
        value = getattr(analysis, name)
        if callable(value) and hasattr(value, "__module__"):
            assert value.__module__ == "pgm_explore.analysis", name


@pytest.mark.parametrize("name", list(TABLES))
@pytest.mark.parametrize(("label", "transcript"), list(transcripts()), ids=lambda v: v if isinstance(v, str) else "")
def test_columns_and_dtypes(name: str, label: str, transcript: Transcript) -> None:
    frame = TABLES[name](transcript)
    assert tuple(frame.columns) == COLUMNS[name]
    assert {c: str(d) for c, d in frame.dtypes.items()} == dict(DTYPES[name])
    assert isinstance(frame.index, pd.RangeIndex)
    # What the command line will do with it.
    frame.to_csv()
    frame.to_json(orient="records")


@pytest.mark.parametrize("name", [n for n in TABLES if n != "pastatus"])
def test_an_empty_transcript_gives_empty_tables(name: str) -> None:
    assert TABLES[name](Transcript()).empty


def test_import_does_not_load_matplotlib() -> None:
    code = "import sys, pgm_explore.analysis; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# --- exact values on the market transcript --------------------------------------------------------


def test_messages(market: Transcript) -> None:
    frame = messages(market)
    assert frame[["position", "source", "type", "mode", "dialog"]].to_dict("list") == {
        "position": [0, 1, 2, 3, 4, 5],
        "source": [f"m#{i}" for i in range(6)],
        "type": ["PC Prompt", "BKN-DAC", "BKN-DAC", "BKN-DAC", "BKN-DAC", "BKN-PAL"],
        "mode": [None, "RQ", "RS", "RQ", "RS", "RQ"],
        "dialog": ["dlg-7f3a-01", "dlg-7f3a-dac", "dlg-7f3a-dac", "dlg-7f3a-dac", "dlg-7f3a-dac", "dlg-b9d0-pal0"],
    }
    assert frame["query_id"].tolist() == [
        "pcp-7f3a-0001",
        "kda-7f3a-0105",
        "kda-7f3a-0106",
        "kda-7f3a-0107",
        "kda-7f3a-0108",
        "kpa-b9d0-0000",
    ]
    records = frame[["session", "request_id", "turn", "kind", "outcome", "conforms"]].to_dict("records")
    assert records[0] == {
        "session": "ses-7f3a-20261114",
        "request_id": None,
        "turn": None,
        "kind": None,
        "outcome": None,
        "conforms": True,
    }
    assert records[2] == {
        "session": "ses-7f3a-20261114",
        "request_id": "kda-7f3a-0105",
        "turn": 0,
        "kind": None,
        "outcome": "answered",
        "conforms": True,
    }
    assert values(frame["kind"])[1::2] == ["feasibility", "commitment", None]
    assert frame["turn"].tolist()[1:] == [0, 0, 1, 1, 0]
    assert frame["time"].tolist() == pytest.approx(
        [1794651340.0, 1794651345.5, 1794651346.3, 1794651347.0, 1794651347.4, 1795279202.0]
    )
    # Counted from the findings at each source, whatever the rules of the checker are today.
    for severity in ("error", "warning"):
        expected = [sum(f.severity == severity and f.source == s for f in market.findings) for s in frame["source"]]
        assert frame[f"{severity}s"].tolist() == expected
    assert frame["errors"].sum() == market.errors and frame["warnings"].sum() == market.warnings
    assert frame["warnings"][5] >= 1  # the BKN-PAL Request is unanswered


def test_exchanges(market: Transcript) -> None:
    frame = exchanges(market)
    records = frame.drop(columns=["latency", "latency_ms"]).to_dict("records")
    assert records == [
        {
            "type": "BKN-DAC",
            "dialog": "dlg-7f3a-dac",
            "turn": 0,
            "kind": "feasibility",
            "request": "kda-7f3a-0105",
            "request_source": "m#1",
            "response": "kda-7f3a-0106",
            "response_source": "m#2",
            "outcome": "answered",
        },
        {
            "type": "BKN-DAC",
            "dialog": "dlg-7f3a-dac",
            "turn": 1,
            "kind": "commitment",
            "request": "kda-7f3a-0107",
            "request_source": "m#3",
            "response": "kda-7f3a-0108",
            "response_source": "m#4",
            "outcome": "answered",
        },
        {
            "type": "BKN-PAL",
            "dialog": "dlg-b9d0-pal0",
            "turn": 0,
            "kind": None,
            "request": "kpa-b9d0-0000",
            "request_source": "m#5",
            "response": None,
            "response_source": None,
            "outcome": None,
        },
    ]
    latency = frame["latency"].tolist()
    assert latency[:2] == [0.8, 0.4] and frame["latency_ms"].tolist()[:2] == [800.0, 400.0]
    assert math.isnan(latency[2])


def test_latency_needs_one_clock() -> None:
    documents = market_documents()[1:3]
    segment = documents[1]["QueryTime"]["SimpleTimeData"][0]
    segment["TimeType"], segment["FlagsByte"] = False, 2  # the Response on a relative clock
    assert math.isnan(exchanges(Transcript.from_documents(documents))["latency"][0])


def test_feasibility(market: Transcript) -> None:
    frame = feasibility(market)
    assert frame.drop(columns=["Statement", "Reason"]).to_dict("records") == [
        {
            "DialogID": "dlg-7f3a-dac",
            "RequestID": "kda-7f3a-0105",
            "Step": step,
            "Action": action,
            "PAStatus": status,
            "Overall": "partially_feasible",
            "PredictedPAStatus": "Ack",
        }
        for step, action, status in ((0, "MM-Move", "Ack"), (1, "Transact", "InsValue"), (2, "MM-Add", "InsRights"))
    ]
    assert frame["Statement"][1] == "Transact With Transaction With SPM (Status=Model)"
    assert frame["Reason"].isna().tolist() == [True, False, False]
    assert frame["Reason"][1].startswith("The lantern costs 180 AGR")


def test_overall_is_on_every_row_of_the_request_even_a_step_not_reported(market: Transcript) -> None:
    documents = market_documents()
    (response,) = [d for d in documents if isinstance(d.get("Feasibility"), dict)]
    del response["Feasibility"]["Steps"][1]
    frame = feasibility(Transcript.from_documents(documents))
    assert values(frame["PAStatus"]) == ["Ack", None, "InsRights"]
    assert values(frame["Overall"]) == ["partially_feasible"] * 3


def _plan(statements: list[str], **changes: Any) -> list[dict[str, Any]]:
    """PC Prompt + a feasibility Request of the market, with these statements, and no Response."""
    prompt, request = market_documents()[:2]
    request["ProcessActions"] = [{"Step": i, "Statement": s} for i, s in enumerate(statements)]
    for key, value in changes.items():
        target, field = key.split("__")
        {"prompt": prompt, "request": request}[target][field] = value
    return [prompt, request]


def _predicted(documents: list[dict[str, Any]]) -> list[str | None]:
    return values(feasibility(Transcript.from_documents(documents))["PredictedPAStatus"])


def test_predicted_pa_status_uses_the_session_action_context() -> None:
    plan = ["Transact With Transaction=180 AGR", "MM-Add Nil item-1 At ML-Balcony", "Track Nil x"]
    # WalletLimit 150; ML-Balcony is not among the MLocations; Track is not in the Repertoire.
    assert _predicted(_plan(plan)) == ["InsValue", "LocOOR", "FaultyReq"]
    # Another session and no PC Prompt of the dialogue: no ActionContext, no prediction.
    assert _predicted(_plan(plan, request__SessionID="ses-other")) == [None, None, None]
    # The PC Prompt of the dialogue itself wins over the session's.
    assert _predicted(_plan(plan, request__SessionID="ses-other", prompt__DialogID="dlg-7f3a-dac"))[0] == "InsValue"
    # A PC Prompt without an ActionContext: no prediction.
    documents = _plan(plan)
    del documents[0]["ActionContext"]
    assert _predicted(documents) == [None, None, None]


def test_predicted_pa_status_counts_only_earlier_prompts() -> None:
    prompt, request = _plan(["Transact With Transaction=180 AGR"])
    assert _predicted([request, prompt]) == [None]


def test_the_predictions_are_the_checkers(market: Transcript) -> None:
    """PredictedPAStatus is what the checker predicts: a step reported Ack that the table predicts to
    fail is exactly a ``precheck-differs`` warning (the checker warns only of those, "stricter")."""
    prompt, request = _plan(["Transact With Transaction=180 AGR", "MM-Add Nil item-1 At ML-Balcony-Lucia"])
    response = example("bkn-dac/valid/rs-feasibility-market.json")
    response["TurnIndex"] = 0
    response["Feasibility"] = {
        "Steps": [{"Step": 0, "PAStatus": "Ack"}, {"Step": 1, "PAStatus": "Ack"}],
        "Overall": "feasible",
    }
    stricter = Transcript.from_documents([prompt, request, response])
    assert values(feasibility(stricter)["PredictedPAStatus"]) == ["InsValue", "Ack"]
    for transcript in [stricter, market, *(Transcript.load(str(p)) for p in TRANSCRIPTS)]:
        frame = feasibility(transcript)
        failing = frame["PredictedPAStatus"].notna() & (frame["PredictedPAStatus"] != "Ack")
        differ = frame[failing & (frame["PAStatus"] == "Ack")]
        warned = [f for f in transcript.findings if f.rule == "precheck-differs"]
        assert len(differ) == len(warned)
        for (_, row), finding in zip(differ.iterrows(), warned, strict=True):
            assert f"Step {row['Step']} is reported Ack" in finding.message
            assert f"suggests {row['PredictedPAStatus']}" in finding.message
    assert any(f.rule == "precheck-differs" for f in stricter.findings)


def test_pa_status_counts(market: Transcript) -> None:
    frame = pa_status_counts(market)
    assert frame["PAStatus"].tolist() == PA_CODES
    assert dict(zip(frame["PAStatus"], frame["count"], strict=True)) == {
        code: {"Ack": 1, "InsValue": 1, "InsRights": 1}.get(code, 0) for code in PA_CODES
    }
    predicted = pa_status_counts(market, predicted=True)
    assert predicted["count"].tolist() == [3] + [0] * 9
    assert pa_status_counts(Transcript())["count"].tolist() == [0] * 10
    assert pa_status_counts(Transcript())["PAStatus"].tolist() == PA_CODES


def test_outcomes(market: Transcript) -> None:
    assert outcomes(market).to_dict("records") == [
        {
            "type": "BKN-DAC",
            "kind": "feasibility",
            "answered": 1,
            "partially_answered": 0,
            "not_answered": 0,
            "unanswered": 0,
            "total": 1,
        },
        {
            "type": "BKN-DAC",
            "kind": "commitment",
            "answered": 1,
            "partially_answered": 0,
            "not_answered": 0,
            "unanswered": 0,
            "total": 1,
        },
        {
            "type": "BKN-PAL",
            "kind": None,
            "answered": 0,
            "partially_answered": 0,
            "not_answered": 0,
            "unanswered": 1,
            "total": 1,
        },
    ]


def test_outcomes_follow_the_spec_order() -> None:
    documents = []
    for i, (kind, outcome) in enumerate(
        [
            ("clarification", "answered"),
            ("affordances", "not_answered"),
            ("zz-custom", "maybe"),
            ("clarification", None),
        ]
    ):
        documents.append({"Header": "PGM-KDA-V1.0", "Mode": "RQ", "QueryID": f"q{i}", "DialogID": "d", "Kind": kind})
        if outcome:
            documents.append(
                {
                    "Header": "PGM-KDA-V1.0",
                    "Mode": "RS",
                    "QueryID": f"r{i}",
                    "DialogID": "d",
                    "RequestID": f"q{i}",
                    "Outcome": outcome,
                }
            )
    documents.insert(0, {"Header": "PGM-KPA-V1.0", "Mode": "RQ", "QueryID": "p", "DialogID": "d"})
    frame = outcomes(Transcript.from_documents(documents))
    assert frame[["type", "kind"]].to_dict("list") == {
        "type": ["BKN-DAC", "BKN-DAC", "BKN-DAC", "BKN-PAL"],
        "kind": ["affordances", "clarification", "zz-custom", None],
    }
    assert frame["answered"].tolist() == [0, 1, 0, 0]
    assert frame["not_answered"].tolist() == [1, 0, 0, 0]
    assert frame["unanswered"].tolist() == [0, 1, 0, 1]
    assert frame["total"].tolist() == [1, 2, 1, 1]  # "maybe" is no Outcome: it counts in total only


def test_commitments(market: Transcript) -> None:
    frame = commitments(market)
    budget = "The total spend in this dialogue must not exceed 150 AGR."
    lantern = "'the blue glass lantern' denotes item-lantern-blue-114."
    assert frame.drop(columns="dialog").to_dict("records") == [
        {"source": "m#3", "position": 3, "commitment": "cm-budget-150", "event": "submitted", "statement": budget},
        {"source": "m#3", "position": 3, "commitment": "cm-lantern-114", "event": "submitted", "statement": lantern},
        {"source": "m#3", "position": 3, "commitment": "cm-route-plaza-gate", "event": "released", "statement": None},
        {"source": "m#4", "position": 4, "commitment": "cm-budget-150", "event": "retained", "statement": budget},
        {"source": "m#4", "position": 4, "commitment": "cm-lantern-114", "event": "retained", "statement": lantern},
        {
            "source": "m#4",
            "position": 4,
            "commitment": "cm-route-plaza-gate",
            "event": "status-released",
            "statement": None,
        },
    ]
    assert set(frame["dialog"]) == {"dlg-7f3a-dac"}
    assert set(frame["event"]) <= set(COMMITMENT_EVENTS)


def test_commitment_statements_are_per_dialogue() -> None:
    first = {
        "Header": "PGM-KDA-V1.0",
        "Mode": "RQ",
        "DialogID": "a",
        "Commitments": [{"CommitmentID": "c", "Statement": "A"}],
    }
    second = {"Header": "PGM-KDA-V1.0", "Mode": "RQ", "DialogID": "b", "ReleasedCommitmentIDs": ["c"]}
    third = {
        "Header": "PGM-KDA-V1.0",
        "Mode": "RS",
        "DialogID": "a",
        "CommitmentStatus": [{"CommitmentID": "c", "Status": "conflicting"}],
    }
    frame = commitments(Transcript.from_documents([first, second, third]))
    assert frame[["dialog", "event", "statement"]].to_dict("records") == [
        {"dialog": "a", "event": "submitted", "statement": "A"},
        {"dialog": "b", "event": "released", "statement": None},
        {"dialog": "a", "event": "conflicting", "statement": "A"},
    ]


def test_findings(market: Transcript) -> None:
    frame = findings(market)
    assert len(frame) == len(market.findings)
    for record, finding in zip(frame.to_dict("records"), market.findings, strict=True):
        expected = finding.to_dict()
        assert record == {
            "source": expected["source"],
            "dialog": expected["dialog"],
            "type": expected["type"],
            "severity": expected["severity"],
            "rule": expected["rule"],
            "path": finding.path,
            "message": expected["message"],
            "spec": expected["spec"],
        }
    assert frame[["source", "rule", "path"]].iloc[-1].tolist() == ["m#5", "unanswered", "$.QueryID"]


def test_hostile_values_are_missing_not_wrong() -> None:
    transcript = Transcript.from_documents(HOSTILE)
    frame = messages(transcript)
    assert frame["query_id"].isna().tolist() == [True, True, True, False, True, True]
    assert frame["turn"].isna().all()
    assert frame["time"].isna().all()
    steps = feasibility(transcript)
    assert len(steps) == 3  # the three ProcessActions items that are objects
    assert steps["Step"].isna().all() and steps["PredictedPAStatus"].isna().all()
    assert steps["PAStatus"].isna().all() and steps["Overall"].isna().all()
    assert commitments(transcript)["event"].tolist() == ["submitted", "released"]


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_tables_of_the_sample_transcripts(path: Path) -> None:
    transcript = Transcript.load(str(path))
    for name, table in TABLES.items():
        assert tuple(table(transcript).columns) == COLUMNS[name]
    frame = messages(transcript)
    assert frame["errors"].sum() == transcript.errors
    assert frame["warnings"].sum() == transcript.warnings
    assert len(exchanges(transcript)) == outcomes(transcript)["total"].sum()


# Every transcript of the repository, the defective ones and the corpus's too: each table read as a
# stream must be the table of the transcript in memory.
DATA_FILES = sorted(
    path
    for folder in ("transcripts", "corpus")
    for path in (ROOT / "data" / folder).rglob("*")
    if path.suffix in (".jsonl", ".json") and not path.name.endswith(".expected.json")
)


def _documents_as_items(documents: list[Any]) -> list[Any]:
    from pgm_explore.io import Item

    return [Item(f"t#{index}", None, None, document, None) for index, document in enumerate(documents)]


@pytest.mark.parametrize("name", list(TABLES))
@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: str(p.relative_to(ROOT / "data")))
def test_a_table_read_as_a_stream_is_the_table_of_the_transcript(name: str, path: Path) -> None:
    """From the readers' items, and from the file on the bulk path (each message's document only
    the members the table reads: one it reads and does not declare would be missing here)."""
    from pgm_explore.analysis._tables import TABULATIONS, path_table
    from pgm_explore.dialogue import iter_checked
    from pgm_explore.io import iter_documents

    expected = TABLES[name](Transcript.load(str(path)))
    pd.testing.assert_frame_equal(TABULATIONS[name]().streamed(iter_checked(iter_documents(str(path)))), expected)
    pd.testing.assert_frame_equal(path_table(name, [str(path)]), expected)


@pytest.mark.parametrize("name", list(TABLES))
def test_a_table_of_several_files_in_many_partitions_is_the_table_of_the_transcript(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One transcript in several files, each cut into partitions of a few lines on the bulk path."""
    from pgm_explore.analysis._tables import path_table

    monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", "3000")
    paths = [str(ROOT / "data/transcripts/long-deliberation.jsonl"), str(ROOT / "data/transcripts/full-session.jsonl")]
    expected = TABLES[name](Transcript.load(*paths))
    pd.testing.assert_frame_equal(path_table(name, paths), expected)


@pytest.mark.parametrize("name", list(TABLES))
@pytest.mark.parametrize("documents", [market_documents(), HOSTILE], ids=["market", "hostile"])
def test_a_table_read_as_a_stream_survives_what_the_tables_survive(name: str, documents: list[Any]) -> None:
    from pgm_explore.analysis._tables import TABULATIONS
    from pgm_explore.dialogue import iter_checked

    expected = TABLES[name](Transcript.from_documents(documents, source="t"))
    got = TABULATIONS[name]().streamed(iter_checked(_documents_as_items(documents), built=True))
    pd.testing.assert_frame_equal(got, expected)


def test_every_table_can_be_made_from_a_stream() -> None:
    from pgm_explore.analysis._tables import TABULATIONS

    assert list(TABULATIONS) == list(TABLES)


@pytest.mark.parametrize("name", list(TABLES))
def test_a_table_read_as_a_stream_keeps_no_message(name: str) -> None:
    """What a table read as a stream keeps is its rows: no message and no document once told."""
    import weakref

    from pgm_explore.analysis._tables import TABULATIONS
    from pgm_explore.dialogue import iter_checked
    from pgm_explore.io import Item

    class Document(dict[str, Any]):  # (a dict that can be referred to weakly)
        pass

    alive: list[weakref.ref[Document]] = []

    def items() -> Iterator[Item]:
        for index, plain in enumerate(market_documents()):
            document = Document(plain)
            alive.append(weakref.ref(document))
            yield Item(f"t#{index}", None, None, document, None)

    tabulation = TABULATIONS[name]()
    for message, found in iter_checked(items(), built=True):
        if found:
            tabulation.note(found.findings)
        if message is not None:
            tabulation.add(message, found.predictions)
    del message, found
    assert len(alive) == 6 and [ref() for ref in alive] == [None] * 6
    assert len(tabulation.frame()) > 0


# --- plots ----------------------------------------------------------------------------------------


@pytest.fixture
def pyplot() -> Iterator[Any]:
    matplotlib = pytest.importorskip("matplotlib", reason="the plots need the notebook extra")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


PLOTS = [
    ("plot_pa_status", {}),
    ("plot_pa_status", {"predicted": True}),
    ("plot_feasibility", {}),
    ("plot_feasibility", {"by": "request"}),
    ("plot_timeline", {}),
    ("plot_timeline", {"x": "time"}),
    ("plot_timeline", {"x": "position"}),
]


@pytest.mark.parametrize(("name", "options"), PLOTS, ids=lambda v: v if isinstance(v, str) else repr(v))
@pytest.mark.parametrize(("label", "transcript"), list(transcripts()), ids=lambda v: v if isinstance(v, str) else "")
def test_plots_return_axes_without_warnings(
    pyplot: Any, name: str, options: dict[str, Any], label: str, transcript: Transcript
) -> None:
    from matplotlib.axes import Axes

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = getattr(analysis, name)(transcript, **options)
        ax.figure.canvas.draw()
    assert isinstance(ax, Axes)


def test_plots_draw_on_the_given_axes(pyplot: Any, market: Transcript) -> None:
    _, axes = pyplot.subplots(1, 3)
    assert analysis.plot_pa_status(market, ax=axes[0]) is axes[0]
    assert analysis.plot_feasibility(market, ax=axes[1]) is axes[1]
    assert analysis.plot_timeline(market, ax=axes[2]) is axes[2]
    assert len(pyplot.get_fignums()) == 1


def test_plot_contents(pyplot: Any, market: Transcript) -> None:
    ax = analysis.plot_pa_status(market)
    assert [p.get_height() for p in ax.patches] == [1, 0, 0, 0, 0, 1, 1, 0, 0, 0]
    assert [t.get_text() for t in ax.get_xticklabels()] == PA_CODES
    ax = analysis.plot_feasibility(market)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["dlg-7f3a-dac"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Ack", "InsRights", "InsValue"]
    ax = analysis.plot_timeline(market)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["dlg-7f3a-01", "dlg-7f3a-dac", "dlg-b9d0-pal0"]
    assert ax.get_xlabel() == "seconds since the first message"
    assert len(ax.get_lines()) == 2  # the two answered exchanges
    assert "unanswered" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_plot_options_are_checked(pyplot: Any, market: Transcript) -> None:
    with pytest.raises(ValueError, match="by must be"):
        analysis.plot_feasibility(market, by="dialogue")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="x must be"):
        analysis.plot_timeline(market, x="turn")  # type: ignore[arg-type]


def test_latency_has_no_float_noise() -> None:
    """Epoch times 0.7 s apart subtract to 0.7000000476837158 in floats; the table shows 0.7."""

    def message(mode: str, query: str, seconds: float, **more: Any) -> dict[str, Any]:
        time = {"SimpleTimeData": [{"StartTime": seconds, "TimeType": True, "TimeUnit": "00"}]}
        return {"Header": "PGM-KPA-V1.0", "Mode": mode, "QueryID": query, "DialogID": "d", "TurnIndex": 0,
                "QueryTime": time, **more}  # fmt: skip

    t = Transcript.from_documents(
        [message("RQ", "q-1", 1794826200.0), message("RS", "q-2", 1794826200.7, RequestID="q-1")]
    )
    assert analysis.exchanges(t)["latency"].tolist() == [0.7]


def _timed(mode: str, query: str, start: int | float, unit: str = "01", absolute: bool = True, **more: Any) -> dict:
    time = {"SimpleTimeData": [{"StartTime": start, "TimeType": absolute, "TimeUnit": unit}]}
    return {"Header": "PGM-KDA-V1.0", "Mode": mode, "QueryID": query, "DialogID": "d", "TurnIndex": 0,
            "QueryTime": time, **more}  # fmt: skip


def test_times_read_as_iso_8601_utc_beside_exact_seconds_without_float_noise() -> None:
    # 1796518920998 ms times 1e-3 is 1796518920.9980001 in floats; the message wrote .998.
    t = Transcript.from_documents(
        [
            _timed("RQ", "q-1", 1796518920998),
            _timed("RS", "q-2", 1796518921235, RequestID="q-1"),
            _timed("RQ", "q-3", 1796518920998123, unit="10"),  # microseconds
            _timed("RQ", "q-4", 12500, absolute=False),  # a relative clock: no date
            _timed("RQ", "q-5", -500),  # before the epoch
        ]
    )
    frame = messages(t)
    assert frame["time"].tolist()[:3] == [1796518920.998, 1796518921.235, 1796518920.998123]
    assert values(frame["time_utc"]) == [
        "2026-12-06T01:02:00.998Z",
        "2026-12-06T01:02:01.235Z",
        "2026-12-06T01:02:00.998123Z",
        None,
        "1969-12-31T23:59:59.500Z",
    ]
    assert list(frame.columns).index("time_utc") == list(frame.columns).index("time") + 1
    table = exchanges(t)
    assert table["latency"].tolist()[0] == 0.237 and table["latency_ms"].tolist()[0] == 237.0
    assert math.isnan(table["latency_ms"].tolist()[1])  # q-3: unanswered


_LAST = 253_402_300_799  # 9999-12-31T23:59:59 on the epoch
_FIRST = -62_135_596_800  # 0001-01-01T00:00:00


@settings(max_examples=400, deadline=None)
@given(
    st.floats(allow_nan=True, allow_infinity=True)
    | st.floats(min_value=_FIRST - 2, max_value=_LAST + 2)
    | st.integers(min_value=_FIRST - 2, max_value=_LAST + 2)
    # (times as messages write them: whole seconds and up to seven decimals, the edges of the years)
    | st.builds(
        lambda whole, digits, places: float(f"{whole}.{digits:0{places}d}"[: len(str(whole)) + 1 + places]),
        st.integers(min_value=_FIRST - 1, max_value=_LAST + 1) | st.sampled_from([0, 1, _LAST, _LAST + 1, -1]),
        st.integers(min_value=0, max_value=9_999_999),
        st.integers(min_value=1, max_value=7),
    )
)
def test_a_time_is_read_from_its_digits_as_exactly_as_by_decimal(seconds: float) -> None:
    from pgm_explore.analysis._columns import _exact_utc, _utc

    expected = _exact_utc(repr(seconds)) if math.isfinite(seconds) else None
    assert _utc((True, seconds)) == expected
    assert _utc((False, seconds)) is None
    if expected is not None:
        assert len(expected) in (24, 27) and expected.endswith("Z")


def test_a_time_a_c_library_cannot_break_down_is_read_the_exact_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows' gmtime, say, stops at the year 3000: the exact way writes the time all the same."""
    import time as clock

    from pgm_explore.analysis import _columns

    def refuses(seconds: float) -> clock.struct_time:
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(_columns.time, "gmtime", refuses)
    assert _columns._utc((True, 32503680000.25)) == "3000-01-01T00:00:00.250Z"


@pytest.mark.slow  # (the command run twice in a process of its own, as a person runs it)
def test_the_csv_and_json_of_a_table_keep_exact_seconds_and_readable_times(tmp_path: Path) -> None:
    path = tmp_path / "timed.jsonl"
    path.write_text(
        "\n".join(json.dumps(d) for d in (_timed("RQ", "q-1", 1796518920998), _timed("RS", "q-2", 1796518921698, RequestID="q-1"))),
        encoding="utf-8",
    )  # fmt: skip
    run = [sys.executable, "-m", "pgm_explore", "table"]
    out = subprocess.run([*run, "messages", str(path)], capture_output=True, text=True, check=True).stdout
    header, first = out.splitlines()[:2]
    assert "time,time_utc," in header and ",1796518920.998,2026-12-06T01:02:00.998Z," in first
    records = json.loads(subprocess.run([*run, "exchanges", "--format=json", str(path)], capture_output=True,
                                        text=True, check=True).stdout)  # fmt: skip
    assert (records[0]["latency"], records[0]["latency_ms"]) == (0.7, 700.0)
