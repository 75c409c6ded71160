"""Tidy tables in a notebook: a missing value is an empty cell, text is left-aligned, and every string
is escaped. Opt-in, for the kernel it is called in: :func:`tidy_tables`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pgm_explore._display import esc

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["tidy_html", "tidy_tables"]

_LEFT = [{"selector": "th, td", "props": "text-align: left; vertical-align: top"}]


def tidy_html(frame: pd.DataFrame) -> str:
    """The HTML of a DataFrame as a person should read it: no ``NaN`` or ``<NA>`` where a value is
    absent (an empty cell), text left-aligned, every value escaped; at most ``display.max_rows`` rows.

    >>> import pandas as pd
    >>> html = tidy_html(pd.DataFrame({"a": pd.array([1, None], dtype="Int64"), "b": ["<x>", None]}))
    >>> "NaN" in html or "&lt;NA&gt;" in html or "<x>" in html, "&lt;x&gt;" in html
    (False, True)
    """
    import pandas as pd

    limit = pd.get_option("display.max_rows") or len(frame)
    shown = frame if len(frame) <= limit else frame.head(limit)
    styled = shown.style.format(_cell).format_index(_cell, axis=0).set_table_styles(_LEFT)
    html = styled.set_table_attributes('class="dataframe"').to_html()
    if len(shown) < len(frame):
        html += f"<p>… {len(frame) - len(shown)} more rows ({len(frame)} in all)</p>"
    return html


def _cell(value: Any) -> str:
    """
    >>> [_cell(v) for v in (None, float("nan"), 0.75, 2.0, 1794826200.42, 3, "a<b", True)]
    ['', '', '0.75', '2', '1794826200.42', '3', 'a&lt;b', 'True']
    """
    import pandas as pd

    if not isinstance(value, list | tuple | dict | set) and pd.isna(value):
        return ""
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".")
    return esc(value)


def tidy_tables() -> bool:
    """Show every DataFrame of this notebook's kernel with :func:`tidy_html`; False outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    import pandas as pd

    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, tidy_html)
    return True
