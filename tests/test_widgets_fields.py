"""The schema -> field predicates over every node of the bundled schemas (one engine for all types),
and random documents, right and wrong, through the composer."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

import ipywidgets
from conftest import KINDS

from pgm_explore.spec import DATA_TYPES, data_type
from pgm_explore.validation import validate
from pgm_explore.widgets import MessageComposer
from pgm_explore.widgets._fields import alternatives, default_value, fits, kind, resolve, slug

# The properties the spec leaves open (any JSON object, or object-or-string), and the
# stand-ins for what Data Exchange Metadata borrows from other standards: edited as JSON.
OPEN = {
    "SceneContext",
    "Intent",
    "Personality",
    "Spatial",
    "Temporal",
    "Legality",
    "Security",
    "Annotation",
    "AnnotationSpace",
    "AnnotationRights",
}


def nodes(schema: Mapping[str, Any], root: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[Any]:
    """Every (path, resolved node, root) reachable from ``schema``, items and alternatives included."""
    node, root = resolve(schema, root)
    yield path, node, root
    k = kind(node)
    if k == "object":
        for name, child in node["properties"].items():
            yield from nodes(child, root, (*path, name))
    elif k == "array":
        yield from nodes(node.get("items", {}), root, (*path, "[]"))
    elif k == "union":
        for option in alternatives(node):
            yield from nodes(option, root, path)


@pytest.mark.parametrize("spec", DATA_TYPES, ids=lambda dt: dt.name)
def test_every_node_gets_a_typed_editor_unless_the_spec_leaves_it_open(spec: Any) -> None:
    found = list(nodes(spec.schema, spec.schema))
    assert len(found) > 50
    wrong = [
        (path, kind(node)) for path, node, _ in found if (kind(node) == "open") != (bool(path) and path[-1] in OPEN)
    ]
    assert wrong == []


@pytest.mark.parametrize("spec", DATA_TYPES, ids=lambda dt: dt.name)
def test_the_default_of_every_node_fits_its_editor(spec: Any) -> None:
    assert [
        path for path, node, root in nodes(spec.schema, spec.schema) if not fits(node, default_value(node, root))
    ] == []


def test_slugs_are_css_class_names() -> None:
    assert slug(("Feasibility", "Steps", 0, "PAStatus")) == "Feasibility-Steps-0-PAStatus"
    assert slug(()) == "root"


# -- any document, however wrong, loads and comes back unchanged ----------------------------------

SCALARS: list[Any] = [None, True, 0, -1, 7, 2.5, 1e20, "", "x", "ack", [], {}, [1, "a"], {"k": [None]}]


def draw(schema: Mapping[str, Any], root: Mapping[str, Any], rng: random.Random, depth: int = 0) -> Any:
    """A random value the schema node accepts, or nearly (bounds and if/then are not honoured)."""
    node, root = resolve(schema, root)
    k = kind(node)
    if k == "const":
        return node["const"]
    if k == "enum":
        return rng.choice(node["enum"])
    if k == "boolean":
        return rng.random() < 0.5
    if k == "integer":
        return rng.randint(int(node.get("minimum", -5)), int(node.get("maximum", 300)))
    if k == "number":
        return rng.choice([rng.randint(0, 2_000_000_000_000), round(rng.random(), 3)])
    if k == "string":
        return rng.choice(["", "a", "Grüße «ok»", "kda-1", "x" * rng.randint(1, 30)])
    if k == "object":
        props = node["properties"]
        names = [n for n in props if n in node.get("required", ()) or rng.random() < 0.5]
        return {n: draw(props[n], root, rng, depth + 1) for n in names}
    if k == "array":
        return [draw(node.get("items", {}), root, rng, depth + 1) for _ in range(rng.randint(0, 3 if depth < 3 else 0))]
    if k == "union":
        return draw(rng.choice(alternatives(node)), root, rng, depth + 1)
    return rng.choice([{"a": 1, "b": ["c"]}, "free text", {}])


def mutate(doc: Any, rng: random.Random) -> None:
    """Replace, drop or add something at a random place of ``doc`` (in place)."""
    containers = []
    stack = [doc]
    while stack:
        value = stack.pop()
        if isinstance(value, dict | list) and value:
            containers.append(value)
            stack.extend(value.values() if isinstance(value, dict) else value)
    target = rng.choice(containers)
    key = rng.choice(list(target)) if isinstance(target, dict) else rng.randrange(len(target))
    action = rng.random()
    if isinstance(target, dict) and action < 0.2:
        del target[key]
    elif isinstance(target, dict) and action < 0.35:
        target[rng.choice(["Tone", "Questoin", "extra"])] = rng.choice(SCALARS)
    else:
        target[key] = copy.deepcopy(rng.choice(SCALARS))


@pytest.mark.parametrize(("type_name", "mode"), KINDS, ids=[f"{t}-{m}" for t, m in KINDS])
def test_drawn_and_mutated_documents_load_and_save_unchanged(
    type_name: str, mode: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("PGM_EXPLORE_DRAFTS", str(tmp_path))
    spec = data_type(type_name)
    schema = spec.schema
    rng = random.Random(f"{type_name}-{mode}")  # the same documents on every run
    c = MessageComposer(type_name, mode, draft_dir=False)
    automatic = (spec.time_field, "DataXMData")
    for _ in range(10):
        doc = draw(schema, schema, rng)
        if mode is not None:
            doc["Mode"] = mode
            doc = {k: v for k, v in doc.items() if k not in spec.mode_properties("RS" if mode == "RQ" else "RQ")}
        for round_ in range(3):
            c.load(doc)
            assert json.dumps(c.value) == json.dumps(doc), (round_, doc)
            assert c.findings == list(validate(doc).findings)
            # An edit changes what it edits (and the parts that follow the id), nothing else.
            c.set((spec.id_field,), f"edited-{round_}")
            expected = {**doc, spec.id_field: f"edited-{round_}"}
            assert {k: v for k, v in c.value.items() if k not in automatic} == {
                k: v for k, v in expected.items() if k not in automatic
            }
            doc = copy.deepcopy(doc)
            mutate(doc, rng)
    assert c.errors == []


# -- numbers are typed as text and read in the kernel by JSON rules -------------------------------


@pytest.mark.parametrize(
    ("typed", "value", "rule"),
    [
        ("1.5", 1.5, "type"),  # a browser's integer box made it 15
        ("2,5", "2,5", "type"),  # ... 25
        ("1e3", 1000.0, None),  # ... 13; an integer by JSON Schema
        ("-3", -3, "range"),  # ... 0, the box's minimum
        ("abc", "abc", "type"),  # letters vanished
        ("", "", "type"),
        ("7", 7, None),
    ],
)
def test_what_is_typed_into_a_number_box_is_what_is_validated(typed: str, value: Any, rule: str | None) -> None:
    c = MessageComposer("BKN-DAC", "RS", draft_dir=False)
    turn = c.field(("TurnIndex",))
    turn.editor.value = typed  # what the browser sends at each keystroke
    assert turn.editor.value == typed and not turn.raw
    assert json.dumps(c.value["TurnIndex"]) == json.dumps(value)
    assert [f.rule for f in c.findings if f.path == ("TurnIndex",)] == ([rule] if rule else [])
    assert turn.shown_messages == tuple(f.message for f in c.findings if f.path == ("TurnIndex",))
    assert c.errors == []


def test_a_percentage_for_a_confidence_gets_its_range_finding_at_the_field() -> None:
    c = MessageComposer("PC Prompt", draft_dir=False)
    c.set(("ResolvedReferents", 0), {"Expression": "it", "EntityID": "e-1", "Confidence": 0.5})
    confidence = c.field(("ResolvedReferents", 0, "Confidence"))
    confidence.editor.value = "55"
    assert c.value["ResolvedReferents"][0]["Confidence"] == 55 and not c.conforms
    assert [f.rule for f in c.findings if f.path == confidence.path] == ["range"]
    assert "pgmx-invalid" in confidence.box._dom_classes
    c.set(("ActionContext", "MaxSteps"), 5)
    max_steps = c.field(("ActionContext", "MaxSteps"))
    max_steps.editor.value = "0"  # a bounded box made it 1
    assert c.value["ActionContext"]["MaxSteps"] == 0
    assert ("range", ("ActionContext", "MaxSteps")) in [(f.rule, f.path) for f in c.findings]


def test_text_that_is_not_a_number_is_in_the_draft_and_comes_back(tmp_path: Any) -> None:
    c = MessageComposer("BKN-DAC", "RS", draft_dir=tmp_path, draft_name="typed")
    c.field(("TurnIndex",)).editor.value = "2,5"
    restored = MessageComposer("BKN-DAC", draft_dir=tmp_path, draft_name="typed")
    assert restored.value["TurnIndex"] == "2,5" and restored.field(("TurnIndex",)).editor.value == "2,5"


def test_a_number_as_typed_stays_as_typed_when_the_form_writes_the_same_value() -> None:
    c = MessageComposer("BKN-DAC", "RS", draft_dir=False)
    turn = c.field(("TurnIndex",))
    turn.editor.value = "1e3"
    c.mode = "RQ"  # the form writes the whole document back
    c.mode = "RS"
    assert turn.editor.value == "1e3" and c.value["TurnIndex"] == 1000.0


# -- the widget models a composer sends to the browser ---------------------------------------------


def _models() -> set[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the registry, read only
        return set(ipywidgets.Widget.widgets)


def test_a_bkn_dac_response_composer_sends_at_most_120_widget_models() -> None:
    before = _models()
    c = MessageComposer("BKN-DAC", "RS", draft_dir=False)
    made = len(_models() - before)
    assert made <= 120, made  # 119, and one for the undo keys (_keys.UndoKeys)
    # The other mode's properties and the closed expert view have no widgets yet.
    assert not c.field(("Question",)).built and not c.field(("QueryTime",)).built
    assert not c.field(("Answer",)).built or c.field(("Answer",)).children() == []
    c._form.expert_toggle.value = True
    assert c.field(("QueryTime",)).built and c.field(("QueryTime", "SimpleTimeData", 0, "StartTime")).built
    c.mode = "RQ"
    assert c.field(("Question",)).built


@pytest.mark.slow  # (a fresh interpreter, timed)
def test_a_composer_imports_the_validators_explainer_in_the_background() -> None:
    # The first value that does not conform needs python-jsonschema (seconds to import): a new
    # composer starts that import in a thread, so that the first wrong keystroke is not the one
    # that waits. Run in a fresh interpreter, where nothing has imported it yet.
    code = (
        "import sys, threading\n"
        "from pgm_explore.widgets import MessageComposer\n"
        "before = 'jsonschema' in sys.modules\n"
        "MessageComposer('PC Prompt', draft_dir=False)\n"
        "[t.join(120) for t in threading.enumerate() if t.name == 'pgmx-warm-up']\n"
        "print(before, 'jsonschema' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, check=False)
    assert done.stdout.split() == ["False", "True"], done.stderr[-2000:]


def test_a_finding_about_the_whole_message_marks_the_form_root() -> None:
    c = MessageComposer.from_document({"Header": "PGM-KDA-V1.0", "Mode": "RS", "Surprise": 1}, draft_dir=False)
    root = c.field(())
    assert "pgmx-field-root" in root.box._dom_classes
    assert root.shown_messages and "pgmx-invalid" in root.box._dom_classes
