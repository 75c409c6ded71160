"""Rights and Rules: reading a Rule, matching a Right's pattern, checking a statement's signature.

Sources: the MMM-TEC "about" page for Rules ("a Process ... followed by a Right"), NOTES 4.6 for
the per-action signatures and NOTES 7.5 item 7 (no complement of a V2.2 schema is required).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pgm_explore.spec.process_actions._grammar import _tokenize, parse_statement
from pgm_explore.spec.process_actions._signatures import OPERAND_TYPES, SIGNATURES
from pgm_explore.spec.process_actions._statements import Complement, Statement, StatementError
from pgm_explore.spec.process_actions._vocabulary import DEONTIC_VERBS

__all__ = ["ProcessRule", "covers", "parse_rule", "signature_problems"]


@dataclass(frozen=True)
class ProcessRule:
    """A Rule: "a Process (identified by an ID or by Metadata) followed by a Right" (MMM-TEC about page).

    Also reads a bare Right (no Process): then ``process`` is None.

    >>> r = parse_rule("Any Process May Not MM-Add Nil Item At ML-Plaza-Fountain")
    >>> r.process, r.right.deontic, str(r.right)
    ('Any Process', 'May Not', 'May Not MM-Add Nil Item At ML-Plaza-Fountain')
    """

    process: str | None
    right: Statement


def parse_rule(text: str, *, lenient: bool = False) -> ProcessRule:
    """Split a Rule at its deontic verb (the first word ``May`` or ``Must``) and parse the Right."""
    if not isinstance(text, str):
        raise TypeError(f"a rule is a str, not {type(text).__name__}")
    tokens = _tokenize(text)
    start = next((t.column for t in tokens if t.kind == "word" and t.text in ("May", "Must")), None)
    if start is None:
        raise StatementError("a Right starts with a deontic verb: May, May Not or Must", 1, DEONTIC_VERBS, text)
    try:
        right = parse_statement(text[start - 1 :], lenient=lenient)
    except StatementError as e:
        raise StatementError(e.message, e.column + start - 1, e.expected, text) from None
    return ProcessRule(process=text[: start - 1].strip() or None, right=right)


def _operand_matches(want: Complement, have: Complement) -> bool:
    if want.preposition != have.preposition:
        return False
    if want.value is None:
        return want.term in (have.term, have.value)  # "At ML-1" matches "At MLocationID=ML-1"
    if have.value is None:
        return have.term == want.value
    return (want.term, want.value) == (have.term, have.value)


def covers(pattern: Statement, statement: Statement) -> bool:
    """Whether a Right's (or Rule's) Process Action pattern applies to a concrete statement.

    Same action, and every pattern complement that names something specific (an ID, or
    ``Type=value``) is matched by a complement of the statement with the same preposition. A pattern
    complement that is a bare type name (:data:`OPERAND_TYPES`: ``Nil Item``, ``With Rights``) stands for
    anything and constrains nothing. Deontic verbs, statuses and conditions are not compared.

    >>> rule = parse_statement("May Not MM-Add Nil Item At ML-Plaza-Fountain")
    >>> covers(rule, parse_statement("MM-Add Nil item-1 At ML-Plaza-Fountain With Rights (Status=Model)"))
    True
    >>> covers(rule, parse_statement("MM-Add Nil item-1 At MLocationID=ML-Stall-07"))
    False
    """
    if pattern.action != statement.action:
        return False
    for want in pattern.complements:
        if want.value is None and want.term in OPERAND_TYPES:
            continue
        if not any(_operand_matches(want, have) for have in statement.complements):
            return False
    return True


@lru_cache(maxsize=8192)
def signature_problems(statement: Statement) -> tuple[str, ...]:
    """Complements whose preposition the action's V2.2 request signature never uses.

    Nothing is reported for actions without a signature (License, Inform) or whose request
    complements NOTES 4.6 recorded only in part (UM-Send, Register).

    Only prepositions are compared: operand names are free in statements (an ID, a type, a name),
    and the V2.2 schemas mark no complement required (NOTES 7.5 item 7).

    >>> signature_problems(parse_statement("MM-Send Nil Message To proc-1"))
    ()
    >>> signature_problems(parse_statement("MM-Send Nil Message From proc-1"))
    ('MM-Send takes no From complement in V2.2 (its request complements: Nil Message; To ProcessID; With Rights; With SPM)',)
    """
    sig = SIGNATURES.get(statement.action)
    if sig is None or not sig.request_complete:
        return ()
    listed = "; ".join(map(str, sig.request))
    seen: list[str] = []
    for c in statement.complements:
        if c.preposition not in sig.prepositions and c.preposition not in seen:
            seen.append(c.preposition)
    return tuple(
        f"{statement.action} takes no {p} complement in V2.2 (its request complements: {listed})" for p in seen
    )
