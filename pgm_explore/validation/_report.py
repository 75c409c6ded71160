"""The report on one message and the function that makes it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pgm_explore import _display
from pgm_explore.spec import HEADERS, DataType
from pgm_explore.validation import _schema
from pgm_explore.validation._consistency import consistency_findings
from pgm_explore.validation._parse import InputProblem, loads
from pgm_explore.validation.findings import Finding

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FINDING_COLUMNS", "Report", "validate"]

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
            head += " " + _display.badge(f"{len(self.warnings)} warning(s)", "warn")
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


def _quoted(value: Any) -> str:
    return f'"{value[:40]}"' if isinstance(value, str) else _schema._shown(value)


def _detect(document: Mapping[str, Any]) -> tuple[DataType | None, Finding | None]:
    if "Header" not in document:
        return None, Finding.of(
            "header-missing",
            ("Header",),
            "The message has no Header, so its data type cannot be told; "
            f"a PGM-AUA V1.0 message starts with one of {', '.join(HEADERS)}.",
            'Functional Requirement "Header" of every PGM-AUA data type (DECISIONS D2)',
        )
    header = document["Header"]
    dt = HEADERS.get(header) if isinstance(header, str) else None
    if dt is None:
        close = difflib.get_close_matches(header, list(HEADERS), n=1) if isinstance(header, str) else []
        hint = f' Did you mean "{close[0]}" ({HEADERS[close[0]].name})?' if close else ""
        return None, Finding.of(
            "header-unknown",
            ("Header",),
            f"Header {_quoted(header)} is not a PGM-AUA V1.0 data type; the Headers are {', '.join(HEADERS)}.{hint}",
            'Functional Requirement "Header" of every PGM-AUA data type (DECISIONS D2)',
        )
    return dt, None


def validate(document: Any, *, source: str | None = None) -> Report:
    """Validate one PGM-AUA message and report the verdict and every finding.

    ``document`` is a parsed message (a ``dict``) or its JSON text (``str`` or
    ``bytes``). The type comes from ``Header``; a missing or unknown Header is itself a
    finding. Never raises for bad input: everything wrong is a finding.

    >>> validate({"Header": "PGM-KDA-V1.0", "Mode": "RQ"}).conforms
    False
    """
    if isinstance(document, str | bytes | bytearray):
        try:
            document = loads(document)
        except InputProblem as problem:
            return Report(None, None, False, (problem.finding,), source)
    if not isinstance(document, dict):
        finding = Finding.of(
            "not-object",
            (),
            f"A message must be a JSON object, not {_schema._shown(document)}.",
            "Syntax section of every PGM-AUA data type: the schema's top level is an object",
        )
        return Report(None, None, False, (finding,), source)

    dt, problem = _detect(document)
    if dt is None:
        return Report(None, None, False, (problem,) if problem else (), source)
    mode = document.get("Mode")
    mode = mode if dt.has_modes and mode in ("RQ", "RS") else None

    conforms = _schema.is_valid(dt, document)
    findings = [] if conforms else _schema.schema_findings(dt, document, mode)
    consistency = consistency_findings(dt, document, mode)
    # Where a consistency rule already explains an empty value, "it is empty" adds nothing.
    explained = {f.path for f in consistency}
    advice = consistency + [f for f in _schema.advisory_findings(dt, document) if f.path not in explained]
    if findings and advice:
        # Inside a value that is already wrong (a forbidden or mistyped property), advice is noise.
        wrong = [f.path for f in findings]
        advice = [a for a in advice if not any(a.path[: len(w)] == w for w in wrong)]
    return Report(dt.name, mode, conforms, tuple(findings + advice), source)
