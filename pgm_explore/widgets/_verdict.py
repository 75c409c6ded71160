"""What the page says about a document: the two verdicts apart, and which findings wait.

Schema conformance (DECISIONS D13) is the badge; consistency findings (D14) are counted beside
it in words and colours of their own, with correct plurals. On a new form, a field's warnings
wait until the person has edited that field (errors never wait). Pure functions of findings,
so that a test reads them without widgets.
"""

from __future__ import annotations

from collections.abc import Iterable

from pgm_explore._display import esc, table
from pgm_explore.validation import Finding, Report
from pgm_explore.widgets._filebar import count

__all__ = ["badge_html", "consistency_html", "shown_findings", "summary_html"]

Path = tuple[str | int, ...]
OK, BAD, WARN = "#2e7d32", "#c62828", "#ef6c00"


def shown_findings(findings: tuple[Finding, ...], touched: Iterable[Path] | None) -> tuple[Finding, ...]:
    """The findings the page shows: all (``touched`` None), or the errors and the findings at,
    inside or around a touched field.

    >>> from pgm_explore.validation import validate
    >>> from pgm_explore.dialogue.documents import skeleton
    >>> found = validate(skeleton("PC Prompt")).findings
    >>> len(shown_findings(found, None)), [f.json_path for f in shown_findings(found, [("Prompt",)])]
    (5, ['$.Prompt'])
    """
    if touched is None:
        return findings
    paths = tuple(touched)
    return tuple(
        f
        for f in findings
        if f.severity == "error" or any(f.path[: len(t)] == t or t[: len(f.path)] == f.path for t in paths)
    )


def badge_html(report: Report) -> str:
    """The conformance badge: exactly "conforms" (green) or "does not conform" (red)."""
    colour = OK if report.conforms else BAD
    return (
        f'<span style="display:inline-block;padding:1px 10px;border-radius:9px;'
        f'color:#fff;font-weight:600;background:{colour}">{esc(report.verdict)}</span>'
    )


def consistency_html(shown: tuple[Finding, ...]) -> str:
    """Beside the badge, the consistency findings: "· 1 consistency error · 2 warnings" ("" if none)."""
    errors = sum(1 for f in shown if not f.conformance and f.severity == "error")
    warnings = sum(1 for f in shown if f.severity == "warning")
    parts = []
    if errors:
        parts.append(f'<span style="color:{BAD};font-weight:600">{count(errors, "consistency error")}</span>')
    if warnings:
        parts.append(f'<span style="color:{WARN};font-weight:600">{count(warnings, "warning")}</span>')
    return " · ".join(["", *parts]).strip() if parts else ""


def summary_html(report: Report, shown: tuple[Finding, ...]) -> str:
    """The counts in words ("1 schema error (the message does not conform) · 2 warnings"), the
    table of the findings shown, and how many wait for the person."""
    held = len(report.findings) - len(shown)
    later = (
        f"<p><i>{esc(count(held, 'finding'))} at fields not filled in yet: shown once you edit them, "
        "or press Validate.</i></p>"
        if held
        else ""
    )
    if not shown:
        return later or "<p>No findings.</p>"
    schema = sum(1 for f in shown if f.conformance)
    consistency = sum(1 for f in shown if not f.conformance and f.severity == "error")
    warnings = sum(1 for f in shown if f.severity == "warning")
    parts = []
    if schema:
        parts.append(f"{count(schema, 'schema error')} (the message does not conform)")
    if consistency:
        parts.append(count(consistency, "consistency error"))
    if warnings:
        parts.append(count(warnings, "warning"))
    head = f"<p><b>{esc(' · '.join(parts))}</b></p>"
    rows = [[f.severity, f.rule, f.json_path, f.message, f.spec] for f in shown]
    return head + table(["severity", "rule", "path", "message", "spec"], rows) + later
