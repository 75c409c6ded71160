"""The one base of every exception pgm-explore raises on purpose.

A caller that wants to tell "pgm-explore refused this" from a bug catches
:class:`PgmExploreError`; each subclass also keeps the built-in base it always had
(``ValueError`` for bad input), so existing ``except ValueError`` code is unaffected.

>>> from pgm_explore.spec.process_actions import StatementError
>>> issubclass(StatementError, PgmExploreError) and issubclass(StatementError, ValueError)
True
"""

from __future__ import annotations

__all__ = ["PgmExploreError"]


class PgmExploreError(Exception):
    """Raised by pgm-explore for a reason it can name: bad input, an unreadable path, a refusal."""
