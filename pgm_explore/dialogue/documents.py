"""Building documents: a new message, the next turn of a dialogue, the Response to a Request.

Everything that writes a PGM-AUA document from nothing or from another one lives here, so that the
composers (``pgm_explore.widgets``), the MCP client and the reference partner servers
(``pgm_explore.mcp``) agree on what a Response copies from its Request and on how identifiers, times
and Data Exchange Metadata are filled. Pure functions of dicts: no widgets, no I/O.

Spec sources: the PGM-AUA V1.0 texts of the four data types (``pgm_explore.spec``) for the properties
and their order; DECISIONS D16 (a Response names its Request by ``RequestID`` = the Request's
``QueryID``, has its ``TurnIndex``, and is the only one to it) and D15 (turns are counted per
DialogID and type); the examples of the spec for the style of identifiers (``kda-...``, ``st-<id>``
for a Simple Time).

>>> rq = request_envelope("BKN-PAL", {"MInstance": "m", "UEnvironment": "u", "SessionID": "s"},
...                       dialog_id="d-1", turn_index=0)
>>> rs = response(rq, {"Outcome": "not_answered"})
>>> list(rs)[:3], rs["RequestID"] == rq["QueryID"], rs["TurnIndex"], list(rs)[-1]
(['Header', 'Mode', 'MInstance'], True, 0, 'DataXMData')
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from pgm_explore.models import data_exchange_metadata
from pgm_explore.spec import HEADERS, DataType, Mode, data_type, simple_time_now

__all__ = [
    "REPLY_COPIED",
    "SESSION",
    "auto_dem",
    "auto_time",
    "fresh_id",
    "mode_required",
    "next_turn_context",
    "reply_document",
    "request_envelope",
    "response",
    "response_envelope",
    "skeleton",
    "smallest_value",
    "type_of",
    "with_metadata",
]

SESSION = ("MInstance", "UEnvironment", "SessionID")
"""The identities of the A-User session that every message of a deliberation carries."""

REPLY_COPIED = (*SESSION, "DialogID", "TurnIndex")
"""What a Response copies from its Request (besides RequestID, which is the Request's QueryID)."""


def type_of(document: Mapping[str, Any]) -> DataType | None:
    """The data type a document's Header names, or None.

    >>> type_of({"Header": "PGM-KDA-V1.0"}).name, type_of({"Header": 7}), type_of({})
    ('BKN-DAC', None, None)
    """
    header = document.get("Header")
    return HEADERS.get(header) if isinstance(header, str) else None


def fresh_id(type_name: str) -> str:
    """A new QueryID (PCPromptID) in the examples' style: the type's three letters and a random part.

    >>> fresh_id("BKN-DAC")[:4], len(fresh_id("PC Prompt"))
    ('kda-', 16)
    """
    letters = data_type(type_name).acronym.rsplit("-", 1)[-1].lower()
    return f"{letters}-{uuid.uuid4().hex[:12]}"


def auto_time(document_id: str) -> dict[str, Any]:
    """Simple Time of the present instant, named after the message as the examples do.

    >>> auto_time("kda-1")["SimpleTimeID"]
    'st-kda-1'
    """
    return simple_time_now(time_id=f"st-{document_id}")


def auto_dem(type_name: str, mode: str | None, document_id: Any) -> dict[str, Any]:
    """Data Exchange Metadata naming the message and its sender (by type and mode).

    A mode the type does not have is read as the type's first mode, and an identifier that is not
    text as none, so that a half-written document still gets metadata that fits its Header.

    >>> auto_dem("BKN-PRC", "RS", "kpr-1")["Source"], auto_dem("BKN-PRC", "??", 5)["DataID"]
    ([{'AIMID': 'PGM-PRC'}], '')
    """
    spec = data_type(type_name)
    valid_mode: Any = mode if spec.has_modes and mode in spec.modes else (spec.modes[0] if spec.has_modes else None)
    return data_exchange_metadata(spec.name, valid_mode, document_id if isinstance(document_id, str) else "")


def mode_required(spec: DataType, mode: str | None) -> tuple[str, ...]:
    """Properties the schema requires in ``mode`` only (its ``allOf`` if/then on Mode).

    >>> mode_required(data_type("BKN-DAC"), "RS"), mode_required(data_type("BKN-PAL"), "RQ")
    (('RequestID', 'Outcome'), ())
    """
    for rule in spec.schema.get("allOf", ()):
        condition = rule.get("if", {}).get("properties", {}).get("Mode", {})
        if mode is not None and condition.get("const") == mode:
            return tuple(rule.get("then", {}).get("required", ()))
    return ()


def smallest_value(node: Mapping[str, Any]) -> Any:
    """The value a required top-level property starts with: the smallest its schema node allows.

    The top-level properties of the four schemas are identifiers, texts, counters and enumerations
    (Simple Time and Data Exchange Metadata, the two borrowed schemas, are built by the models), so
    a node is read as it stands; a required member of an object or the ``minItems`` of an array are
    filled the same way, so that the result is never "absent" where the schema asks for something.

    >>> smallest_value({"type": "integer", "minimum": 1}), smallest_value({"enum": ["b", "a"]})
    (1, 'b')
    >>> smallest_value({"type": "string"}), smallest_value({"type": "boolean"})
    ('', False)
    >>> smallest_value({"type": "object", "required": ["Step"], "properties": {"Step": {"type": "integer"}}})
    {'Step': 0}
    >>> smallest_value({"type": "array", "minItems": 1, "items": {"type": "string"}})
    ['']
    """
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    kind = node.get("type")
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        low, high = node.get("minimum"), node.get("maximum")
        start = 0 if low is None else low
        return start if high is None else min(start, high)
    if kind == "array":
        return [smallest_value(node.get("items", {})) for _ in range(int(node.get("minItems", 0)))]
    if kind == "object" and "properties" in node:
        members = node["properties"]
        return {name: smallest_value(members[name]) for name in members if name in node.get("required", ())}
    if kind == "string" or (isinstance(kind, list) and "object" not in kind and "string" in kind):
        return ""
    return {}


def skeleton(type_name: str, mode: str | None = None, *, context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A new message of a type and mode with every required property, in schema order.

    Identifier, time and Data Exchange Metadata are filled (a fresh id, now, the sender by
    type and mode); ``context`` gives values to copy (MInstance, DialogID, TurnIndex, ...).
    Other strings are empty: the findings then say what is left to fill.

    >>> doc = skeleton("BKN-DAC", "RS", context={"DialogID": "d-1", "TurnIndex": 2})
    >>> list(doc)[:2], doc["DialogID"], doc["TurnIndex"], doc["DataXMData"]["Source"]
    (['Header', 'Mode'], 'd-1', 2, [{'AIMID': 'PGM-DAC'}])
    >>> [k for k in doc if k in ("RequestID", "Outcome", "Kind")], doc["Outcome"]
    (['RequestID', 'Outcome'], 'answered')
    """
    spec = data_type(type_name)
    if spec.has_modes:
        mode = mode or spec.modes[0]
        if mode not in spec.modes:
            raise ValueError(f"{spec.name} has modes {', '.join(spec.modes)}, not {mode!r}")
    elif mode:
        raise ValueError(f"{spec.name} has no Mode; pass mode=None, not {mode!r}")
    schema = spec.schema
    required = set(schema.get("required", ())) | set(mode_required(spec, mode))
    document_id = str((context or {}).get(spec.id_field) or fresh_id(spec.name))
    doc: dict[str, Any] = {}
    for name, node in schema["properties"].items():
        if context is not None and name in context and name not in ("Header", "Mode"):
            doc[name] = context[name]
        elif name == "Mode" and spec.has_modes:
            doc[name] = mode
        elif name == spec.id_field:
            doc[name] = document_id
        elif name == spec.time_field:
            doc[name] = auto_time(document_id)
        elif name == "DataXMData":
            doc[name] = auto_dem(spec.name, mode, document_id)
        elif name in required:
            doc[name] = smallest_value(node)
    return doc


def _bkn_request(request: Mapping[str, Any]) -> DataType:
    """The type of a Request of a BKN type; ``ValueError`` for any other document."""
    spec = type_of(request)
    if spec is None or not spec.has_modes or request.get("Mode") != "RQ":
        what = spec.name if spec else "a message of unknown type"
        mode = request.get("Mode")
        raise ValueError(
            f"only a Request (Mode RQ) of BKN-PRC, BKN-DAC or BKN-PAL has a Response; this is {what}"
            + (f" with Mode {mode!r}" if mode else "")
        )
    return spec


def reply_document(request: Mapping[str, Any]) -> dict[str, Any]:
    """The skeleton of the Response to a Request, to be filled in: RequestID = its QueryID;
    MInstance, UEnvironment, SessionID, DialogID and TurnIndex copied; a fresh QueryID and time.
    The Response to a BKN-DAC feasibility Request proposes one ``Feasibility.Steps`` entry per
    Process Action, its Step copied; each PAStatus, and the Overall verdict, are left for the
    person to choose (their ``required`` findings say so).

    Raises ``ValueError`` for anything but a Request of a BKN type.

    >>> rq = skeleton("BKN-PAL", "RQ", context={"DialogID": "d-9", "TurnIndex": 4})
    >>> rs = reply_document(rq)
    >>> rs["Mode"], rs["RequestID"] == rq["QueryID"], rs["QueryID"] != rq["QueryID"], rs["TurnIndex"]
    ('RS', True, True, 4)
    >>> rq = {**skeleton("BKN-DAC", "RQ"), "Kind": "feasibility",
    ...       "ProcessActions": [{"Step": 0, "Statement": "MM-Add a"}, {"Step": 2, "Statement": "MM-Move b"}]}
    >>> reply_document(rq)["Feasibility"]
    {'Steps': [{'Step': 0}, {'Step': 2}]}
    >>> reply_document({"Header": "PGM-PCP-V1.0"})
    Traceback (most recent call last):
    ValueError: only a Request (Mode RQ) of BKN-PRC, BKN-DAC or BKN-PAL has a Response; this is PC Prompt
    """
    spec = _bkn_request(request)
    context = {name: request[name] for name in REPLY_COPIED if name in request}
    doc = skeleton(spec.name, "RS", context=context)
    if "QueryID" in request:
        doc["RequestID"] = request["QueryID"]
    actions = request.get("ProcessActions")
    if spec.name == "BKN-DAC" and request.get("Kind") == "feasibility" and isinstance(actions, list):
        steps = [{"Step": a["Step"]} for a in actions if isinstance(a, dict) and "Step" in a]
        feasibility = {"Steps": steps}
        order = list(spec.schema["properties"])
        at = order.index("Feasibility")
        doc = {
            **{k: v for k, v in doc.items() if order.index(k) < at},
            "Feasibility": feasibility,
            **{k: v for k, v in doc.items() if order.index(k) > at},
        }
    return doc


def request_envelope(
    type_name: str, session: Mapping[str, Any], *, dialog_id: str, turn_index: int, query_id: str | None = None
) -> dict[str, Any]:
    """The envelope of a Request: Header, Mode, the ``session`` identities, a QueryID (fresh unless
    given) and its time, DialogID and TurnIndex. The caller adds the type's own fields and then
    :func:`with_metadata`. ``session`` must hold the three identities (``KeyError`` otherwise).

    >>> rq = request_envelope("BKN-DAC", {"MInstance": "m", "UEnvironment": "u", "SessionID": "s", "X": 1},
    ...                       dialog_id="d", turn_index=3, query_id="kda-1")
    >>> list(rq), rq["QueryTime"]["SimpleTimeID"]
    (['Header', 'Mode', 'MInstance', 'UEnvironment', 'SessionID', 'QueryID', 'QueryTime', 'DialogID', 'TurnIndex'], 'st-kda-1')
    """
    spec = data_type(type_name)
    query = query_id or fresh_id(spec.name)
    return {
        "Header": spec.header,
        "Mode": "RQ",
        **{key: session[key] for key in SESSION},
        "QueryID": query,
        "QueryTime": auto_time(query),
        "DialogID": dialog_id,
        "TurnIndex": turn_index,
    }


def response_envelope(
    request: Mapping[str, Any], *, identity: Mapping[str, str] | None = None, query_id: str | None = None
) -> dict[str, Any]:
    """The envelope of the Response to ``request``: Header and Mode, the session identities, a
    QueryID (fresh unless given) and its time, DialogID and TurnIndex as the Request has them, and
    RequestID = the Request's QueryID (D16).

    An identity that the Request does not hold as text is taken from ``identity`` (what the
    dialogue's first Request said), so that a Response can conform to a Request that does not.
    Raises ``ValueError`` for anything but a Request of a BKN type.

    >>> rq = {"Header": "PGM-KPR-V1.0", "Mode": "RQ", "SessionID": 5, "QueryID": "q", "DialogID": "d",
    ...       "TurnIndex": 0}
    >>> rs = response_envelope(rq, identity={"SessionID": "s"}, query_id="kpr-2")
    >>> rs["Header"], rs["SessionID"], rs["RequestID"], "MInstance" in rs
    ('PGM-KPR-V1.0', 's', 'q', False)
    """
    spec = _bkn_request(request)
    query = query_id or fresh_id(spec.name)
    identities = {}
    for key in SESSION:
        value = request.get(key)
        if isinstance(value, str):
            identities[key] = value
        elif identity is not None and key in identity:
            identities[key] = identity[key]
    envelope: dict[str, Any] = {"Header": spec.header, "Mode": "RS", **identities}
    envelope["QueryID"] = query
    envelope["QueryTime"] = auto_time(query)
    envelope.update({key: request[key] for key in ("DialogID", "TurnIndex") if key in request})
    if "QueryID" in request:
        envelope["RequestID"] = request["QueryID"]
    return envelope


def with_metadata(document: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` with its Data Exchange Metadata (re)written last, from its Header, Mode and id.

    >>> doc = with_metadata({"Header": "PGM-KDA-V1.0", "Mode": "RS", "QueryID": "kda-1", "DataXMData": None})
    >>> list(doc)[-1], doc["DataXMData"]["DataID"], doc["DataXMData"]["Source"]
    ('DataXMData', 'kda-1', [{'AIMID': 'PGM-DAC'}])
    """
    spec = type_of(document)
    if spec is None:
        raise ValueError(f"no PGM-AUA data type has the Header {document.get('Header')!r}")
    mode: Mode | None = document.get("Mode") if spec.has_modes else None
    done = {key: value for key, value in document.items() if key != "DataXMData"}
    done["DataXMData"] = data_exchange_metadata(spec.name, mode, str(document.get(spec.id_field, "")))
    return done


def response(
    request: Mapping[str, Any], payload: Mapping[str, Any], *, identity: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The Response to ``request`` with ``payload`` (Outcome and the type's own fields): its
    :func:`response_envelope`, then the payload, then the Data Exchange Metadata. Not validated:
    a partner checks what it sends.

    >>> rq = skeleton("BKN-DAC", "RQ", context={"MInstance": "m", "UEnvironment": "u", "SessionID": "s",
    ...                                          "DialogID": "d", "TurnIndex": 1})
    >>> rs = response(rq, {"Outcome": "answered"})
    >>> rs["Outcome"], rs["DataXMData"]["DataID"] == rs["QueryID"], rs["TurnIndex"]
    ('answered', True, 1)
    """
    return with_metadata({**response_envelope(request, identity=identity), **payload})


def next_turn_context(messages: Sequence[Any], type_name: str) -> dict[str, Any]:
    """What the next Request of ``type_name`` in a dialogue takes from the messages so far.

    The session (MInstance, UEnvironment, SessionID) of the last message; the DialogID of
    the latest PC Prompt for BKN-PRC (it refines that prompt), else of the latest message of
    the type (BKN-DAC and BKN-PAL keep MCP dialogues of their own); TurnIndex one more than
    the last Request of that dialogue and type, or 0.

    >>> pcp = skeleton("PC Prompt", context={"DialogID": "dlg-1", "SessionID": "s"})
    >>> ctx = next_turn_context([pcp], "BKN-PRC")
    >>> ctx["DialogID"], ctx["TurnIndex"], ctx["SessionID"]
    ('dlg-1', 0, 's')
    """
    spec = data_type(type_name)
    docs = [m for m in messages if isinstance(m, Mapping)]
    context: dict[str, Any] = {}
    if docs:
        context.update({k: docs[-1][k] for k in SESSION if k in docs[-1]})
    if spec.name == "PC Prompt":
        context["DialogID"] = f"dlg-{uuid.uuid4().hex[:8]}"
        return context
    source = "PC Prompt" if spec.name == "BKN-PRC" else spec.name
    dialog = next((d.get("DialogID") for d in reversed(docs) if (t := type_of(d)) and t.name == source), None)
    if not isinstance(dialog, str):
        dialog = f"dlg-{uuid.uuid4().hex[:8]}-{spec.acronym.rsplit('-', 1)[-1].lower()}"
    context["DialogID"] = dialog
    turns = [
        d["TurnIndex"]
        for d in docs
        if (t := type_of(d))
        and t.name == spec.name
        and d.get("Mode") == "RQ"
        and d.get("DialogID") == dialog
        and type(d.get("TurnIndex")) is int
    ]
    context["TurnIndex"] = max(turns) + 1 if turns else 0
    return context
