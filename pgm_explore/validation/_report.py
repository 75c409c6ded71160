"""The report on one message and the function that makes it."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from pgm_explore import _display
from pgm_explore.spec import HEADERS, DataType
from pgm_explore.validation import _advisory, _explain, _schema, _typed
from pgm_explore.validation._consistency import Glance, consistency_findings, struct_findings, struct_glance
from pgm_explore.validation._limits import MAX_FINDINGS, Tally
from pgm_explore.validation._parse import InputProblem, parse_json
from pgm_explore.validation._values import json_value_problems
from pgm_explore.validation.findings import RULES, Finding, clip, shown, spec_reference, written

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FINDING_COLUMNS", "Report", "ReportFields", "clean_fields", "report_fields", "validate"]

FINDING_COLUMNS = ["source", "type", "mode", "severity", "rule", "path", "message", "spec"]
"""Column order of :meth:`Report.to_frame` (one row per finding)."""


@dataclass(frozen=True, slots=True)
class Report:
    """What :func:`validate` found out about one message.

    ``conforms`` is the spec's own verdict (DECISIONS D13): the message validates against
    the schema of its type. Consistency findings (D14) sit beside it without changing it.
    """

    type: str | None
    mode: str | None
    conforms: bool
    findings: tuple[Finding, ...] = ()
    source: str | None = None

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def best(self) -> Finding | None:
        """The finding to show first, ranked as python-jsonschema's ``best_match`` does."""
        if not self.findings:
            return None
        return min(
            self.findings,
            key=lambda f: (
                not f.conformance,  # what breaks the verdict comes first,
                f.severity != "error",  # then errors before warnings,
                len(f.path),  # then the shallower, more general problem.
            ),
        )

    def at(self, path: Iterable[str | int]) -> tuple[Finding, ...]:
        """Findings at ``path`` or inside it, like a python-jsonschema ``ErrorTree`` lookup."""
        prefix = tuple(path)
        return tuple(f for f in self.findings if f.path[: len(prefix)] == prefix)

    def to_dict(self) -> dict[str, Any]:
        """One line of ``pgm-explore validate --format json``."""
        return {
            "source": self.source,
            "type": self.type,
            "mode": self.mode,
            "conforms": self.conforms,
            "findings": [f.to_dict() for f in self.findings],
        }

    def rows(self) -> list[list[Any]]:
        return [
            [self.source, self.type, self.mode, f.severity, f.rule, f.json_path, f.message, f.spec]
            for f in self.findings
        ]

    def to_frame(self) -> pd.DataFrame:
        """The findings as a DataFrame, columns :data:`FINDING_COLUMNS`."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=FINDING_COLUMNS)

    @property
    def verdict(self) -> str:
        return "conforms" if self.conforms else "does not conform"

    def __str__(self) -> str:
        kind = " ".join(p for p in (self.type or "unknown type", self.mode) if p)
        head = f"{self.source + ': ' if self.source else ''}{kind}: {self.verdict}"
        lines = [head]
        for f in self.findings:
            where = f" (line {f.line}, column {f.column})" if f.line is not None else ""
            lines.append(f"  {f.severity} [{f.rule}] {f.json_path}{where}: {f.message}")
            lines.append(f"      spec: {f.spec}")
        return "\n".join(lines)

    def _html(self) -> str:
        kind = " ".join(p for p in (self.type or "unknown type", self.mode) if p)
        state = "ok" if self.conforms else "bad"
        head = f"<p><b>{_display.esc(self.source or '')}</b> {_display.esc(kind)} {_display.badge(self.verdict, state)}"
        if self.warnings:
            head += " " + _display.badge(_display.count(len(self.warnings), "warning"), "warn")
        head += "</p>"
        if not self.findings:
            return head
        rows = [[f.severity, f.rule, f.json_path, f.message, f.spec] for f in self.findings]
        return head + _display.table(["severity", "rule", "path", "message", "spec"], rows)

    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None, **kwargs: Any
    ) -> dict[str, str]:
        return _display.mimebundle(
            self,
            self.__str__,
            self._html,
            set(include) if include is not None else None,
            set(exclude) if exclude is not None else None,
        )


_TEXT = (str, bytes, bytearray)
_MODES = ("RQ", "RS")


def _detect(document: Mapping[str, Any]) -> tuple[DataType | None, Finding | None]:
    if "Header" not in document:
        return None, Finding.of(
            "header-missing",
            ("Header",),
            "The message has no Header, so its data type cannot be told; "
            f"a PGM-AUA V1.0 message starts with one of {', '.join(HEADERS)}.",
        )
    header = document["Header"]
    if not isinstance(header, str):
        return None, Finding.of(
            "header-unknown",
            ("Header",),
            f"Header must be a string such as PGM-KDA-V1.0, not {shown(header)}; the Headers are {', '.join(HEADERS)}.",
        )
    dt = HEADERS.get(header)
    if dt is None:
        # (A very long "Header" is no typo of one, and difflib is quadratic in its length.)
        close = _explain.closest(header, tuple(HEADERS)) if len(header) <= _explain._SUGGESTED else None
        hint = f' Did you mean "{close}" ({HEADERS[close].name})?' if close else ""
        return None, Finding.of(
            "header-unknown",
            ("Header",),
            f'Header "{clip(header)}" is not the Header of a PGM-AUA V1.0 data type; the Headers are '
            f"{', '.join(HEADERS)}.{hint}",
        )
    return dt, None


ReportFields = tuple[str | None, str | None, bool, tuple[Finding, ...]]
"""A :class:`Report`'s fields but its source: (type, mode, conforms, findings), what the bulk
paths make of a message (a tuple travels between processes and is made faster than a Report)."""


def validate(document: Any, *, source: str | None = None) -> Report:
    """Validate one PGM-AUA message and report the verdict and every finding.

    ``document`` is a parsed message (a ``dict``) or its JSON text (``str`` or
    ``bytes``). The type comes from ``Header``; a missing or unknown Header is itself a
    finding. Never raises for bad input: everything wrong is a finding. A dict built in
    Python may hold what JSON cannot (a set, NaN, a key that is not a string, a lone
    surrogate): those are findings too (``not-json``, ``encoding``), and nothing else is
    checked, as for text that is not JSON.

    >>> validate({"Header": "PGM-KDA-V1.0", "Mode": "RQ"}).conforms
    False
    >>> [(f.rule, f.json_path) for f in validate({"Header": "PGM-KDA-V1.0", "Tags": {"a"}}).findings]
    [('not-json', '$.Tags')]
    """
    return Report(*report_fields(document), source)


def report_fields(document: Any, *, built: bool = True, clean: bool = False, refused: bool = False) -> ReportFields:
    """What :func:`validate` reports but the source, as a plain tuple (type, mode, conforms,
    findings): what a bulk reader makes of each message and sends between processes.

    ``built``: the document was built in Python, as :func:`validate` assumes, so it is
    first looked through for values JSON cannot hold, and an int longer than Python writes
    is judged by python-jsonschema (the compiled engine misjudges those). ``built=False``
    is for a value the JSON reader made, which holds JSON values only (and no such int:
    the readers refuse them); it skips both looks.

    ``clean``: ``document`` is what :func:`read_clean` made of a line, so it is known to
    conform with nothing empty in it; only the consistency rules are asked about it.

    ``refused``: ``document`` is what the JSON reader made of a line that the typed reader
    refused, which mostly does not conform: the schema engines are asked at once, not the typed
    and combined verdicts first (which say only whether a message is clean, and say no to
    such a message). The same fields either way.

    >>> report_fields({"Header": "PGM-KPA-V1.0", "Mode": "RS"})[:3]
    ('BKN-PAL', 'RS', False)
    """
    if clean:
        dt = HEADERS[document["Header"]]
        mode = document.get("Mode") if dt.modes else None
        return dt.name, mode, True, _capped(consistency_findings(dt, document, mode))
    exact = built and type(document) is dict and _has_long_integer(document)
    return _report_fields(document, python_values=built, exact=exact, refused=refused)


def clean_fields(way: _typed.Way, value: Any) -> ReportFields:
    """:func:`report_fields` of a message that :func:`~pgm_explore.validation.read_clean_typed`
    read as ``(way, value)``: it conforms with nothing empty in it, so only the consistency
    rules are asked about it, and they read only the properties they look at from the Struct.
    The same fields as :func:`report_fields` gives for the dict :func:`read_clean` makes of the
    line (``tests/test_typed.py`` holds the two equal).

    Most clean messages have nothing to be found: when the glance of the rules says so, the fields
    are those of its type with no finding, made once (as they are for a type with no rule).
    """
    kind = type(value)
    known = _CLEAN.get(kind)
    if known is None:
        known = _CLEAN[kind] = (struct_glance(kind, way.dt, way.mode), (way.dt.name, way.mode, True, ()))
    glance, nothing = known
    if glance is None or glance(way.dt, value):
        return nothing
    found = struct_findings(way.dt, value, way.mode)
    return (*nothing[:3], _capped(found)) if found else nothing


_CLEAN: dict[type, tuple[Glance | None, ReportFields]] = {}
"""For each Struct type of a clean message (its data type and Mode are the type's): the glance of
its rules (see :func:`~pgm_explore.validation._consistency.struct_glance`; None: it has none), and
its fields when nothing is found."""


def _report_fields(
    document: Any, *, python_values: bool = False, exact: bool = False, refused: bool = False
) -> ReportFields:
    """What :func:`validate` reports, as a tuple: the bulk paths need no Report object.

    ``python_values``: the document was built in Python rather than read by the JSON
    reader, so it is first looked through for values that JSON cannot hold. ``exact`` has
    python-jsonschema judge (see ``_schema.is_valid``). ``refused``: no clean verdict first
    (see :func:`report_fields`)."""
    if type(document) is not dict:  # (a parsed message always is: this is the exception)
        if isinstance(document, _TEXT):
            try:
                parsed, notes = parse_json(document)
            except InputProblem as unreadable:
                return None, None, False, unreadable.findings
            if isinstance(parsed, dict):
                # (What the text says that its value cannot: names written twice.)
                type_name, mode, conforms, findings = _report_fields(parsed)
                return type_name, mode, conforms, findings + notes
            document = parsed
        if not isinstance(document, dict):
            finding = Finding.of(
                "not-object",
                (),
                f"A message must be a JSON object, not {shown(document)}.",
            )
            return None, None, False, (finding,)
    if python_values and (problems := json_value_problems(document, MAX_FINDINGS)):
        return None, None, False, tuple(problems)

    header = document.get("Header")
    dt = HEADERS.get(header) if type(header) is str else None
    if dt is None:
        dt, problem = _detect(document)
        if dt is None:
            return None, None, False, (problem,) if problem else ()
    mode = document.get("Mode")
    mode = mode if dt.modes and mode in _MODES else None

    try:
        # The typed verdict first (msgspec, a third faster than jsonschema-rs); it may refuse a
        # clean message, never take one that is not. A dict built in Python may hold what the
        # types were not held to (a str subclass, a tuple for a list): the engines judge those.
        if not (exact or refused) and (
            (not python_values and _typed.is_clean_typed(dt, mode, document)) or _advisory.is_clean(dt, document)
        ):
            # Conforms, and nothing is empty: only the consistency rules can have a word.
            return dt.name, mode, True, _capped(consistency_findings(dt, document, mode))
        conforms, findings = _checked(dt, document, mode, exact)
    except RecursionError:
        # A value nested nearly as deep as the reader allows still reads, yet the engines
        # can run out of stack explaining it (python-jsonschema recurses once per level).
        return dt.name, mode, False, (_too_deep(dt, document),)
    except ValueError as exc:
        # An int longer than Python writes (only a dict built in Python can hold one: the
        # reader refuses them) breaks python-jsonschema's own error messages.
        if "integer string conversion" not in str(exc):
            raise
        return dt.name, mode, False, (_too_large(dt, document),)
    return dt.name, mode, conforms, findings


def _checked(
    dt: DataType, document: dict[str, Any], mode: str | None, exact: bool = False
) -> tuple[bool, tuple[Finding, ...]]:
    """The verdict and every finding (at most :data:`MAX_FINDINGS`, see ``_limits``), for a
    message that has something to be told."""
    conforms = _schema.is_valid(dt, document, exact=exact)
    tally = Tally()
    if not conforms and not tally.extend(_explain.iter_schema_findings(dt, document, mode, exact=exact)):
        return conforms, tuple(tally.findings())
    consistency = consistency_findings(dt, document, mode)
    # Where a consistency rule already explains an empty value, "it is empty" adds nothing.
    explained = {f.path for f in consistency}
    advice: Iterable[Finding] = chain(
        consistency, (f for f in _advisory.iter_advisory_findings(dt, document) if f.path not in explained)
    )
    if wrong := set(tally.paths):  # (a copy: the tally goes on adding the paths of the advice)
        # Inside a value that is already wrong (a forbidden or mistyped property), advice is
        # noise. (Looked up by prefix in a set: 50,000 findings must not take 50,000² steps.)
        advice = (a for a in advice if not any(a.path[:n] in wrong for n in range(len(a.path) + 1)))
    tally.extend(advice)
    return conforms, tuple(tally.findings())


def _capped(findings: list[Finding]) -> tuple[Finding, ...]:
    if len(findings) <= MAX_FINDINGS:  # (nearly always: the tally is for the exception)
        return tuple(findings)
    tally = Tally()
    tally.extend(findings)
    return tuple(tally.findings())


def _too_deep(dt: DataType, document: dict[str, Any]) -> Finding:
    path = _deep_value(document)
    where = _explain._name(path, dt) if path else "The message"
    return Finding.of(
        "too-deep",
        path,
        f"{where} nests too deeply to be checked: reading it worked, explaining it ran out of stack "
        "(no PGM-AUA value nests more than a few levels).",
        # A value of the message: the rule's clause, then the place's.
        f"{RULES['too-deep'].spec}; {spec_reference(dt, path)}",
    )


def _too_large(dt: DataType, document: dict[str, Any]) -> Finding:
    path, value = _long_integer(document)
    where = _explain._name(path, dt) if path else "The message"
    return Finding.of(
        "too-large",
        path,
        f"{where} is {written(value)}: too long to check (Python writes integers of at most "
        f"{sys.get_int_max_str_digits():,} digits), and no PGM-AUA value needs more.",
        # A value of the message: the rule's clause, then the place's.
        f"{RULES['too-large'].spec}; {spec_reference(dt, path)}",
    )


def _has_long_integer(document: Any) -> bool:
    """True when ``document`` holds an integer that Python will not write.

    >>> _has_long_integer({"a": [1, {"b": 10**5000}]}), _has_long_integer({"a": 10**4000})
    (True, False)
    """
    bits = sys.get_int_max_str_digits() * 3.32  # about as many bits as that many digits
    pending = [document]
    while pending:
        value = pending.pop()
        kind = type(value)
        if kind is dict:
            pending.extend(value.values())
        elif kind is list:
            pending.extend(value)
        elif isinstance(value, int) and value.bit_length() > bits:
            return True
    return False


def _long_integer(document: Any) -> tuple[tuple[str | int, ...], Any]:
    """The path and value of the first integer of ``document`` that Python will not write."""
    bits = sys.get_int_max_str_digits() * 3.32  # about as many bits as that many digits
    pending: list[tuple[tuple[str | int, ...], Any]] = [((), document)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > bits:
            return path, value
        if isinstance(value, dict):
            pending.extend(((*path, key), item) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            pending.extend(((*path, index), item) for index, item in reversed(list(enumerate(value))))
    return (), None


def _deep_value(document: Any) -> tuple[str | int, ...]:
    """Where the deepest nesting of ``document`` starts: the path of the value from which
    every container down to the deepest value holds a single item (``[[[...]]]``), e.g.
    ``("DataXMData", "Source")``. Without recursion, since the stack is what ran out, and
    with a parent link per value rather than a path, so that 50,000 levels take 50,000 steps."""
    parents: list[int] = [-1]  # per value: the index of its container,
    keys: list[str | int] = [""]  # its key or index there,
    values: list[Any] = [document]  # and the value itself
    depths = [0]
    deepest = 0
    pending = [0]
    while pending:
        index = pending.pop()
        value = values[index]
        if depths[index] > depths[deepest]:
            deepest = index
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            pending.append(len(values))
            parents.append(index)
            keys.append(key)
            values.append(item)
            depths.append(depths[index] + 1)
    chain = []  # (key, container holding it), from the deepest value up
    index = deepest
    while parents[index] >= 0:
        chain.append((keys[index], values[parents[index]]))
        index = parents[index]
    chain.reverse()
    # Walk up from the deepest value while each container holds only the one on the path.
    start = len(chain)
    while start > 0 and len(chain[start - 1][1]) == 1:
        start -= 1
    return tuple(key for key, _ in chain[:start])
