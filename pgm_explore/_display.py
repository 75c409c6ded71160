"""Notebook display shared by every layer: a mime bundle that never raises.

Jupyter hides exceptions raised inside display hooks, so a failing HTML builder would
leave a blank cell. :func:`mimebundle` falls back to the plain text, and to a bare
type name if even that fails. All user text goes through :func:`esc`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Container
from typing import Any

__all__ = ["badge", "count", "esc", "mimebundle", "table"]

# JupyterLab right-aligns every cell of an output's tables with `:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td`
# (specificity 0,2,1): `table.pgmx-table.pgmx-table td` (0,2,2) outweighs it, so text reads from the left.
STYLE = (
    "<style>"
    ".pgmx-table{border-collapse:collapse;font-size:12px}"
    "table.pgmx-table.pgmx-table th,table.pgmx-table.pgmx-table td"
    "{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
    "table.pgmx-table.pgmx-table td.pgmx-nowrap{white-space:nowrap}"
    ".pgmx-badge{display:inline-block;padding:1px 8px;border-radius:8px;color:#fff;font-weight:600}"
    ".pgmx-ok{background:#2e7d32}.pgmx-bad{background:#c62828}.pgmx-warn{background:#ef6c00}"
    "</style>"
)


def esc(value: Any) -> str:
    """HTML-escape any value (also lone surrogates, which cannot be encoded)."""
    text = value if isinstance(value, str) else str(value)
    return html.escape(text.encode("utf-8", "backslashreplace").decode("utf-8"), quote=True)


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: what every summary line says.

    >>> count(1, "warning"), count(0, "error"), count(3, "message")
    ('1 warning', '0 errors', '3 messages')
    """
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def badge(text: str, kind: str) -> str:
    return f'<span class="pgmx-badge pgmx-{kind}">{esc(text)}</span>'


def table(columns: list[str], rows: list[list[Any]], *, nowrap: Container[str] = ()) -> str:
    """An HTML table of escaped cells; the cells of the ``nowrap`` columns are kept on one line
    (an ISO time such as 2026-11-16T10:50:00.420Z would otherwise break at its hyphens).

    >>> table(["time_utc", "n"], [["2026-11-16T10:50:00Z", 1]], nowrap={"time_utc"}).count("pgmx-nowrap")
    1
    """
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    opens = ['<td class="pgmx-nowrap">' if c in nowrap else "<td>" for c in columns]
    body = "".join(
        "<tr>" + "".join(f"{opens[i] if i < len(opens) else '<td>'}{esc(v)}</td>" for i, v in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<table class="pgmx-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def mimebundle(
    obj: object,
    text: Callable[[], str],
    html_body: Callable[[], str],
    include: Container[str] | None = None,
    exclude: Container[str] | None = None,
) -> dict[str, str]:
    """A ``_repr_mimebundle_`` result with text/plain and text/html; never raises."""
    try:
        plain = text()
    except Exception:  # a display hook must not raise, whatever went wrong
        plain = f"<{type(obj).__name__}>"
    bundle = {"text/plain": plain}
    try:
        bundle["text/html"] = STYLE + html_body()
    except Exception:
        bundle["text/html"] = f"<pre>{esc(plain)}</pre>"
    return {
        mime: data
        for mime, data in bundle.items()
        if (include is None or mime in include) and (exclude is None or mime not in exclude)
    }
