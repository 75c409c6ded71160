"""Self-contained JSON Schemas for the MCP tools: what ``tools/list`` tells a host about each message.

The bundled PGM-AUA schemas refer to other MPAI schemas by URL (Simple Time, Data Exchange
Metadata and what that refers to). An MCP host fetches nothing (and the SDK client resolves a
``$ref`` only inside the schema document), so each tool schema carries every schema it needs in
its root ``$defs``, each under the file name of its ``$id``, with every ``$ref`` rewritten to a
local pointer. The schemas come from :func:`pgm_explore.spec.resolve`, the resolver of the registry
the validator uses, so the two cannot disagree.

A type's schema covers both modes with ``if``/``then`` on Mode (DECISIONS D8); a tool's input is
a Request and its output a Response, so each is narrowed to one mode: Mode fixed, the other mode's
properties left out (``additionalProperties: false`` then refuses them), the mode's required
properties added.

>>> schema = request_schema("BKN-PAL")
>>> schema["properties"]["Mode"]["const"], "Stance" in schema["properties"]
('RQ', False)
>>> sorted(schema["$defs"])
['Annotation', 'DataExchangeMetadata', 'MLModelQualifier', 'Rights', 'Security', 'SimpleTime', 'SpatialAttitude']
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal

from pgm_explore.spec import MODE_WORDS, data_type, resolve
from pgm_explore.validation.findings import json_path

__all__ = ["action_context_findings", "action_context_schema", "request_schema", "response_schema", "tool_input_schema"]

_DRAFT = "https://json-schema.org/draft/2020-12/schema"


class _Bundler:
    """Collects the external schemas one document needs into ``defs``, with local ``$ref`` s."""

    def __init__(self, root_id: str) -> None:
        self.root_id = root_id
        self.defs: dict[str, Any] = {}
        self.names: dict[str, str] = {}

    def name(self, url: str) -> str:
        """The ``$defs`` key of the schema with ``$id`` ``url`` (embedded on first use)."""
        if url not in self.names:
            stem = url.rsplit("/", 1)[-1].removesuffix(".json")
            name = stem
            while name in self.defs:  # never in the bundled set; kept so a clash cannot go unnoticed
                name += "_"
            self.names[url] = name
            self.defs[name] = {}  # reserve the key before the recursion
            embedded = {k: v for k, v in resolve(url)[1].items() if k not in ("$id", "$schema")}
            self.defs[name] = self.rewrite(embedded, url)
        return self.names[url]

    def rewrite(self, node: Any, base: str) -> Any:
        """``node`` (part of the schema with ``$id`` ``base``) with every ``$ref`` local to the bundle."""
        if isinstance(node, list):
            return [self.rewrite(item, base) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                out[key] = self.ref(value, base)
            elif key in ("properties", "$defs", "patternProperties", "dependentSchemas"):
                # Keys of these maps are names, not keywords: a property named "$ref" stays one.
                out[key] = {name: self.rewrite(sub, base) for name, sub in value.items()}
            else:
                out[key] = self.rewrite(value, base)
        return out

    def ref(self, value: str, base: str) -> str:
        url, _, fragment = value.partition("#")
        target = url or base
        if target == self.root_id:
            return f"#{fragment}"
        return f"#/$defs/{self.name(target)}{fragment}"


def _narrowed(schema: Mapping[str, Any], mode: Literal["RQ", "RS"]) -> dict[str, Any]:
    """The type's schema for one mode: Mode fixed, the other mode's properties gone, its own required."""
    narrowed = copy.deepcopy(dict(schema))
    conditions = narrowed.pop("allOf", [])
    for condition in conditions:
        if condition["if"]["properties"]["Mode"]["const"] != mode:
            continue
        then = condition["then"]
        narrowed["required"] = [*narrowed["required"], *then.get("required", [])]
        for name, allowed in then.get("properties", {}).items():
            if allowed is False:
                narrowed["properties"].pop(name, None)
    mode_property = narrowed["properties"]["Mode"]
    narrowed["properties"]["Mode"] = {"description": mode_property.get("description", ""), "const": mode}
    return narrowed


def _bundled(type_name: str, mode: Literal["RQ", "RS"]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(body, $defs) of one mode of a type, ready to sit anywhere under a root carrying those $defs."""
    dt = data_type(type_name)
    bundler = _Bundler(dt.schema_id)
    body = bundler.rewrite(_narrowed(dt.schema, mode), dt.schema_id)
    for key in ("$id", "$schema"):
        body.pop(key, None)
    defs = {**body.pop("$defs", {}), **bundler.defs}
    return body, defs


def _mode_title(type_name: str, mode: str) -> str:
    return f"{data_type(type_name).title} {MODE_WORDS[mode]}"


@cache
def _request(type_name: str) -> dict[str, Any]:
    body, defs = _bundled(type_name, "RQ")
    return {"$schema": _DRAFT, **body, "title": _mode_title(type_name, "RQ"), "$defs": defs}


@cache
def _response(type_name: str) -> dict[str, Any]:
    body, defs = _bundled(type_name, "RS")
    return {"$schema": _DRAFT, **body, "title": _mode_title(type_name, "RS"), "$defs": defs}


def request_schema(type_name: str) -> dict[str, Any]:
    """The self-contained JSON Schema of a Request of ``type_name`` (a fresh copy)."""
    return copy.deepcopy(_request(type_name))


def response_schema(type_name: str) -> dict[str, Any]:
    """The self-contained JSON Schema of a Response of ``type_name``: a tool's ``outputSchema``."""
    return copy.deepcopy(_response(type_name))


@cache
def _action_context() -> dict[str, Any]:
    dt = data_type("PC Prompt")
    bundler = _Bundler(dt.schema_id)
    own = {name: bundler.rewrite(sub, dt.schema_id) for name, sub in dt.schema["$defs"].items()}
    body = own.pop("ActionContext")
    return _pruned({"$schema": _DRAFT, "title": "ActionContext", **body, "$defs": {**own, **bundler.defs}})


def action_context_schema() -> dict[str, Any]:
    """The ActionContext of the PC Prompt schema, self-contained (``$defs`` for what it refers to)."""
    return copy.deepcopy(_action_context())


def _pruned(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with only the ``$defs`` some ``$ref`` reaches (from the body, then transitively)."""
    defs = schema.get("$defs", {})
    reached: set[str] = set()
    pending = [{k: v for k, v in schema.items() if k != "$defs"}]
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/").split("/", 1)[0]
                if name not in reached and name in defs:
                    reached.add(name)
                    pending.append(defs[name])
            pending.extend(node.values())
    return {**schema, "$defs": {name: sub for name, sub in defs.items() if name in reached}}


def _renamed(node: Any, names: Mapping[str, str]) -> Any:
    """``node`` with its ``$ref`` s to ``#/$defs/<old>`` pointing at ``#/$defs/<new>``."""
    if isinstance(node, list):
        return [_renamed(item, names) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _renamed(value, names) for key, value in node.items()}
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        head, sep, rest = ref.removeprefix("#/$defs/").partition("/")
        out["$ref"] = f"#/$defs/{names.get(head, head)}{sep}{rest}"
    return out


def tool_input_schema(type_name: str, *, action_context: bool = False) -> dict[str, Any]:
    """``inputSchema`` of the tool of ``type_name``: ``message`` (a Request), and for BKN-DAC
    ``action_context`` (the PC Prompt's ActionContext, or null); nothing else is accepted."""
    body, defs = _bundled(type_name, "RQ")
    body["title"] = _mode_title(type_name, "RQ")
    properties: dict[str, Any] = {"message": body}
    if action_context:
        context = action_context_schema()
        context.pop("$schema")
        own = context.pop("$defs")
        # The same name with another text (the PC Prompt's Affordance has no descriptions): renamed.
        renamed = {name: f"PCPrompt{name}" for name, sub in own.items() if defs.get(name, sub) != sub}
        context, own = _renamed(context, renamed), _renamed(own, renamed)
        defs.update({renamed.get(name, name): sub for name, sub in own.items()})
        context["description"] = (
            "The ActionContext in force (the PC Prompt's, or one a later BKN-PRC Response refined), "
            "under which feasibility is judged; a BKN-DAC Request has no field for it."
        )
        properties["action_context"] = {"anyOf": [context, {"type": "null"}], "default": None}
    return _pruned(
        {
            "$schema": _DRAFT,
            "type": "object",
            "properties": properties,
            "required": ["message"],
            "additionalProperties": False,
            "$defs": defs,
        }
    )


@cache
def _action_context_validator() -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry

    # An empty registry: the schema is self-contained, and nothing may be fetched.
    return Draft202012Validator(_action_context(), registry=Registry())


def action_context_findings(value: Any) -> list[dict[str, Any]]:
    """Why ``value`` is not an ActionContext as the PC Prompt schema has it (empty: it is one).

    >>> action_context_findings({"MLocations": 5})[0]["path"]
    '$.action_context.MLocations'
    >>> action_context_findings({"MLocations": ["ML-1"], "WalletLimit": 100})
    []
    """
    errors = sorted(_action_context_validator().iter_errors(value), key=lambda e: list(e.absolute_path))
    return [
        {
            "rule": "action-context",
            "path": json_path(("action_context", *error.absolute_path)),
            "message": f"the action_context argument is not an ActionContext: {error.message}",
            "spec": data_type("PC Prompt").clause(
                ("ActionContext", *(p for p in error.absolute_path if isinstance(p, str)))
            ),
        }
        for error in errors
    ]
