"""Documents the composers start from: a new message, a Response to a Request, the next turn.

Pure functions of dicts (no widgets), so that notebooks and tests can use them directly.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from pgm_explore.models import data_exchange_metadata, simple_time_now
from pgm_explore.spec import HEADERS, DataType, data_type
from pgm_explore.widgets._fields import default_value

__all__ = [
    "REPLY_COPIED",
    "auto_dem",
    "auto_time",
    "fresh_id",
    "mode_required",
    "next_turn_context",
    "reply_document",
    "skeleton",
    "type_of",
]

REPLY_COPIED = ("MInstance", "UEnvironment", "SessionID", "DialogID", "TurnIndex")
"""What a Response copies from its Request (besides RequestID, which is the Request's QueryID)."""

_CONTEXT = ("MInstance", "UEnvironment", "SessionID")


def type_of(document: Mapping[str, Any]) -> DataType | None:
    """The data type a document's Header names, or None."""
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
    """Simple Time of the present instant, named after the message as the examples do."""
    return simple_time_now(time_id=f"st-{document_id}")


def auto_dem(type_name: str, mode: str | None, document_id: Any) -> dict[str, Any]:
    """Data Exchange Metadata naming the message and its sender (by type and mode)."""
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


def skeleton(type_name: str, mode: str | None = None, *, context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A new message of a type and mode with every required property, in schema order.

    Identifier, time and Data Exchange Metadata are filled (a fresh id, now, the sender by
    type and mode); ``context`` gives values to copy (MInstance, DialogID, TurnIndex, ...).
    Other strings are empty: the findings then say what is left to fill.

    >>> doc = skeleton("BKN-DAC", "RS", context={"DialogID": "d-1", "TurnIndex": 2})
    >>> list(doc)[:2], doc["DialogID"], doc["TurnIndex"], doc["DataXMData"]["Source"]
    (['Header', 'Mode'], 'd-1', 2, [{'AIMID': 'PGM-DAC'}])
    >>> [k for k in doc if k in ("RequestID", "Outcome", "Kind")]
    ['RequestID', 'Outcome']
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
            doc[name] = default_value(node, schema)
    return doc


def reply_document(request: Mapping[str, Any]) -> dict[str, Any]:
    """The skeleton of the Response to a Request: RequestID = its QueryID; MInstance,
    UEnvironment, SessionID, DialogID and TurnIndex copied; a fresh QueryID and time.

    Raises ``ValueError`` for anything but a Request of a BKN type.

    >>> rq = skeleton("BKN-PAL", "RQ", context={"DialogID": "d-9", "TurnIndex": 4})
    >>> rs = reply_document(rq)
    >>> rs["Mode"], rs["RequestID"] == rq["QueryID"], rs["QueryID"] != rq["QueryID"], rs["TurnIndex"]
    ('RS', True, True, 4)
    """
    spec = type_of(request)
    if spec is None or not spec.has_modes or request.get("Mode") != "RQ":
        what = spec.name if spec else "a message of unknown type"
        mode = request.get("Mode")
        raise ValueError(
            f"only a Request (Mode RQ) of BKN-PRC, BKN-DAC or BKN-PAL has a Response; this is {what}"
            + (f" with Mode {mode!r}" if mode else "")
        )
    context = {name: request[name] for name in REPLY_COPIED if name in request}
    doc = skeleton(spec.name, "RS", context=context)
    if "QueryID" in request:
        doc["RequestID"] = request["QueryID"]
    return doc


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
        context.update({k: docs[-1][k] for k in _CONTEXT if k in docs[-1]})
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
