"""Statements as values: :class:`Complement`, :class:`Statement` and :class:`StatementError`.

A Process Action statement of MMM-TEC V2.2 (the grammar reconstructed in NOTES 4.3, see
:mod:`pgm_explore.spec.process_actions`). Each value checks in ``__post_init__`` what the parser
checks, so that every Statement round-trips through the canonical text its ``__str__`` writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pgm_explore.errors import PgmExploreError
from pgm_explore.spec.process_actions._signatures import SIGNATURES
from pgm_explore.spec.process_actions._vocabulary import (
    ACTION_INFO,
    DEONTIC_VERBS,
    KEYWORDS,
    LENIENT_PREPOSITIONS,
    PREPOSITIONS,
    Deontic,
    Preposition,
)

__all__ = ["Complement", "Statement", "StatementError"]


class StatementError(PgmExploreError, ValueError):
    """A statement the grammar does not accept: where (1-based ``column``), why, and what would fit.

    >>> try:
    ...     parse_statement("MM-Add Nil item-1, Onto ML-1")
    ... except StatementError as e:
    ...     print(e.column, e.message, e.expected)
    ...     print(e.pointer())
    20 unknown preposition 'Onto' ('Nil', 'At', 'From', 'To', 'With', 'If')
    MM-Add Nil item-1, Onto ML-1
                       ^
    """

    def __init__(self, message: str, column: int, expected: tuple[str, ...] = (), text: str = "") -> None:
        super().__init__(f"{message} (column {column})")
        self.message = message
        self.column = column
        self.expected = expected
        self.text = text

    def pointer(self) -> str:
        """The statement with a caret under the column (for notebooks and command-line output)."""
        return f"{self.text}\n{' ' * (self.column - 1)}^"


_SPECIAL = ',()="'
_KEYWORD_FOLDS = frozenset(k.casefold() for k in (*PREPOSITIONS, "If"))


def _render(phrase: str) -> str:
    """A term, value or event as the canonical form writes it: quoted only when it has to be."""
    words = phrase.split(" ")
    plain = (
        phrase != ""
        and all(words)
        and not any(ch in _SPECIAL or (ch.isspace() and ch != " ") for ch in phrase)
        # The parser rejects a keyword in another case inside an operand, so "if" must be quoted too.
        and not any(w in KEYWORDS or w.casefold() in _KEYWORD_FOLDS for w in words)
    )
    return phrase if plain else f'"{phrase}"'


@dataclass(frozen=True)
class Complement:
    """A preposition and its operand: ``With PerceptibilityState=1``, ``With Rights (Status=Model)``.

    >>> c = Complement("At", "MLocationID", "ML-1")
    >>> str(c), c.ref
    ('At MLocationID=ML-1', 'ML-1')
    """

    preposition: Preposition
    term: str
    value: str | None = None
    """What follows ``=``, if anything."""
    status: Literal["Model", "Final"] | None = None
    """From ``(Status=Model)`` or ``(Status-Model)``."""

    def __post_init__(self) -> None:
        if self.preposition not in LENIENT_PREPOSITIONS:
            raise ValueError(f"not a preposition: {self.preposition!r}")
        for name, text in (("term", self.term), ("value", self.value)):
            if text is not None and (text == "" or '"' in text):
                raise ValueError(f"a complement's {name} must be non-empty and contain no double quote: {text!r}")
        if self.status not in (None, "Model", "Final"):
            raise ValueError(f"status must be Model, Final or None: {self.status!r}")

    @property
    def ref(self) -> str:
        """What the operand names: its value when it has one (``MLocationID=ML-1``), else its term."""
        return self.value if self.value is not None else self.term

    def __str__(self) -> str:
        text = f"{self.preposition} {_render(self.term)}"
        if self.value is not None:
            text += f"={_render(self.value)}"
        if self.status is not None:
            text += f" (Status={self.status})"
        return text


@dataclass(frozen=True, kw_only=True)
class Statement:
    """A parsed Process Action statement (or, with a deontic verb, a Right).

    Equality ignores ``source``, so ``parse_statement(str(s)) == s``.

    >>> s = parse_statement("May MM-Send Nil Message, To proc-user-lucia If the User asks")
    >>> s.deontic, s.action, s.condition, s.nil
    ('May', 'MM-Send', 'the User asks', Complement(preposition='Nil', term='Message', value=None, status=None))
    >>> str(s)
    'May MM-Send Nil Message To proc-user-lucia If the User asks'
    """

    deontic: Deontic | None = None
    action: str
    complements: tuple[Complement, ...] = ()
    condition: str | None = None
    """The event after a final ``If``."""
    source: str | None = field(default=None, compare=False, repr=False)
    """The text the statement was parsed from (None when built in code)."""

    def __post_init__(self) -> None:
        if self.deontic not in (None, *DEONTIC_VERBS):
            raise ValueError(f"not a deontic verb: {self.deontic!r}")
        if self.action not in ACTION_INFO:
            raise ValueError(f"not a canonical V2.2 action: {self.action!r}")
        if not all(isinstance(c, Complement) for c in self.complements):
            raise ValueError("complements must be Complement objects")
        # The parser's Nil rule, so that every Statement round-trips through its canonical text.
        nils = [i for i, c in enumerate(self.complements) if c.preposition == "Nil"]
        sig = SIGNATURES.get(self.action)
        if nils != list(range(len(nils))) or len(nils) > (sig.max_nil if sig else 1):
            raise ValueError(f"Nil complements must come first, at most {sig.max_nil if sig else 1} of them")
        if self.condition is not None and (self.condition == "" or '"' in self.condition):
            raise ValueError(f"a condition must be non-empty and contain no double quote: {self.condition!r}")

    @property
    def nil(self) -> Complement | None:
        """The direct object (the first Nil complement), if any."""
        return next((c for c in self.complements if c.preposition == "Nil"), None)

    def find(self, preposition: str | None = None, term: str | None = None) -> tuple[Complement, ...]:
        """The complements with this preposition and/or term.

        >>> parse_statement("Transact With Transaction=180 AGR With SPM").find(term="Transaction")[0].value
        '180 AGR'
        """
        return tuple(
            c
            for c in self.complements
            if (preposition is None or c.preposition == preposition) and (term is None or c.term == term)
        )

    def __str__(self) -> str:
        parts: list[str] = [self.deontic] if self.deontic else []
        parts.append(self.action)
        parts.extend(map(str, self.complements))
        if self.condition is not None:
            parts.append(f"If {_render(self.condition)}")
        return " ".join(parts)
