"""``validate_json``: one message given as JSON text, validated as ``pgm-explore validate`` reads it.

The reading API follows pydantic's naming: :func:`~pgm_explore.validation.validate` takes Python
values (what a notebook or a composer builds), :func:`validate_json` takes the text of one message
(what a file, a socket or a clipboard holds). The text is parsed by
:func:`~pgm_explore.validation.parse_json`, the path the command line's reader (``pgm_explore.io``) takes
for any text it does not read at full speed and which it is held equal to by tests: so the findings
on a text are those ``pgm-explore validate`` prints for a file holding it (``not-json``/``syntax``,
``encoding``, ``duplicate-key`` notes, numbers beyond a double, BOM). Spec sources: RFC 8259 for
what JSON text is; the Syntax section of each data type for "a message is one object".
"""

from __future__ import annotations

from pgm_explore.validation._report import Report, validate

__all__ = ["validate_json"]


def validate_json(data: str | bytes | bytearray, *, source: str | None = None) -> Report:
    """Validate one message given as JSON text (``str``, or UTF-8 ``bytes``) and report every finding.

    Never raises for bad text: text that is not JSON, is not UTF-8 or holds a lone surrogate is a
    finding, and a name written twice in one object is a ``duplicate-key`` warning beside the
    findings on the value. A top-level array is one value that is not a message (``not-object``);
    :func:`pgm_explore.validate_file` reads a file of several messages. Anything but text raises
    ``TypeError``: a Python value goes to :func:`~pgm_explore.validation.validate`.

    >>> report = validate_json(b'{"Header": "PGM-KPA-V1.0", "Header": "PGM-KPA-V1.0", "Mode": "RQ"}')
    >>> report.type, report.conforms, [f.rule for f in report.findings if f.severity == "warning"]
    ('BKN-PAL', False, ['duplicate-key'])
    >>> [(f.rule, f.message) for f in validate_json("{oops").findings]
    [('syntax', 'Not valid JSON: Expecting property name enclosed in double quotes.')]
    >>> validate_json({"Header": "PGM-KPA-V1.0"})
    Traceback (most recent call last):
    TypeError: validate_json() takes JSON text (str or bytes), not dict: validate() takes Python values
    """
    if not isinstance(data, str | bytes | bytearray):
        raise TypeError(
            f"validate_json() takes JSON text (str or bytes), not {type(data).__name__}: validate() takes Python values"
        )
    # validate() reads text through parse_json, the public path of the command line's reader.
    return validate(data, source=source)
