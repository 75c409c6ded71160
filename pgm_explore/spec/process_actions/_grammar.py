"""The statement grammar: a tokenizer and a recursive-descent parser (NOTES 4.3, DECISIONS D17).

The productions and the project's conventions are in :mod:`pgm_explore.spec.process_actions`;
this module reads them and reports what it cannot read with a column, plain words, what was
expected and a close-match suggestion for a misspelt action.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, cast

from pgm_explore.spec.process_actions._signatures import SIGNATURES
from pgm_explore.spec.process_actions._statements import _SPECIAL, Complement, Statement, StatementError
from pgm_explore.spec.process_actions._vocabulary import (
    _LOOKUP,
    _NON_V22_HINTS,
    ACTIONS,
    KEYWORDS,
    LENIENT_PREPOSITIONS,
    NON_V22_ACTIONS,
    OLDER_PREPOSITIONS,
    PREPOSITIONS,
    SYNONYMS,
    Deontic,
    Preposition,
    _inflections,
    resolve_action,
)

__all__ = ["parse_statement"]

# --- tokenizer ----------------------------------------------------------------------------------------

_Kind = Literal["word", "quoted", "comma", "lparen", "rparen", "eq"]
_PUNCTUATION: dict[str, _Kind] = {",": "comma", "(": "lparen", ")": "rparen", "=": "eq"}


@dataclass(frozen=True)
class _Token:
    kind: _Kind
    text: str
    column: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in _PUNCTUATION:
            tokens.append(_Token(_PUNCTUATION[ch], ch, i + 1))
            i += 1
        elif ch == '"':
            end = text.find('"', i + 1)
            if end < 0:
                raise StatementError("unterminated quotation mark", i + 1, ('"',), text)
            tokens.append(_Token("quoted", text[i + 1 : end], i + 1))
            i = end + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in _SPECIAL:
                j += 1
            tokens.append(_Token("word", text[i:j], i + 1))
            i = j
    return tokens


# --- parser -------------------------------------------------------------------------------------------

_NEXT = (*PREPOSITIONS, "If")
_FOLDED_KEYWORDS = {k.casefold(): k for k in _NEXT}  # "of", "by", "into" stay ordinary words: "Point of View"


class _Parser:
    def __init__(self, text: str, lenient: bool) -> None:
        self.text = text
        self.lenient = lenient
        self.tokens = _tokenize(text)
        self.pos = 0

    # helpers

    def peek(self, offset: int = 0) -> _Token | None:
        i = self.pos + offset
        return self.tokens[i] if i < len(self.tokens) else None

    def advance(self) -> _Token:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def column(self) -> int:
        """Column of the next token, or just past the end of the text."""
        tok = self.peek()
        return tok.column if tok else len(self.text.rstrip()) + 1

    def error(self, message: str, column: int | None = None, expected: tuple[str, ...] = ()) -> StatementError:
        return StatementError(message, self.column() if column is None else column, expected, self.text)

    def is_word(self, tok: _Token | None, *texts: str) -> bool:
        return tok is not None and tok.kind == "word" and (not texts or tok.text in texts)

    def describe(self, tok: _Token | None) -> str:
        if tok is None:
            return "the end of the statement"
        return "a quoted phrase" if tok.kind == "quoted" else repr(tok.text)

    # grammar

    def statement(self) -> Statement:
        if not self.tokens:
            raise self.error("empty statement: expected an action", 1, ACTIONS)
        deontic = self.deontic()
        action = self.action()
        complements: list[Complement] = []
        condition: str | None = None
        while (tok := self.peek()) is not None:
            if tok.kind == "comma":
                self.advance()
                if (tok := self.peek()) is None:
                    raise self.error("a comma must be followed by a complement or a condition", expected=_NEXT)
            if self.is_word(tok, "If"):
                condition = self.condition()
                break
            complements.append(self.complement(action, complements))
        if (rest := self.peek()) is not None:
            raise self.error(
                f"text after the condition: 'If {condition}' must end the statement, found {self.describe(rest)}"
            )
        return Statement(
            deontic=deontic, action=action, complements=tuple(complements), condition=condition, source=self.text
        )

    def deontic(self) -> Deontic | None:
        tok = self.peek()
        if self.is_word(tok, "Must"):
            self.advance()
            return "Must"
        if self.is_word(tok, "May"):
            self.advance()
            nxt = self.peek()
            if self.is_word(nxt, "Not"):
                self.advance()
                return "May Not"
            if nxt is not None and nxt.kind == "word" and nxt.text.casefold() == "not":
                raise self.error(f"write the deontic verb as 'May Not', not 'May {nxt.text}'", nxt.column, ("Not",))
            return "May"
        return None

    def action(self) -> str:
        tok = self.peek()
        if not self.is_word(tok):
            raise self.error(f"expected an action, found {self.describe(tok)}", expected=ACTIONS)
        assert tok is not None
        nxt = self.peek(1)
        # Two-word actions first: Property Change, Rights Manage.
        if (
            nxt is not None
            and nxt.kind == "word"
            and (found := resolve_action(f"{tok.text} {nxt.text}", lenient=self.lenient)) is not None
        ):
            self.pos += 2
            return found
        if (found := resolve_action(tok.text, lenient=self.lenient)) is not None:
            self.advance()
            return found
        if tok.text in KEYWORDS:
            raise self.error(f"expected an action before {tok.text!r}", expected=ACTIONS)
        bases = [tok.text, *(_inflections(tok.text) if self.lenient else ())]
        for base in bases:
            if base in NON_V22_ACTIONS:
                hint = _NON_V22_HINTS.get(base, "")
                raise self.error(f"{base} is an {NON_V22_ACTIONS[base]} action, not V2.2{hint}", expected=ACTIONS)
        if not self.lenient and (base := resolve_action(tok.text, lenient=True)) is not None:
            raise self.error(
                f"unknown action {tok.text!r}: write the V2.2 name {base!r} (or parse with lenient=True)",
                expected=(base,),
            )
        suggestions = self.suggest(tok.text)
        hint = f"; did you mean {' or '.join(map(repr, suggestions))}?" if suggestions else ""
        raise self.error(f"unknown action {tok.text!r}{hint}", expected=tuple(suggestions) or ACTIONS)

    @staticmethod
    def suggest(word: str) -> list[str]:
        return list(_suggestions(word))

    @staticmethod
    def _suggest(word: str) -> list[str]:
        names = [*ACTIONS, *SYNONYMS]
        folded = [n for n in names if n.casefold() == word.casefold()]
        if folded:
            return [_LOOKUP[folded[0]]]
        starts = [n for n in ACTIONS if n.startswith(word + " ")]  # "Property" → "Property Change"
        close = difflib.get_close_matches(word, names, n=3, cutoff=0.6)
        return list(dict.fromkeys([*starts, *(_LOOKUP[c] for c in close)]))

    def complement(self, action: str, before: list[Complement]) -> Complement:
        tok = self.peek()
        allowed = LENIENT_PREPOSITIONS if self.lenient else PREPOSITIONS
        if not self.is_word(tok):
            if tok is not None and tok.kind == "rparen":
                raise self.error("unbalanced parenthesis: ')' without a matching '('")
            if tok is not None and tok.kind == "lparen":
                raise self.error("a (Status=...) must follow an operand", expected=_NEXT)
            raise self.error(f"expected a preposition, found {self.describe(tok)}", expected=_NEXT)
        assert tok is not None
        if tok.text not in allowed and tok.text not in KEYWORDS and self.lenient and not before:
            # Prose writes the direct object without Nil: "Identifies Data With Qualifier".
            preposition: Preposition = "Nil"
        elif tok.text not in allowed:
            origin = OLDER_PREPOSITIONS.get(tok.text)
            hint = f": {tok.text} is an {origin} preposition, not V2.2" if origin else ""
            if tok.text == "Of":
                hint += " (parse with lenient=True to accept it)"
            raise self.error(f"unknown preposition {tok.text!r}{hint}", expected=_NEXT)
        else:
            preposition = cast(Preposition, self.advance().text)
        if preposition == "Nil":
            self.check_nil(action, before, tok.column)
        term = self.phrase("operand", f"empty operand: {preposition!r} needs a term", strict_case=True)
        value = None
        if (eq := self.peek()) is not None and eq.kind == "eq":
            self.advance()
            value = self.phrase("value", "empty value after '='", strict_case=True)
        status = self.status()
        tok = self.peek()
        if tok is not None and not (tok.kind == "comma" or self.is_word(tok)):
            if tok.kind == "rparen":
                raise self.error("unbalanced parenthesis: ')' without a matching '('")
            if tok.kind == "lparen":
                raise self.error("a complement takes at most one (Status=...)")
            if tok.kind == "eq":
                raise self.error("unexpected '=': a complement has at most one value")
            raise self.error("a quoted phrase must stand alone: put the whole term or value in the quotes")
        return Complement(preposition, term, value, status)

    def check_nil(self, action: str, before: list[Complement], column: int) -> None:
        if any(c.preposition != "Nil" for c in before):
            raise self.error("the Nil complement (the direct object) must come first", column, ())
        sig = SIGNATURES.get(action)
        most = sig.max_nil if sig else 1
        if len(before) >= most:
            count = "one Nil complement" if most == 1 else f"{most} Nil complements ({action})"
            raise self.error(f"a statement has at most {count}", column, ())

    def phrase(self, what: str, empty_message: str, *, strict_case: bool = False) -> str:
        tok = self.peek()
        if tok is not None and tok.kind == "quoted":
            if tok.text == "":
                raise self.error(empty_message)
            self.advance()
            nxt = self.peek()
            if nxt is not None and nxt.kind == "word" and nxt.text not in KEYWORDS:
                raise self.error("a quoted phrase must stand alone: put the whole term or value in the quotes")
            return tok.text
        words = []
        while self.is_word(tok) and tok is not None and tok.text not in KEYWORDS:
            if strict_case and tok.text.casefold() in _FOLDED_KEYWORDS:
                # "Nil item-1 with Rights" would otherwise read as the term "item-1 with Rights".
                proper = _FOLDED_KEYWORDS[tok.text.casefold()]
                raise self.error(
                    f"{tok.text!r} inside an operand: write the keyword as {proper!r}, or quote the operand if the word belongs to it",
                    expected=(proper,),
                )
            words.append(self.advance().text)
            tok = self.peek()
        if not words:
            raise self.error(empty_message, expected=(what,))
        return " ".join(words)

    def status(self) -> Literal["Model", "Final"] | None:
        lparen = self.peek()
        if lparen is None or lparen.kind != "lparen":
            return None
        self.advance()
        expected = ("Status=Model", "Status=Final")
        tok = self.peek()
        if self.is_word(tok, "Status"):
            self.advance()
            eq = self.peek()
            if eq is None or eq.kind != "eq":
                raise self.error("bad status: expected '=' or '-' after 'Status'", expected=expected)
            self.advance()
            val = self.peek()
            if not self.is_word(val):
                raise self.error("bad status: expected Model or Final", expected=("Model", "Final"))
            assert val is not None
            value, column = val.text, val.column
        elif self.is_word(tok) and tok is not None and tok.text.startswith("Status-"):
            value, column = tok.text[len("Status-") :], tok.column + len("Status-")
        elif tok is None:
            raise self.error(
                f"unbalanced parenthesis: the '(' at column {lparen.column} is not closed", lparen.column, (")",)
            )
        else:
            raise self.error(
                f"bad status {self.describe(tok)}: expected Status=Model or Status=Final", expected=expected
            )
        if value not in ("Model", "Final"):
            raise self.error(f"bad status {value!r}: expected Model or Final", column, ("Model", "Final"))
        self.advance()
        close = self.peek()
        if close is None or close.kind != "rparen":
            raise self.error(
                f"unbalanced parenthesis: the '(' at column {lparen.column} is not closed", lparen.column, (")",)
            )
        self.advance()
        return cast(Literal["Model", "Final"], value)

    def condition(self) -> str:
        self.advance()  # "If"
        return self.phrase("event", "empty condition: 'If' needs an event")


def parse_statement(text: str, *, lenient: bool = False) -> Statement:
    """Parse a Process Action statement (or a Right: a deontic verb and a statement).

    Raises :class:`StatementError` (a ``ValueError``) with the 1-based column, plain words and hints.

    >>> parse_statement("Identifies Data With Qualifier With Rights (Status-Model)", lenient=True).action
    'Identify'
    >>> parse_statement("MM-Add Nil Avatar With Rights (Status=Draft)")
    Traceback (most recent call last):
    ...
    pgm_explore.spec.process_actions.StatementError: bad status 'Draft': expected Model or Final (column 39)
    """
    if not isinstance(text, str):
        raise TypeError(f"a statement is a str, not {type(text).__name__}")
    return _parse_cached(text, lenient)


@lru_cache(maxsize=1024)
def _suggestions(word: str) -> tuple[str, ...]:
    # Remembered: difflib takes a quarter of a millisecond, and a plan that misspells an
    # action tends to misspell it in every statement (and every statement is parsed by the
    # message check and by the pre-check of its Request and of its Response).
    return tuple(_Parser._suggest(word))


@lru_cache(maxsize=8192)
def _parse_cached(text: str, lenient: bool) -> Statement:
    # Plans repeat their statements across a transcript (the Request, its message-level
    # check, the pre-check of the Request and of its Response): a Statement is immutable,
    # so parsing each text once is enough. Errors are not cached; they are rare.
    return _Parser(text, lenient).statement()
