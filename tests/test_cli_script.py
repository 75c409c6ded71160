"""The dialogue script format: what each script becomes, and what a person is told about a bad one.

tests/data/dialogue-script-cases.json was written by the hand-written checks the format had
before it became a JSON Schema (pgm_explore/cli/dialogue-script.schema.json): every message is
kept, byte for byte, so that a script that failed before fails with the same words.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from pgm_explore.cli import ScriptError, load_script

CASES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "dialogue-script-cases.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_script_reads_as_it_always_has(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    path = tmp_path / "script.json"
    path.write_text(json.dumps(case["script"]), encoding="utf-8")
    if case["message"] is not None:
        with pytest.raises(ScriptError) as caught:
            load_script(str(path))
        assert str(caught.value) == case["message"]
    else:
        script = load_script(str(path))
        assert script.dialog_id == case["dialog_id"]
        assert [dataclasses.asdict(step) for step in script.steps] == case["steps"]


def test_the_cases_cover_both_outcomes() -> None:
    messages = [case["message"] for case in CASES.values()]
    assert None in messages and len({m for m in messages if m}) >= 20


def test_the_schema_is_a_draft_2020_12_schema_that_programs_can_use() -> None:
    from importlib.resources import files

    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    from pgm_explore.spec import schema_resources

    # As a program would: the file the package ships, and the spec's schemas it refers to.
    schema = json.loads(files("pgm_explore.cli").joinpath("dialogue-script.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    registry = Registry().with_resources(
        (uri, Resource.from_contents(contents)) for uri, contents in schema_resources().items()
    )
    validator = Draft202012Validator(schema, registry=registry)
    example = json.loads((Path(__file__).parents[1] / "data" / "dialogue-scripts" / "market.json").read_text())
    assert validator.is_valid(example)
    assert not validator.is_valid({"steps": [{"partner": "dac", "kind": "purchase"}]})


def test_the_kinds_come_from_the_spec() -> None:
    from pgm_explore.spec import data_type

    message = CASES["dac bad kind"]["message"]
    assert ", ".join(data_type("BKN-DAC").schema["properties"]["Kind"]["enum"]) in message
