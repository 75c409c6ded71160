"""What the forkserver of ``validate``'s local workers imports: python-jsonschema, with
``rfc3987_syntax`` deferred to its first use (``pgm_explore/validation/_preload.py``).

Each check runs in a new interpreter: this one has imported python-jsonschema long ago, and its
forkserver (one a process) keeps the preload of whoever started it first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pgm_explore.spec import schema_resources

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"

# What python-jsonschema's iri checks say of some values: asked in a new interpreter, after
# importing python-jsonschema plainly or through the preload module.
_FORMATS = """
import json, sys
if sys.argv[1] == "preload":
    import pgm_explore.validation._preload
else:
    import jsonschema
imported = "rfc3987_syntax" in sys.modules
from jsonschema import Draft202012Validator, FormatChecker
values = ["http://example.com/ä", "http://[::1", "not an iri", "", 5, "mailto:a@b.c", "//host/path", "a b"]
answers = {
    form: [FormatChecker().conforms(v, form) for v in values]
    + [Draft202012Validator({"format": form}, format_checker=Draft202012Validator.FORMAT_CHECKER).is_valid(v)
       for v in values]
    for form in ("iri", "iri-reference", "uri")
}
print(json.dumps({"imported": imported, "checkers": sorted(FormatChecker().checkers), "answers": answers}))
"""


def _python(code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _keywords(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            if key not in ("properties", "$defs", "patternProperties"):
                yield from _keywords(value)
            elif isinstance(value, dict):
                for sub in value.values():
                    yield from _keywords(sub)
    elif isinstance(node, list):
        for item in node:
            yield from _keywords(item)


def test_no_bundled_schema_asks_for_a_format() -> None:
    # Why deferring rfc3987_syntax costs validate nothing: no schema it explains with has a format.
    schemas = schema_resources()
    assert len(schemas) >= 6
    for uri, schema in schemas.items():
        assert "format" not in set(_keywords(schema)), uri


@pytest.mark.slow
def test_the_preload_defers_rfc3987_syntax_and_every_format_check_answers_the_same() -> None:
    plain = json.loads(_python(_FORMATS, "plain"))
    preloaded = json.loads(_python(_FORMATS, "preload"))
    if plain["imported"]:  # (where rfc3987_syntax is installed, as Jupyter's jsonschema extras install it)
        assert "iri" in plain["checkers"] and "iri-reference" in plain["checkers"]
    assert preloaded["imported"] is False
    assert preloaded["checkers"] == plain["checkers"]
    assert preloaded["answers"] == plain["answers"]


# The command's workers, started as the command starts them, asked what they imported; then the
# command's own code on them, against the same command in one process.
_WORKERS = """
import contextlib, io, json, os, sys
from pgm_explore._engine import engine
from pgm_explore.cli import build_parser, main
from pgm_explore.cli import _validate as command

path = sys.argv[1]
with engine(2, preload=command.PRELOAD) as workers:
    modules = workers.client.run(lambda: ["rfc3987_syntax" in sys.modules, "jsonschema" in sys.modules])
    os.environ["PGM_EXPLORE_PARTITION_BYTES"] = "3000"
    args = build_parser().parse_args(["validate", "--format", "json", "--workers", "2", path])
    out, err = io.StringIO(), io.StringIO()
    there = [command.run_on(workers, args, out, err), out.getvalue(), err.getvalue()]
del os.environ["PGM_EXPLORE_PARTITION_BYTES"]
here_out = io.StringIO()
with contextlib.redirect_stdout(here_out):
    status = main(["validate", "--format", "json", "--workers", "0", path])
print(json.dumps({"modules": sorted(modules.values()), "there": there, "here": [status, here_out.getvalue(), ""]}))
"""


@pytest.mark.slow
def test_local_workers_import_no_rfc3987_syntax_and_say_what_one_process_says(tmp_path: Path) -> None:
    lines = []
    for path in sorted(DATA.rglob("*.jsonl")):
        lines.extend(path.read_bytes().splitlines())
    # Messages that do not conform, spread among the others: the workers explain them.
    wrong = [
        b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}',
        b'{"Header": "PGM-KDA-V1.0", "Mode": "RS", "TurnIndex": -1, "Comment": "x"}',
        b'{"Header": "PGM-KPR-V1.0", "Mode": "RX"}',
    ]
    for position, line in enumerate(wrong * 10):
        lines.insert(position * len(lines) // 30, line)
    transcript = tmp_path / "all.jsonl"
    transcript.write_bytes(b"\n".join(lines) + b"\n")
    got = json.loads(_python(_WORKERS, str(transcript)))
    assert got["modules"] == [[False, True], [False, True]]
    assert got["there"] == got["here"]
    status, output, _ = got["here"]
    assert status == 1 and output.count("\n") == len(lines)
    assert output.count('"conforms":false') >= 30


# What a check's local workers have imported as they start (their forkserver's preload).
_CHECK_WORKERS = """
import json, sys
from pgm_explore._engine import engine
from pgm_explore.dialogue._transcript import PRELOAD
with engine(2, preload=PRELOAD) as workers:
    modules = workers.client.run(lambda: ["rfc3987_syntax" in sys.modules, "jsonschema" in sys.modules])
print(json.dumps(sorted(modules.values())))
"""


@pytest.mark.slow
def test_check_s_workers_start_ready_to_explain_without_rfc3987_syntax() -> None:
    # (Each worker imported python-jsonschema at its first message that does not conform: more
    # than a second of its own, where Jupyter's dependencies install rfc3987_syntax.)
    assert json.loads(_python(_CHECK_WORKERS)) == [[False, True], [False, True]]


# The command as its process's own command line (main() reading sys.argv), against the same
# command called by a program (main(ARGV)), which imports python-jsonschema as it is.
_COMMAND = """
import contextlib, io, json, sys
from pgm_explore.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    if sys.argv[1] == "own":
        sys.argv = ["pgm-explore", "validate", "--format", "json", sys.argv[2]]
        status = main()
    else:
        status = main(["validate", "--format", "json", sys.argv[2]])
print(json.dumps({"status": status, "out": out.getvalue(), "imported": "rfc3987_syntax" in sys.modules,
                  "jsonschema": "jsonschema" in sys.modules}))
"""


@pytest.mark.slow
def test_the_command_s_own_process_explains_without_building_rfc3987_syntax(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    path.write_bytes(
        b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}\n{"Header": "PGM-KDA-V1.0", "Mode": "RS", "TurnIndex": -1}\n'
    )
    own = json.loads(_python(_COMMAND, "own", str(path)))
    called = json.loads(_python(_COMMAND, "called", str(path)))
    assert own["jsonschema"] and called["jsonschema"]  # (both explained a message)
    assert own["imported"] is False
    if _installed("rfc3987_syntax"):
        assert called["imported"] is True  # (a program's process: python-jsonschema imported as it is)
    assert (own["status"], own["out"]) == (called["status"], called["out"])
    assert own["status"] == 1 and own["out"].count('"conforms":false') == 2


def _installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
