"""The probe's results as text, JSON Lines, JUnit XML or HTML (``pgm-explore probe --format``), and
as a table for a notebook (:func:`as_frame`).

>>> from pgm_explore.mcp.probe import Check
>>> checks = [Check("dac", "echo", "fail", "RequestID 'x' (Request: 'q-1')", "BKN-DAC FR \\"Correlation\\"")]
>>> print(as_json_lines(checks), end="")
{"partner": "dac", "check": "echo", "status": "fail", "message": "RequestID 'x' (Request: 'q-1')", "spec": "BKN-DAC FR \\"Correlation\\""}
>>> summary(checks)
'1 check: 0 pass, 1 fail, 0 skip'
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Container, Sequence
from itertools import groupby
from typing import TYPE_CHECKING
from xml.etree import ElementTree

from pgm_explore._display import esc
from pgm_explore.mcp.probe import Check

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["as_frame", "as_html", "as_json_lines", "as_junit", "as_text", "summary"]

_EVIDENCE_CHARS = 600
# XML 1.0 has no way to write these, not even escaped: a partner's text may hold them.
_NOT_XML = {c: f"\\x{c:02x}" for c in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE, 0xFFFF)}


def _xml(text: str) -> str:
    return "".join(f"\\u{ord(ch):04x}" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text.translate(_NOT_XML))


def summary(checks: Sequence[Check]) -> str:
    counts = Counter(c.status for c in checks)
    noun = "check" if len(checks) == 1 else "checks"
    return f"{len(checks)} {noun}: {counts['pass']} pass, {counts['fail']} fail, {counts['skip']} skip"


def as_json_lines(checks: Sequence[Check]) -> str:
    """One JSON object per line: ``{"partner", "check", "status", "message", "spec"}``."""
    return "".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in checks)


def as_frame(checks: Sequence[Check]) -> pd.DataFrame:
    """One row per check, with the columns of ``--format json``: partner, check, status,
    message, spec.

    >>> from pgm_explore.mcp.probe import Check
    >>> frame = as_frame([Check("dac", "echo", "pass", "ok", ""), Check("dac", "shape", "fail", "no Outcome", "Table 3")])
    >>> frame[frame.status != "pass"][["check", "message", "spec"]].to_dict("records")
    [{'check': 'shape', 'message': 'no Outcome', 'spec': 'Table 3'}]
    >>> list(frame.columns)
    ['partner', 'check', 'status', 'message', 'spec']
    """
    # pandas only here: `pgm-explore probe` starts without it.
    import pandas as pd

    return pd.DataFrame([c.to_dict() for c in checks], columns=["partner", "check", "status", "message", "spec"])


def _evidence(check: Check) -> list[str]:
    lines = []
    for item in check.evidence:
        text = json.dumps(item, ensure_ascii=False, default=str)
        lines.append(text if len(text) <= _EVIDENCE_CHARS else text[: _EVIDENCE_CHARS - 1] + "…")
    return lines


def as_text(
    checks: Sequence[Check],
    clean: Callable[[str], str] = str,
    colour: dict[str, str] | None = None,
    known: Container[Check] = (),
) -> str:
    """Per partner, one line per check; a failure is followed by its spec clause and its evidence.

    A message of several lines (what a partner wrote to stderr before it exited) goes on, indented;
    ``known``: the failures a baseline expects, marked so.
    """
    colour = colour or {}
    reset = colour.get("reset", "")
    out = []
    for partner, block in groupby(checks, key=lambda c: c.partner):
        out.append(f"{colour.get('bold', '')}{clean(partner)}{reset}")
        for c in block:
            mark = colour.get(c.status, "") + c.status.upper().ljust(4) + reset
            first, *more = c.message.splitlines() or [""]
            flag = " (known: in the baseline)" if c in known else ""
            out.append(f"  {mark}  {clean(c.check)}: {clean(first)}{flag}")
            out.extend(f"        {clean(line)}" for line in more)
            if c.status == "fail":
                out.append(f"        spec: {clean(c.spec)}")
                out.extend(f"        > {clean(line)}" for line in _evidence(c))
    out.append(summary(checks))
    return "\n".join(out) + "\n"


def as_junit(checks: Sequence[Check]) -> str:
    """JUnit XML: a testsuite per partner, a testcase per check (failure / skipped), the evidence in system-out."""
    root = ElementTree.Element("testsuites", name="pgm-explore probe")
    for partner, block in groupby(checks, key=lambda c: c.partner):
        cases = list(block)
        suite = ElementTree.SubElement(
            root,
            "testsuite",
            name=_xml(partner),
            tests=str(len(cases)),
            failures=str(sum(c.status == "fail" for c in cases)),
            skipped=str(sum(c.status == "skip" for c in cases)),
            errors="0",
        )
        for c in cases:
            case = ElementTree.SubElement(suite, "testcase", classname=_xml(f"probe.{partner}"), name=_xml(c.check))
            if c.status == "fail":
                ElementTree.SubElement(case, "failure", message=_xml(c.message)).text = _xml(f"spec: {c.spec}")
            elif c.status == "skip":
                ElementTree.SubElement(case, "skipped", message=_xml(c.message))
            if c.evidence:
                ElementTree.SubElement(case, "system-out").text = _xml("\n".join(_evidence(c)))
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


_HTML_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.5em;max-width:72em}"
    "h2{margin-top:1.5em}details{border:1px solid #ddd;border-radius:4px;margin:4px 0;padding:2px 8px}"
    "summary{cursor:pointer}.st{display:inline-block;width:3.2em;text-align:center;border-radius:8px;"
    "color:#fff;font-weight:600;font-size:12px;margin-right:6px}.pass{background:#2e7d32}"
    ".fail{background:#c62828}.skip{background:#757575}.id{font-family:monospace;font-weight:600}"
    ".known{color:#8d6e00;font-size:12px;margin-left:6px}.clause{color:#444;font-size:13px}"
    "pre{background:#f6f6f6;padding:6px;overflow-x:auto;white-space:pre-wrap;font-size:12px}"
    ".msg{white-space:pre-wrap}"
)


def as_html(checks: Sequence[Check], known: Container[Check] = (), title: str = "pgm-explore probe") -> str:
    """One page, no script and nothing fetched: per partner, a folded section per check (verdict,
    message, clause, the messages exchanged); failures open. Every string is escaped."""
    body = [f"<h1>{esc(title)}</h1>", f"<p>{esc(summary(checks))}</p>"]
    for partner, block in groupby(checks, key=lambda c: c.partner):
        cases = list(block)
        body.append(f"<h2>{esc(partner)}</h2><p>{esc(summary(cases))}</p>")
        for c in cases:
            flag = '<span class="known">known failure (baseline)</span>' if c in known else ""
            evidence = (
                "".join(
                    f"<pre>{esc(json.dumps(item, ensure_ascii=False, indent=2, default=str))}</pre>"
                    for item in c.evidence
                )
                or "<p>No message exchanged is kept for this check.</p>"
            )
            body.append(
                f'<details{" open" if c.status == "fail" else ""} id="{esc(partner)}-{esc(c.check)}">'
                f'<summary><span class="st {esc(c.status)}">{esc(c.status)}</span>'
                f'<span class="id">{esc(c.check)}</span>{flag}</summary>'
                f'<p class="msg">{esc(c.message)}</p><p class="clause">Clause: {esc(c.spec)}</p>'
                f"<details><summary>Messages exchanged ({len(c.evidence)})</summary>{evidence}</details></details>"
            )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{_HTML_STYLE}</style></head><body>{''.join(body)}</body></html>\n"
    )
