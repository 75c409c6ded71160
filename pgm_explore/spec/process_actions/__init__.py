"""MMM-TEC V2.2 Process Action statements: the vocabulary as data, and a parser.

BKN-DAC ``ProcessActions[].Statement`` is "A Process Action statement conforming with the grammar of
MMM-TEC V2.2". That grammar's text (the "Backus Naur Form" section of the V2.2 Process Actions page) is
not available, so the grammar below is the project's reconstruction from every published example
(NOTES 4.3); a statement it rejects is a warning, never an error (DECISIONS D17).

The grammar (the canonical form is what :meth:`Statement.__str__` writes)::

    statement   = [ deontic ] , action , { [ "," ] , complement } , [ [ "," ] , condition ] ;
    deontic     = "May Not" | "May" | "Must" ;
    action      = one of ACTIONS, or a synonym (SYNONYMS) ;
    complement  = preposition , operand ;
    preposition = "Nil" | "At" | "From" | "To" | "With" ;     (* "Of" only with lenient=True *)
    operand     = phrase , [ "=" , phrase ] , [ status ] ;
    status      = "(" , "Status" , ( "=" | "-" ) , ( "Model" | "Final" ) , ")" ;
    condition   = "If" , phrase ;                           (* must end the statement *)
    phrase      = quoted | word , { word } ;               (* words that are not keywords *)
    quoted      = '"' , { any character but '"' } , '"' ;
    word        = { any character but white space and , ( ) = " } ;
    keyword     = "Nil" | "At" | "From" | "To" | "With" | "Of" | "If" ;

Conventions of the project (not of the spec):

* **Multi-word terms.** A term (and a value, and the event of a condition) runs over words until the
  next keyword, comma, ``=``, parenthesis or the end: ``With Requested Rights (Status=Model)`` has the
  term ``Requested Rights``. Keywords are case-sensitive, so ``to`` inside a term is a plain word; a term
  that must contain a keyword or a special character is written in double quotes (``With "Point To
  Point"``). Words are joined by one space.
* **Separators** are white space, or a comma before a complement or the condition; a comma must be
  followed by one of them. Commas are not kept: the canonical form uses single spaces.
* **Nil** (the direct object) comes first and occurs at most once, except in MU-Actuate, whose V2.2
  signature has two (``Nil ItemID; Nil MLocation``, NOTES 4.6).
* **The condition** ``If <event>`` ends the statement: anything after its event is an error.
* **Strict mode** (the default) reads V2.2 only. ``lenient=True`` also reads ``Of`` (V2.0/V2.1 and the
  MMM-TEC "about" page) and verb inflections of prose ("Identifies", "MM-Sends"), which become the
  canonical action. Names of older actions (``Track``, ``MM-Embed``...) are rejected in both modes, with
  a message that says where they come from.

Why a hand-written tokenizer and recursive-descent parser: the grammar is a dozen productions, and what
matters is the error report (a 1-based column, plain words, what was expected, a close-match
suggestion for a misspelt action), which a parser generator would have to be taught anyway. ``lark``
and ``pyparsing`` are in the development environment but not runtime dependencies; adding one for
this grammar is not worth it.

The package keeps each piece where a reader looks for it: the vocabulary (``_vocabulary``), the PA
Status codes (``_status``), the per-action signatures as data (``_signatures``), statements as values
(``_statements``), the grammar (``_grammar``) and Rights and Rules (``_rights``). Every public name is
imported from here.

>>> s = parse_statement("MM-Add Nil Avatar, With SpatialAttitude, With PerceptStatus=1 With Requested Rights (Status=Model)")
>>> s.action, [c.preposition for c in s.complements]
('MM-Add', ['Nil', 'With', 'With', 'With'])
>>> s.complements[2], s.complements[3].status
(Complement(preposition='With', term='PerceptStatus', value='1', status=None), 'Model')
>>> print(s)
MM-Add Nil Avatar With SpatialAttitude With PerceptStatus=1 With Requested Rights (Status=Model)
>>> parse_statement("Track Nil item-1")
Traceback (most recent call last):
...
pgm_explore.spec.process_actions.StatementError: Track is an MMM-ARC V1.x action, not V2.2 (column 1)
"""

from __future__ import annotations

import warnings
from typing import Any

from pgm_explore.spec.process_actions._grammar import parse_statement
from pgm_explore.spec.process_actions._rights import ProcessRule, covers, parse_rule, signature_problems
from pgm_explore.spec.process_actions._signatures import OPERAND_TYPES, SIGNATURES, Signature, Slot
from pgm_explore.spec.process_actions._statements import Complement, Statement, StatementError
from pgm_explore.spec.process_actions._status import (
    PA_STATUS,
    PA_STATUS_CODES,
    STATUS_ALIASES,
    PAStatus,
    PAStatusCode,
    normalize_status,
)
from pgm_explore.spec.process_actions._vocabulary import (
    ACTION_INFO,
    ACTIONS,
    DEONTIC_VERBS,
    KEYWORDS,
    LENIENT_PREPOSITIONS,
    NON_V22_ACTIONS,
    OLDER_PREPOSITIONS,
    PREPOSITIONS,
    SYNONYMS,
    ActionInfo,
    Deontic,
    Preposition,
    resolve_action,
)

__all__ = [
    "ACTIONS",
    "ACTION_INFO",
    "ActionInfo",
    "Complement",
    "DEONTIC_VERBS",
    "Deontic",
    "KEYWORDS",
    "LENIENT_PREPOSITIONS",
    "NON_V22_ACTIONS",
    "OLDER_PREPOSITIONS",
    "OPERAND_TYPES",
    "PAStatus",
    "PAStatusCode",
    "PA_STATUS",
    "PA_STATUS_CODES",
    "PREPOSITIONS",
    "Preposition",
    "ProcessRule",
    "SIGNATURES",
    "STATUS_ALIASES",
    "SYNONYMS",
    "Signature",
    "Slot",
    "Statement",
    "StatementError",
    "covers",
    "normalize_status",
    "parse_rule",
    "parse_statement",
    "resolve_action",
    "signature_problems",
]


def __getattr__(name: str) -> Any:
    # ``Rule`` was ProcessRule's name until the package had one ``Rule`` too many
    # (:class:`pgm_explore.validation.Rule` is a rule of the checker). It was exported here, so
    # it still works, and says so: nothing in pgm-explore uses it.
    if name == "Rule":
        warnings.warn(
            "pgm_explore.spec.process_actions.Rule is deprecated: use ProcessRule",
            DeprecationWarning,
            stacklevel=2,
        )
        return ProcessRule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Reprs, tracebacks and documentation name the public module, not the private one a class is written in.
for _public in (ActionInfo, Complement, PAStatus, ProcessRule, Signature, Slot, Statement, StatementError):
    _public.__module__ = __name__
for _function in (covers, normalize_status, parse_rule, parse_statement, resolve_action, signature_problems):
    _function.__module__ = __name__
del _public, _function
