"""A typed fast path for the verdict: msgspec types compiled from the data types' schemas.

:func:`clean_type` is the msgspec type of a "clean" message of a data type and Mode: one that
conforms to the schema *and* has nothing the advisory checks (:mod:`._advisory`) would warn
about, which is what :func:`~pgm_explore.validation._advisory.is_clean` asks jsonschema-rs.
msgspec checks it in one pass in C, far faster than jsonschema-rs walks Python objects.

The compiler is SOUND, not complete: every value its type accepts is one ``is_clean`` accepts
(a test holds it to that over every message of the repository and systematic mutations of
them), but it may refuse values ``is_clean`` accepts, and a refusal only means that the
caller asks jsonschema-rs as before. So a keyword is mapped only where msgspec checks exactly
what JSON Schema asks; a keyword it does not know raises :class:`Unmapped` when the type is
built, so that a change of the schemas is noticed by a test, not by a wrong verdict. Where a
schema allows alternatives that msgspec cannot tell apart (a ``oneOf`` of objects, an
``if``/``then`` on a property's value), the type keeps one alternative, or those that it can
tell apart exactly, and refuses the others.

The readers read a line with each type's *fast* twin first (:class:`_Compiler`): where a schema
gives a string a ``pattern`` (a Data Exchange Metadata's DataType), the twin takes only the data
type codes of the spec that match it, a table msgspec looks up, where the type has msgspec match
the pattern for every value; a line the twin refuses is read with the type itself, so a producer
that writes another DataType is read as before, only later.

What the types cannot see is what the reader made of the text: a number with a fraction
that the JSON reader reads next to an integer, a name written twice, a lone surrogate. So
:func:`is_clean_typed` judges the values the reader made (``msgspec.convert``), where these
were settled before, as they are for jsonschema-rs; and :func:`read_clean`, which reads the
text itself, takes only a text that is exactly what msgspec writes for the value it read
(compact, in the schema's order of properties, as programs write messages): such a text has
no name twice, no escape msgspec would not write, and no number written otherwise than as
the shortest text of its value, so the json module reads the very same value from it. A line
spaced as Python's json module writes it (``", "`` and ``": "``) is compared with that text as
``msgspec.json.format(..., indent=0)`` spaces it, which puts one space after each comma and colon
between tokens and none inside strings: such a text differs from the compact one by whitespace
between tokens alone, which no reader reads. The text is written into a buffer of the reading
thread's own, used again line after line (a new one of a message's size cost a fifth of the
write-back), and compared before that thread writes another.

The bulk paths take what :func:`read_clean_typed` read, ``(way, value)``: the message's data type
and Mode (``way.dt``, ``way.mode``) and the msgspec Struct itself, whose attributes are the
schema's properties (``msgspec.UNSET`` where one is left out). What reads a message's properties
reads them from the Struct, converting only what it needs (``msgspec.to_builtins``), and no
dict of the whole message is made: the consistency rules read a dict of the few properties they
read, converted only where a rule reads more of them than whether they are there and true
(:func:`~pgm_explore.validation.clean_fields`). An object whose properties may all be left out
may be empty (``{}``, false) in a clean message, and its Struct is true all the same.
"""

from __future__ import annotations

import keyword
import re
import threading
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal

import msgspec

from pgm_explore._signals import interrupts_deferred
from pgm_explore.spec import HEADERS, DataType, resolve
from pgm_explore.validation._advisory import _advisory
from pgm_explore.validation._schema import _ecma_dollars

__all__ = ["Unmapped", "Way", "clean_type", "is_clean_typed", "learn_order", "read_clean", "read_clean_typed"]

# Keywords that say nothing about which values are valid (2020-12: annotations), and those
# this compiler reads itself; any other keyword in a schema node raises Unmapped.
_ANNOTATIONS = frozenset({"description", "title", "$comment", "default", "$schema", "$id", "$defs", "examples"})
_ADVICE = frozenset({"minLength", "minItems", "minimum", "maximum", "items", "properties", "$comment"})
# A JSON integer beyond 64 bits is read exactly by the reader, but jsonschema-rs does not take
# it as a number: such values go the old way (msgspec's int has no bound of its own).
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
# Patterns whose Python reading is that of ECMA-262 once $ is made \Z: no class escape (\d, \w,
# \s and \b take Unicode in Python), no flag, no lookbehind or named group syntax.
_PLAIN_PATTERN = re.compile(r"(?:[^\\(]|\\[.\-^$*+?()\[\]{}|/\\]|\((?!\?))*")


class Unmapped(ValueError):
    """A schema holds a keyword (or a shape of one) that the compiler does not map exactly."""


Json = Mapping[str, Any]


def clean_type(dt: DataType, mode: str | None) -> Any:
    """The msgspec type of a clean message of ``dt`` in ``mode`` (None for a data type without
    Modes); raises :class:`Unmapped` when a schema says what it cannot map."""
    return _clean_type(dt, mode if dt.modes else None)


# (Ctrl-C held back while msgspec builds a type or its decoder: it drops an exception raised
# as it hashes a type's parts, so an interrupt then was lost: pgm_explore._signals)
@cache
@interrupts_deferred()
def _clean_type(dt: DataType, mode: str | None, fast: bool = False) -> Any:
    schema = dt.schema
    advice = _advisory(dict(schema), schema)
    return _Compiler(dt, fast).object_type(schema, schema, advice, "", mode)


@cache
@interrupts_deferred()
def _schema_decoder(dt: DataType, mode: str | None, fast: bool) -> Any:
    """The typed decoder of :func:`clean_type` (``fast``: of its fast type, see :class:`_Compiler`)."""
    return msgspec.json.Decoder(_clean_type(dt, mode, fast)).decode


_ORDERED: dict[Any, Any] = {}
"""Typed decoders with their fields in a taught order, by that order (:func:`_layout`)."""
_ORDERED_MAX = 64  # (a type takes milliseconds to build; the orders seen last are kept)


def _ordered_decoder(dt: DataType, mode: str | None, sample: Any, fast: bool = True) -> Any:
    """The typed decoder of :func:`clean_type` with its fields in the order of ``sample``'s names
    (``fast``: of its fast type, see :class:`_Compiler`). The same types: only the order of
    writing differs."""
    if sample is None:
        return _schema_decoder(dt, mode, fast)
    layout = (dt.name, mode, fast, _layout(sample))
    decode = _ORDERED.get(layout)
    if decode is None:
        schema = dt.schema
        advice = _advisory(dict(schema), schema)
        with interrupts_deferred():
            typed = _Compiler(dt, fast).object_type(schema, schema, advice, "", mode, sample)
            decode = msgspec.json.Decoder(typed).decode
        if len(_ORDERED) >= _ORDERED_MAX:
            del _ORDERED[next(iter(_ORDERED))]
        _ORDERED[layout] = decode
    return decode


def _sample(values: list[Any]) -> Any:
    """One value in which the names of each object come in an order that agrees with that of
    every one of ``values`` (the values at one place of a message: the items of an array, say),
    as far as they agree among themselves: an object's names, and of an array, one item."""
    objects = [value for value in values if isinstance(value, dict)]
    if objects:
        order: list[str] = []
        children: dict[str, list[Any]] = {}
        for value in objects:
            names = list(value)
            for index, name in enumerate(names):
                if name not in order:
                    # Before the first name that follows it here and is already placed.
                    after = next((other for other in names[index + 1 :] if other in order), None)
                    order.insert(order.index(after) if after is not None else len(order), name)
                children.setdefault(name, []).append(value[name])
        return {name: _sample(children[name]) for name in order}
    items = [item for value in values if isinstance(value, list) for item in value]
    return [_sample(items)] if items else None


def _layout(value: Any) -> Any:
    """The order of the names of ``value``'s objects (of an array, its first item's): what a
    Struct's order of fields must follow for msgspec to write ``value`` as it was written."""
    if isinstance(value, dict):
        return tuple((name, _layout(item)) for name, item in value.items())
    if isinstance(value, list) and value:
        return (_layout(value[0]),)
    return None


def learn_order(raw: bytes, document: Any) -> None:
    """Have :func:`read_clean` take lines written as ``raw`` is, when the reader read ``document``
    from it the usual way and it is clean: the names of a message may come in an order other
    than the schema's (``DataXMData`` first, say), and msgspec writes a Struct's fields in its
    own order. The next lines that begin as ``raw`` are then read with a type whose fields are
    in ``document``'s order (the same types, so the same verdicts; still only a text written
    exactly as msgspec writes it is taken).

    A way of beginning keeps up to :data:`_LAYOUTS` orders (layouts), each its own type, the one
    that read the last line first: a producer whose messages come in several orders (a name
    before another in some, after it in others) is read in each of them. An order taught is
    merged into a layout it agrees with, so that one type suits many messages that leave out
    different names; one that agrees with none is a layout of its own, in place of the layout
    used longest ago. The types of the orders seen last are kept (a type takes milliseconds to
    build)."""
    way = _beginning(raw)
    if way is None or way.lessons <= 0 or not isinstance(document, dict):
        return
    # (Each lesson walks the whole message: a producer whose orders never fit, items of one
    # array in different orders, say, would otherwise pay it on every such line.)
    way.lessons -= 1
    if not is_clean_typed(way.dt, way.mode, document):
        return
    # (A new tuple each time, never one changed in place: a reader in another thread of the
    # process sees the old layouts or the new ones.)
    layouts = way.layouts or ((None, way.decode or _schema_decoder(way.dt, way.mode, True)),)
    for index, (sample, _) in enumerate(layouts):  # (the schema's order, None, stays: some producers write it)
        if sample is None:
            continue
        merged = _sample([sample, document])
        if _suits(merged, document) and _suits(merged, sample):
            layouts = layouts[:index] + layouts[index + 1 :]
            break
    else:
        merged = _sample([document])
        if not _suits(merged, document):
            return  # (the items of one array in different orders: no one type writes them all)
        layouts = layouts[: _LAYOUTS - 1]  # (without the layout that read a line longest ago)
    first = (merged, _ordered_decoder(way.dt, way.mode, merged))
    way.layouts = (first, *layouts)
    way.sample, way.decode = first
    way.exact = None


_LAYOUTS = 4
"""Orders (layouts) one way of beginning keeps: what a producer writing in a few orders needs,
and a bound on the decodes a line that fits none of them costs."""
_MISSES = 64
"""Lines of one way of beginning that may fit none of its other layouts (each such line is
decoded once with each) before they are no longer tried, beyond as many as fitted one."""


def _suits(sample: Any, value: Any) -> bool:
    """True when the names of each of ``value``'s objects come in the order of ``sample``'s (a
    :func:`_sample`), so that a type whose fields follow ``sample`` writes ``value`` as it was
    written. (An open object's names are in no schema order: they may say False for nothing.)"""
    if isinstance(value, dict):
        if not isinstance(sample, dict):
            return False
        places = {name: place for place, name in enumerate(sample)}
        last = -1
        for name, item in value.items():
            place = places.get(name, -1)
            if place < last or not _suits(sample[name], item):
                return False
            last = place
        return True
    if isinstance(value, list):
        first = sample[0] if isinstance(sample, list) and sample else None
        return all(_suits(first, item) for item in value)
    return True


def _other_layout(way: Way, raw: bytes) -> tuple[Way, Any] | None:
    """``raw`` read with another of ``way``'s layouts than the one that read the last line (see
    :func:`learn_order`), which then comes first; or None. A line that fits none costs a decode
    of each: after :data:`_MISSES` of them more than fitted, the others are tried no more."""
    layouts = way.layouts
    if len(layouts) < 2:
        return None
    for index in range(1, len(layouts)):
        first = layouts[index]
        sample, decode = first
        try:
            value = decode(raw)
        except msgspec.ValidationError:
            try:
                value = _ordered_decoder(way.dt, way.mode, sample, fast=False)(raw)
            except _MSGSPEC_ERRORS:
                continue
        except _MSGSPEC_ERRORS:
            continue
        written = _encode(value)
        if way.spaced:
            written = _format(written, indent=0)
        if raw.startswith(written) and (len(raw) == len(written) or raw[len(written) :].isspace()):
            way.layouts = (first, *layouts[:index], *layouts[index + 1 :])
            way.sample, way.decode = first
            way.exact = None
            way.misses = max(way.misses - 1, 0)
            return way, value
    way.misses += 1
    if way.misses > _MISSES:
        way.layouts = layouts[:1]  # (the first goes on alone, for the lines it fits)
    return None


def is_clean_typed(dt: DataType, mode: Any, document: Any) -> bool:
    """True when ``document`` (a value the JSON reader made) is of :func:`clean_type`: then it
    is clean (``_advisory.is_clean`` holds). False says nothing: ask jsonschema-rs."""
    if dt.modes and mode not in ("RQ", "RS"):
        return False
    try:
        _convert(document, _clean_type(dt, mode if dt.modes else None))
    except msgspec.ValidationError:
        return False
    return True


_encode = msgspec.json.Encoder().encode
_encode_into = msgspec.json.Encoder().encode_into
_format = msgspec.json.format
_buffers = threading.local()
"""``written``: each thread's buffer for the text :func:`read_clean_typed` writes back (it is
compared at once, before the thread writes another)."""
_MSGSPEC_ERRORS = (ValueError, msgspec.DecodeError, RecursionError)


_LESSONS = 32
"""Lines of one way of beginning that may teach :func:`learn_order` an order: enough for a
producer's orders to be merged into one, and a bound on what lines that never fit cost."""


class Way:
    """One way a message may begin (see :func:`_decoders`), and what reading such lines needs:
    ``dt`` and ``mode`` say the message's data type and Mode (None for a data type without Modes)."""

    __slots__ = ("decode", "dt", "exact", "layouts", "lessons", "misses", "mode", "sample", "spaced")

    def __init__(self, dt: DataType, mode: str | None, spaced: bool) -> None:
        self.dt, self.mode, self.spaced = dt, mode, spaced
        self.decode: Any = None  # (built when a line needs it: a type takes milliseconds to build)
        self.exact: Any = None  # (the exact type's decoder of decode's layout, when a line needs it)
        self.sample: Any = None  # the order learn_order was taught, as a message
        self.lessons = _LESSONS
        # (sample, decode) of each order taught (None: the schema's), the one that read last
        # first: decode and sample are those of the first (see learn_order).
        self.layouts: tuple[tuple[Any, Any], ...] = ()
        self.misses = 0  # lines that fitted no other layout, less those that fitted one


# What learn_order teaches (each Way's layouts) and its budgets (lessons, misses) are the process's,
# kept from file to file and never reset: a notebook's kernel reading corpus after corpus reads each
# with what the earlier ones taught. That is sound, not a leak to fix: a line is taken only when the
# Struct read writes back as its very text, and every layout has the schema's types, so what a line
# reads as (document, notes, report, facts) never depends on what came before; only which lines are
# taken (the speed) does. tests/test_typed.py::test_orders_learnt_from_one_file_change_nothing_another_file_reads
# holds that. The widgets never use the typed reader, and the tests that count the lines it takes
# start from the schema's orders (an autouse fixture clears this cache).
@cache
def _decoders() -> dict[bytes, Way]:
    """For each way a message may begin: its data type, Mode, whether that way is spaced, the
    typed decoder (None until a line needs it: a type takes milliseconds to build), of the
    schema's order of names or of the one :func:`learn_order` taught, and what it was taught.

    The first names of a message in the schema's order say its data type and Mode:
    ``{"Header":"PGM-KDA-V1.0","Mode":"RQ",`` as msgspec, JavaScript and most programs write
    it, or ``{"Header": "PGM-KDA-V1.0", "Mode": "RQ", `` as Python's json module does."""
    found = {}
    for header, dt in HEADERS.items():
        for spaced, (colon, comma) in ((False, (":", ",")), (True, (": ", ", "))):
            for mode in dt.modes or (None,):
                begins = f'{{"Header"{colon}"{header}"{comma}' + (f'"Mode"{colon}"{mode}"{comma}' if mode else "")
                found[begins.encode()] = Way(dt, mode, spaced)
    return found


def read_clean(raw: bytes) -> dict[str, Any] | None:
    """The message of ``raw`` (one line of JSON Lines) when it is clean and written as msgspec
    writes it, compactly or spaced as Python's json module writes it, its names in the schema's
    order (or the order :func:`learn_order` was taught for messages that begin as it does):
    then the dict is the very dict the json module reads (its names in the same order).
    Otherwise None: read and judge the line the usual way."""
    got = read_clean_typed(raw)
    return None if got is None else msgspec.to_builtins(got[1])


def read_clean_typed(raw: bytes) -> tuple[Way, Any] | None:
    """:func:`read_clean` without the dict: ``(way, value)``, where ``way.dt`` and ``way.mode``
    are the message's data type and Mode (None for a data type without Modes) and ``value`` is
    the msgspec Struct the typed decoder read, for the bulk paths, which read a few of its
    properties and need no dict of the whole message.

    The Struct: each object of the schema is a Struct (closed: ``forbid_unknown_fields``) whose
    attributes are named as the schema's properties (a name that is not a Python identifier is
    renamed: ``msgspec.structs.fields`` gives each field's ``encode_name``), a property left out
    is ``msgspec.UNSET``; an object the schema leaves open, or a ``oneOf`` of one-name objects,
    is a dict; arrays are lists; strings, numbers and booleans are Python's.
    ``msgspec.to_builtins(value)`` is the dict :func:`read_clean` gives (a value of a property,
    the value of that property in the dict). The same Struct type (``type(value)``) always comes
    with the same way; the value is conforming and clean, so a reader of it needs no check of
    types or of presence beyond ``UNSET``."""
    # (_beginning's lookups, written out: this runs once for every line of a big file.)
    # (A line is spaced or not from its 11th byte on: '{"Header": ', so two lookups at most.)
    ways = _decoders()
    if raw[10:11] == b" ":
        way = ways.get(raw[:_WITH_MODE_SPACED]) or ways.get(raw[:_WITHOUT_MODE_SPACED])
    else:
        way = ways.get(raw[:_WITH_MODE]) or ways.get(raw[:_WITHOUT_MODE])
    if way is None:
        return None
    decode = way.decode
    if decode is None:
        decode = way.decode = _schema_decoder(way.dt, way.mode, True)
    try:
        value = decode(raw)
    except msgspec.ValidationError:
        # (A value the fast type refuses, the exact one may take: another DataType, say. Text that
        # is not JSON, or too deep, neither takes.)
        exact = way.exact
        if exact is None:
            exact = way.exact = _ordered_decoder(way.dt, way.mode, way.sample, fast=False)
        try:
            value = exact(raw)
        except _MSGSPEC_ERRORS:
            return _other_layout(way, raw) if way.layouts else None
    except _MSGSPEC_ERRORS:
        return _other_layout(way, raw) if way.layouts else None
    # (Written into this thread's buffer, used again line after line: a message's text is larger
    # than the small objects Python keeps at hand, and a new one cost 20% of the write-back.)
    try:
        written = _buffers.written
    except AttributeError:
        written = _buffers.written = bytearray()
    _encode_into(value, written)
    if way.spaced:
        written = _format(written, indent=0)
    if raw.startswith(written):
        rest = len(raw) - len(written)
        if (rest == 1 and raw[-1] == 10) or rest == 0 or raw[-rest:].isspace():  # (a line break, mostly)
            return way, value
    return _other_layout(way, raw) if way.layouts else None


def _beginning(raw: bytes) -> Way | None:
    """What :func:`_decoders` knows of the way ``raw`` begins, or None."""
    decoders = _decoders()
    # (Each way of beginning has one length per data type, with a Mode or without.)
    found = decoders.get(raw[:_WITH_MODE]) or decoders.get(raw[:_WITH_MODE_SPACED])
    if found is None:
        found = decoders.get(raw[:_WITHOUT_MODE]) or decoders.get(raw[:_WITHOUT_MODE_SPACED])
    return found


# The lengths of the beginnings _decoders() knows (every Header has 12 characters, every Mode 2).
_WITHOUT_MODE = len('{"Header":"PGM-PCP-V1.0",')
_WITHOUT_MODE_SPACED = len('{"Header": "PGM-PCP-V1.0", ')
_WITH_MODE = len('{"Header":"PGM-KDA-V1.0","Mode":"RQ",')
_WITH_MODE_SPACED = len('{"Header": "PGM-KDA-V1.0", "Mode": "RQ", ')


def _convert(document: Any, target: Any) -> Any:
    # strict: no number written as a string is taken for one, nothing is coerced.
    return msgspec.convert(document, target, strict=True)


class _Compiler:
    """Builds the types of one data type. ``fast``: a string whose schema gives a ``pattern`` is
    one of the data type codes of the spec that match it (a ``Literal``, which msgspec looks up
    in a table), where the exact type has msgspec match the pattern (``re.search``, and a match
    object, for each value: some 3,900 instructions a message for a Data Exchange Metadata's
    DataType, 8% of the typed read). A fast type accepts only values its exact type accepts; the
    readers read a line with it, and with the exact type when it refuses (a producer that writes
    another DataType)."""

    def __init__(self, dt: DataType, fast: bool = False) -> None:
        self._dt = dt
        self._fast = fast
        self._names: dict[str, int] = {}

    def _struct_name(self, hint: str) -> str:
        base = re.sub(r"\W", "", hint) or "Object"
        count = self._names.get(base, 0)
        self._names[base] = count + 1
        return f"{self._dt.acronym.replace('-', '')}{base}{count or ''}"

    # --- any node --------------------------------------------------------------------------

    def node_type(self, node: Any, root: Json, advice: Json, hint: str, sample: Any = None) -> Any:
        if node is True or node == {}:
            if advice:
                raise Unmapped(f"{hint}: advice on a schema that takes anything")
            return Any
        if not isinstance(node, Mapping):
            raise Unmapped(f"{hint}: schema {node!r}")
        if unknown := set(advice) - _ADVICE:
            raise Unmapped(f"{hint}: advice {sorted(unknown)}")
        if "$ref" in node:
            if set(node) - _ANNOTATIONS - {"$ref"}:
                raise Unmapped(f"{hint}: $ref beside other keywords")
            target, target_root = resolve(node["$ref"], root)
            # _advisory follows local references only: an external one gets no advice.
            if not node["$ref"].startswith("#/") and advice:
                raise Unmapped(f"{hint}: advice on an external $ref")
            return self.node_type(target, target_root, advice, hint, sample)
        if "oneOf" in node:
            return self._one_of(node, root, advice, hint, sample)
        if "const" in node or "enum" in node:
            return self._literal(node, advice, hint)
        types = node.get("type")
        if isinstance(types, list):
            if set(node) - _ANNOTATIONS - {"type"} or len(set(types)) != len(types):
                raise Unmapped(f"{hint}: a list of types with other keywords")
            members = [self.node_type({"type": t}, root, _advice_for(t, advice, hint), hint, sample) for t in types]
            union = members[0]
            for member in members[1:]:
                union = union | member
            return union
        if types == "string":
            return self._string(node, advice, hint)
        if types in ("integer", "number"):
            return self._number(node, advice, hint, types)
        if types == "boolean":
            _only(node, {"type"}, hint)
            if advice:
                raise Unmapped(f"{hint}: advice on a boolean")
            return bool
        if types == "array":
            return self._array(node, root, advice, hint, sample)
        if types == "object":
            return self.object_type(node, root, advice, hint, None, sample)
        raise Unmapped(f"{hint}: type {types!r}")

    def _literal(self, node: Json, advice: Json, hint: str) -> Any:
        _only(node, {"type", "const", "enum"}, hint)
        values = [node["const"]] if "const" in node else list(node["enum"])
        if "const" in node and "enum" in node:
            raise Unmapped(f"{hint}: const beside enum")
        # A JSON string equals only a str; other values (1 == 1.0 == true in Python) are not mapped.
        if node.get("type") != "string" or not values or not all(type(v) is str for v in values):
            raise Unmapped(f"{hint}: an enum that is not of strings")
        if set(advice) - {"$comment"}:
            raise Unmapped(f"{hint}: advice on an enum")
        return Literal[tuple(values)]

    def _string(self, node: Json, advice: Json, hint: str) -> Any:
        _only(node, {"type", "minLength", "maxLength", "pattern"}, hint)
        _advised(advice, {"minLength"}, hint)
        meta = _lengths(node, advice, "minLength", "maxLength")
        if "pattern" in node:
            pattern = node["pattern"]
            if not _PLAIN_PATTERN.fullmatch(pattern):
                raise Unmapped(f"{hint}: pattern {pattern!r} may read differently in Python")
            pattern = _ecma_dollars(pattern)  # (msgspec uses re.search, as JSON Schema does)
            if self._fast and (codes := _codes(pattern, meta.get("min_length", 0), meta.get("max_length"))):
                return Literal[codes]
            meta["pattern"] = pattern
        return Annotated[str, msgspec.Meta(**meta)] if meta else str

    def _number(self, node: Json, advice: Json, hint: str, kind: str) -> Any:
        _only(node, {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}, hint)
        _advised(advice, {"minimum", "maximum"}, hint)
        # The advice asks for a double's range: msgspec reads no float beyond it, and the
        # ints here are bounded to 64 bits, far inside it.
        if advice and (advice.get("minimum"), advice.get("maximum")) != (
            -1.7976931348623157e308,
            1.7976931348623157e308,
        ):
            raise Unmapped(f"{hint}: advice other than a double's range")
        bounds = {
            meta: node[word]
            for word, meta in (
                ("minimum", "ge"),
                ("maximum", "le"),
                ("exclusiveMinimum", "gt"),
                ("exclusiveMaximum", "lt"),
            )
            if word in node
        }
        if not all(type(v) is int for v in bounds.values()):
            # (a float bound against an int value compares exactly in Python, but keep to the plain case)
            raise Unmapped(f"{hint}: a bound that is not an integer")
        whole = dict(bounds)
        whole["ge"] = max(whole.get("ge", _INT_MIN), _INT_MIN)
        whole["le"] = min(whole.get("le", _INT_MAX), _INT_MAX)
        integer = Annotated[int, msgspec.Meta(**whole)]
        if kind == "integer":
            return integer
        # A JSON number is an int when written without a fraction or an exponent, else a float;
        # both are numbers to JSON Schema. (A float is never NaN or infinite: JSON has none.)
        return integer | (Annotated[float, msgspec.Meta(**bounds)] if bounds else float)

    def _array(self, node: Json, root: Json, advice: Json, hint: str, sample: Any = None) -> Any:
        _only(node, {"type", "items", "minItems", "maxItems"}, hint)
        _advised(advice, {"minItems", "items"}, hint)
        first = sample[0] if isinstance(sample, list) and sample else None
        items = self.node_type(node.get("items", True), root, advice.get("items", {}), f"{hint}Item", first)
        meta = _lengths(node, advice, "minItems", "maxItems")
        return Annotated[list[items], msgspec.Meta(**meta)] if meta else list[items]  # type: ignore[valid-type]

    def _one_of(self, node: Json, root: Json, advice: Json, hint: str, sample: Any = None) -> Any:
        """A ``oneOf`` of closed objects. When each has one required property of its own
        (``{"AIMID": ...}`` or ``{"ImplementerAIMID": ...}``), an object of exactly one of those
        names is valid against exactly that alternative: msgspec tells them apart as a dict of
        one entry whose key is one of the names, for the names whose values are plain strings
        (the others are refused, left to jsonschema-rs). Otherwise the first alternative is
        kept, when it requires a property that no other alternative allows (so that a value
        valid against it is valid against it alone), and the others are refused."""
        _only(node, {"oneOf"}, hint)
        if advice:
            raise Unmapped(f"{hint}: advice on a oneOf")
        alternatives: list[tuple[Json, Json]] = []
        for alternative in node["oneOf"]:
            where = root
            while isinstance(alternative, Mapping) and "$ref" in alternative:
                alternative, where = resolve(alternative["$ref"], where)
            _only(alternative, {"type", "required", "additionalProperties", "properties"}, hint)
            if alternative.get("type") != "object" or alternative.get("additionalProperties") is not False:
                raise Unmapped(f"{hint}: a oneOf alternative that is not a closed object")
            alternatives.append((alternative, where))
        names = [list(a.get("properties", {})) for a, _ in alternatives]
        if all(len(n) == 1 and a.get("required") == n for n, (a, _) in zip(names, alternatives, strict=True)):
            if len({n[0] for n in names}) != len(names):
                raise Unmapped(f"{hint}: two oneOf alternatives of one name")
            plain = [
                n[0]
                for n, (a, where) in zip(names, alternatives, strict=True)
                if self.node_type(a["properties"][n[0]], where, {}, f"{hint}{n[0]}") is str
            ]
            if not plain:
                raise Unmapped(f"{hint}: no oneOf alternative of a plain string")
            keys: Any = Literal[tuple(plain)]  # (a type made at run time: mypy sees a value)
            return Annotated[dict[keys, str], msgspec.Meta(min_length=1, max_length=1)]
        (first, where), others = alternatives[0], alternatives[1:]
        own = set(first.get("required", ()))
        if not all(own - set(other.get("properties", {})) for other, _ in others):
            raise Unmapped(f"{hint}: a oneOf whose first alternative is not told apart by a property")
        return self.object_type(first, where, {}, hint, None, sample)

    # --- objects -----------------------------------------------------------------------------

    def object_type(self, node: Json, root: Json, advice: Json, hint: str, mode: str | None, sample: Any = None) -> Any:
        """A closed object as a Struct whose fields are in the order of the names of ``sample`` (a
        message of the type, which says in what order its producer writes them), the others after
        them in the schema's order; or an open one as a dict."""
        _only(node, {"type", "additionalProperties", "required", "properties", "allOf"}, hint)
        _advised(advice, {"properties"}, hint)
        if node.get("type") != "object":
            raise Unmapped(f"{hint}: an object schema without type object")
        properties: Mapping[str, Any] = node.get("properties", {})
        closed = node.get("additionalProperties", True)
        if closed is not False:
            if closed is not True or properties or "required" in node or "allOf" in node or advice:
                raise Unmapped(f"{hint}: an open object with constraints")
            return dict[str, Any]
        required = set(node.get("required", ()))
        forbidden: set[str] = set()
        fixed: dict[str, tuple[str, ...]] = {}  # property -> the values a branch choice allows
        if "allOf" in node:
            required, forbidden, fixed = _branches(node["allOf"], required, properties, mode, hint)
        if unknown := required - set(properties):
            # With additionalProperties false, a required name that is not a property cannot be there.
            raise Unmapped(f"{hint}: required {sorted(unknown)} not among the properties")
        advised = advice.get("properties", {})
        fields: list[tuple[str, Any, Any]] = []
        rename: dict[str, str] = {}
        seen = list(sample) if isinstance(sample, dict) else []
        order = sorted(properties, key=lambda name: seen.index(name) if name in seen else len(seen))
        for name in order:
            sub = properties[name]
            if name in forbidden or sub is False:
                continue  # forbid_unknown_fields refuses it
            kind = self.node_type(sub, root, advised.get(name, {}), f"{hint}{name}", sample.get(name) if seen else None)
            if name in fixed:
                kind = _narrowed(kind, fixed[name], hint)
            attribute = name if name.isidentifier() and not keyword.iskeyword(name) else f"field{len(rename)}_"
            if attribute != name:
                rename[attribute] = name
            if name in required:
                fields.append((attribute, kind, msgspec.NODEFAULT))
            else:
                fields.append((attribute, kind | msgspec.UnsetType, msgspec.UNSET))
        return msgspec.defstruct(
            self._struct_name(hint or (mode or "Message")),
            [(a, k) if d is msgspec.NODEFAULT else (a, k, d) for a, k, d in fields],
            kw_only=True,
            forbid_unknown_fields=True,
            omit_defaults=True,
            rename=rename or None,
            # Read from JSON, a message holds no reference cycle: the collector need not track
            # its Structs (a read costs 1.6% fewer instructions).
            gc=False,
        )


def _branches(
    rules: Any, required: set[str], properties: Json, mode: str | None, hint: str
) -> tuple[set[str], set[str], dict[str, tuple[str, ...]]]:
    """The ``allOf`` of ``if``/``then`` rules on one property's value (the Mode of a message,
    the AccuracyMode of a time segment), for one choice: that property's value ``mode`` at
    the top of a message, or, elsewhere, the choices whose rules come to the same as those of
    its default value (or of leaving it out). Returns the required and forbidden properties under that choice,
    and the values the property is narrowed to."""
    if not isinstance(rules, list):
        raise Unmapped(f"{hint}: allOf {rules!r}")
    parsed: list[tuple[str, str, bool, set[str], set[str]]] = []
    for rule in rules:
        if not isinstance(rule, Mapping) or set(rule) != {"if", "then"}:
            raise Unmapped(f"{hint}: an allOf item other than if/then")
        condition, then = rule["if"], rule["then"]
        _only(condition, {"required", "properties"}, hint)
        _only(then, {"required", "properties"}, hint)
        tested = condition.get("properties", {})
        if len(tested) != 1:
            raise Unmapped(f"{hint}: an if on other than one property")
        ((name, test),) = tested.items()
        if set(test) != {"const"} or type(test["const"]) is not str:
            raise Unmapped(f"{hint}: an if other than a string const")
        needs_presence = condition.get("required", []) == [name]
        if "required" in condition and not needs_presence:
            raise Unmapped(f"{hint}: an if that requires other properties")
        banned = set()
        for key, sub in then.get("properties", {}).items():
            if sub is not False:
                raise Unmapped(f"{hint}: a then that constrains {key} other than forbidding it")
            banned.add(key)
        parsed.append((name, test["const"], needs_presence, set(then.get("required", ())), banned))
    names = {p[0] for p in parsed}
    if len(names) != 1:
        raise Unmapped(f"{hint}: if/then rules on several properties")
    (name,) = names

    def outcome(value: str | None) -> tuple[frozenset[str], frozenset[str]]:
        # value None: the property is left out, so "properties" holds vacuously and "required" fails.
        wanted, banned = set(), set()
        for _, const, needs_presence, then_required, then_banned in parsed:
            if (value is None and not needs_presence) or value == const:
                wanted |= then_required
                banned |= then_banned
        return frozenset(wanted), frozenset(banned)

    if mode is not None:
        if name != "Mode":
            raise Unmapped(f"{hint}: a Mode asked of rules on {name}")
        then_required, then_banned = outcome(mode)
        return required | then_required, set(then_banned), {name: (mode,)}
    if name in required:
        raise Unmapped(f"{hint}: rules on a required {name} without a choice of its value")
    # One struct takes the choices (a value, or the property left out) whose rules come to the
    # same: those of the property's default value if it has one (what most producers write),
    # else those of leaving it out.
    default = properties.get(name, {}).get("default") if isinstance(properties.get(name), Mapping) else None
    chosen = outcome(default if default in {p[1] for p in parsed} else None)
    same = tuple(const for _, const, *_ in parsed if outcome(const) == chosen)
    wanted, banned = set(chosen[0]), set(chosen[1])  # (no longer those of outcome())
    if outcome(None) != chosen:
        wanted.add(name)  # (the choice holds only when the property is there)
    if not same:
        banned.add(name)  # (the choice holds only when it is left out)
    return required | wanted, banned, {name: same} if same else {}


def _narrowed(kind: Any, values: tuple[str, ...], hint: str) -> Any:
    """A property's type narrowed to ``values`` (the values a branch choice allows)."""
    allowed = getattr(kind, "__args__", ()) if getattr(kind, "__origin__", None) is Literal else ()
    if not set(values) <= set(allowed):
        raise Unmapped(f"{hint}: a branch on a value its enum does not hold")
    return Literal[values]


def _codes(pattern: str, least: int, most: int | None) -> tuple[str, ...]:
    """The data type codes of the spec (its messages' Headers) that a string type with ``pattern``
    and those bounds of its length accepts, by the very test msgspec makes (``re.search``)."""
    search = re.compile(pattern).search
    return tuple(
        code for code in HEADERS if search(code) and least <= len(code) and (most is None or len(code) <= most)
    )


def _lengths(node: Json, advice: Json, least: str, most: str) -> dict[str, Any]:
    """msgspec's length bounds of a string or an array: the schema's and the advice's least, the schema's most."""
    meta: dict[str, Any] = {}
    if bound := max(node.get(least, 0), advice.get(least, 0)):
        meta["min_length"] = bound
    if most in node:
        meta["max_length"] = node[most]
    return meta


def _only(node: Any, keywords: set[str], hint: str) -> None:
    if not isinstance(node, Mapping):
        raise Unmapped(f"{hint}: schema {node!r}")
    if unknown := set(node) - keywords - _ANNOTATIONS:
        raise Unmapped(f"{hint}: keywords {sorted(unknown)}")


def _advised(advice: Json, keywords: set[str], hint: str) -> None:
    if unknown := set(advice) - keywords - {"$comment"}:
        raise Unmapped(f"{hint}: advice {sorted(unknown)}")


def _advice_for(kind: str, advice: Json, hint: str) -> Json:
    """The part of a node's advice that applies to one of its types (``["object", "string"]``)."""
    words = {"string": {"minLength"}, "integer": {"minimum", "maximum"}, "number": {"minimum", "maximum"}}
    words |= {"array": {"minItems", "items"}, "object": {"properties"}, "boolean": set()}
    return {k: v for k, v in advice.items() if k in words.get(kind, set()) | {"$comment"}}


def all_clean_types() -> dict[tuple[str, str | None], Any]:
    """The type of every data type and Mode, built now (a test builds them all)."""
    return {(dt.name, mode): clean_type(dt, mode) for dt in HEADERS.values() for mode in (dt.modes or (None,))}
