"""``$ref`` in the bundled schemas: one ``referencing`` registry, and :func:`resolve` built on it.

Sources: JSON Schema draft 2020-12 (``$ref``, ``$id``), RFC 6901 (JSON Pointer: ``~1`` is ``/`` and
``~0`` is ``~``) and RFC 3986 (relative references), as the ``referencing`` library implements them.
Every bundled schema is registered under its ``$id`` (DECISIONS D1: nothing is fetched), and the
validator, the property tables, the widgets and the MCP tool schemas follow references through it.
A plain reference (a JSON Pointer, a bundled schema's address) :func:`resolve` follows itself, to the
same node, so that compiling the typed readers of clean messages imports no ``referencing``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

if TYPE_CHECKING:
    from referencing import Registry, Resource

__all__ = ["registry", "resolve"]

_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


@cache
def registry() -> Registry[Any]:
    """Every bundled schema as a ``referencing.Registry``, keyed by ``$id``: give it to a
    python-jsonschema validator (``Draft202012Validator(schema, registry=registry())``).

    >>> registry().contents("https://schemas.mpai.community/OSD/V1.5/data/SimpleTime.json")["title"]
    'Simple Time V1.5'
    """
    # Imported here: `import pgm_explore` stays light, and conforming messages never need it.
    from referencing import Registry

    from pgm_explore.spec import schema_resources

    return Registry().with_resources((uri, _resource(contents)) for uri, contents in schema_resources().items())


def _resource(contents: Mapping[str, Any]) -> Resource[Any]:
    from referencing import Resource
    from referencing.jsonschema import DRAFT202012

    # Following a $ref into a resource that names its "$schema", python-jsonschema switches
    # to the class registered for it, and would check `pattern` the Python way there. Every
    # bundled schema is draft 2020-12: said once, by the registry.
    if contents.get("$schema") != _DRAFT_2020_12:
        return Resource.from_contents(contents, default_specification=DRAFT202012)
    return DRAFT202012.create_resource({k: v for k, v in contents.items() if k != "$schema"})


def resolve(ref: str, root: Mapping[str, Any] | None = None) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """The schema node ``ref`` points at, and the document it sits in (where its own local ``$ref`` s
    resolve). A reference with no address (``#/$defs/Step``) resolves in ``root``, a bundled schema
    or any other schema document; one with an address, in the bundled schema of that ``$id``.

    Raises ``LookupError`` when nothing is there.

    >>> from pgm_explore.spec import data_type
    >>> prompt = data_type("PC Prompt").schema
    >>> node, document = resolve("#/$defs/ActionContext", prompt)
    >>> "MLocations" in node["properties"], document is prompt
    (True, True)
    >>> node, document = resolve(prompt["properties"]["PCPromptTime"]["$ref"], prompt)
    >>> node["title"], document is node
    ('Simple Time V1.5', True)
    >>> resolve("#/$defs/a~1b~0c", {"$defs": {"a/b~c": {"type": "integer"}}})[0]
    {'type': 'integer'}
    """
    found = _plain(ref, root)
    if found is not None:
        return found
    from referencing.exceptions import Unresolvable

    from pgm_explore.spec import schema_resources

    bundled = schema_resources()
    base = root.get("$id") if root is not None else None
    address, _, fragment = ref.partition("#")
    if root is None or (isinstance(base, str) and bundled.get(base) is root):
        resolver = registry().resolver(base_uri=base if isinstance(base, str) else "")
    else:
        # A document that is not (or no longer exactly) a bundled schema: its own local
        # references resolve in it, the others in the bundled schemas.
        resolver = registry().resolver_with_root(_resource(root))
    try:
        node = resolver.lookup(ref).contents
    except Unresolvable as error:
        raise LookupError(f"cannot resolve $ref {ref!r}: {error}") from error
    if not address:
        return node, root if root is not None else node
    # The registry holds each bundled schema without "$schema": hand out the bundled object.
    document = bundled.get(urljoin(base if isinstance(base, str) else "", address), node)
    return (document if fragment in ("", "/") else node), document


def _plain(ref: str, root: Mapping[str, Any] | None) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """:func:`resolve` of a plain reference without ``referencing``: a JSON Pointer in ``root``
    (``#/$defs/Step``), or a bundled schema's address from a bundled ``root``, with or without a
    pointer in it; None for anything else (an anchor, a percent-escape, a pointer to nothing or
    to the whole root, an address from another root), which ``referencing`` resolves or words the
    error of.

    Every clean message's typed reader is compiled through these references, and importing
    ``referencing`` took a process 40-80 ms (a worker's first partition of a check paid it):
    the node is the one ``referencing`` gives, the same object (tests/test_spec_tables.py holds
    the two equal over every reference of the bundled schemas)."""
    address, _, fragment = ref.partition("#")
    if root is None or (fragment and not fragment.startswith("/")) or "%" in fragment:
        return None
    if address:
        from pgm_explore.spec import schema_resources

        bundled = schema_resources()
        base = root.get("$id")
        if not isinstance(base, str) or bundled.get(base) is not root:
            return None  # (referencing would register another root under its $id)
        document = bundled.get(urljoin(base, address))
        if document is None:
            return None
        if fragment in ("", "/"):
            return document, document
    elif fragment in ("", "/"):
        return None  # (the whole root: referencing gives it without "$schema")
    else:
        document = root
    node: Any = document
    for part in fragment[1:].split("/"):
        if node is document and part == "$schema":
            return None  # (referencing holds a 2020-12 schema without its "$schema")
        part = part.replace("~1", "/").replace("~0", "~")
        if type(node) is dict and part in node:
            node = node[part]
        elif type(node) is list and part.isascii() and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return (node, document) if isinstance(node, Mapping) and node is not document else None
