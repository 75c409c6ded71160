"""What the three partner servers share: reading their files, and answering a Request.

:class:`Partner` does the part of every answer that the spec fixes (the envelope: Header, Mode,
identities, ``RequestID``, ``TurnIndex``, ``QueryTime``, ``DataXMData``), validates what comes in and
what goes out, and keeps per-DialogID turn state; a subclass only fills in the payload.

How a bad Request is answered (docs/mcp.md, "Bad Requests"):

* a Request that names itself (string ``QueryID`` and ``DialogID``, non-negative integer
  ``TurnIndex``, this partner's ``Header``, ``Mode`` "RQ") gets a conforming Response with
  ``Outcome`` ``not_answered`` and the findings as plain text in ``DescrMetadata``: DECISIONS D16
  says a non-conforming Request still opens its exchange, so the exchange is closed the normal way;
* any other document cannot be named by a ``RequestID`` (or would make a second Response to one
  QueryID, D16), so no Response could conform: the tool call fails (:class:`RequestRejected`, an
  MCP tool error whose text carries the findings as JSON) and no PGM message is produced.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import msgspec

from pgm_explore.dialogue import documents
from pgm_explore.errors import PgmExploreError
from pgm_explore.spec import HEADERS, data_type
from pgm_explore.validation import validate
from pgm_explore.validation.findings import RULES, Finding, RuleCode, shown

__all__ = [
    "MAX_DIALOGUES",
    "MAX_DIALOGUE_BYTES",
    "MAX_REQUEST_BYTES",
    "MAX_RESPONSE_BYTES",
    "MAX_SESSION_BYTES",
    "MAX_STATE_BYTES",
    "MAX_TURNS",
    "Commit",
    "LimitReached",
    "Limits",
    "Partner",
    "PartnerDialogue",
    "RequestRejected",
    "data_folder",
    "load_json",
]

_DESCR_LIMIT = 2048  # DescrMetadata is plain text of at most 2048 characters
_ABSENT = object()


def data_folder() -> Traversable:
    """The folder of the partners' default files (``domains/``, ``personalities/``), inside the package:
    found from a wheel as from a checkout, with no environment variable."""
    return resources.files(__package__) / "data"


def load_json(source: str | os.PathLike[str] | Traversable | Mapping[str, Any]) -> dict[str, Any]:
    """A scenario, domain or profile: given as a mapping (copied) or as the path of a JSON file."""
    if isinstance(source, Mapping):
        return json.loads(json.dumps(source))  # a deep copy that also proves it is JSON
    if isinstance(source, Traversable) and not isinstance(source, os.PathLike):
        loaded = json.loads(source.read_text(encoding="utf-8"))
    else:
        with open(source, encoding="utf-8") as handle:
            loaded = json.load(handle)
    if not isinstance(loaded, dict):
        raise ValueError(f"{source}: expected a JSON object")
    return loaded


class RequestRejected(PgmExploreError):
    """A document no Response can answer; ``findings`` say why (sent back as an MCP tool error)."""

    def __init__(self, findings: list[dict[str, Any]]) -> None:
        self.findings = findings
        super().__init__(json.dumps({"rejected": True, "findings": findings}, ensure_ascii=False))


class LimitReached(PgmExploreError):
    """Something a partner would hold is over one of its byte limits (:class:`Limits`); the text says which."""


MAX_REQUEST_BYTES = 256 * 1024
"""A Request (with the tool's other arguments) larger than this, as UTF-8 JSON, is refused (docs/mcp.md)."""
MAX_DIALOGUES = 1000
"""Dialogues a partner keeps; opening one more forgets the one idle longest."""
MAX_TURNS = 1000
"""Exchanges of one dialogue; a Request beyond them is answered ``not_answered``."""
MAX_RESPONSES = 1000
"""Responses kept in :attr:`Partner.responses` (the latest)."""
MAX_KEPT_RESPONSE_BYTES = 4 * 1024 * 1024
"""...and at most this many bytes of them (JSON), the oldest dropped first."""

# What a partner holds, in bytes: the defaults of :class:`Limits` (docs/mcp.md, "Dialogues, sessions
# and limits"). A Request that would take a dialogue, a session or the partner over its limit, or
# whose Response would be larger than MAX_RESPONSE_BYTES, is answered not_answered, saying which
# limit, and nothing of it is kept.
MAX_DIALOGUE_BYTES = 512 * 1024
"""What one dialogue may hold: its QueryIDs and turns, its commitments (IDs and Statements), its PC Prompt."""
MAX_SESSION_BYTES = 2 * 1024 * 1024
"""What the dialogues of one session (an MCP session, else a PGM SessionID) may hold together."""
MAX_STATE_BYTES = 64 * 1024 * 1024
"""What the whole partner may hold (``pgm-explore``'s ``serve --max-state-bytes``)."""
MAX_RESPONSE_BYTES = 256 * 1024
"""The largest Response a partner sends, as UTF-8 JSON (CommitmentStatus lists every commitment of
the dialogue, so a dialogue of very many commitments reaches it)."""

_ITEM = 64
"""Bytes counted for each thing kept beside its text: roughly what CPython spends on a small object
and its slot in a dict or set, so that many tiny items are not free."""


@dataclass(frozen=True)
class Limits:
    """The limits of one partner (defaults: the MAX_* constants of this module, docs/mcp.md)."""

    dialogue_bytes: int = MAX_DIALOGUE_BYTES
    session_bytes: int = MAX_SESSION_BYTES
    state_bytes: int = MAX_STATE_BYTES
    response_bytes: int = MAX_RESPONSE_BYTES
    dialogues: int = MAX_DIALOGUES
    """Dialogues kept (PC Prompts too); one more forgets the one idle longest."""
    turns: int = MAX_TURNS
    """Exchanges of one dialogue; a Request beyond them is answered ``not_answered``."""

    def over(self, held: tuple[int, int, int], growth: int, dialog_id: str) -> str | None:
        """Which limit a change of ``growth`` bytes breaks, in plain words, else None.

        ``held`` is what the dialogue, its session and the partner hold now (:meth:`Partner.held`).

        >>> Limits(dialogue_bytes=100).over((90, 90, 90), 20, "d-1")[:47]
        'dialogue d-1 would hold 110 bytes, over the 100'
        >>> Limits().over((90, 90, 90), 20, "d-1") is None
        True
        """
        dialogue, session, state = held
        name = dialog_id if len(dialog_id) <= 80 else dialog_id[:79] + "…"  # an ID may be huge
        checks = (
            (dialogue, self.dialogue_bytes, f"dialogue {name}", "a dialogue", "MAX_DIALOGUE_BYTES"),
            (session, self.session_bytes, "this session's dialogues", "one session", "MAX_SESSION_BYTES"),
            (state, self.state_bytes, "this partner", "the whole partner", "MAX_STATE_BYTES"),
        )
        advice = {
            "a dialogue": "Open a new dialogue.",
            "one session": "End this session (its dialogues end with it), or use a new one.",
            "the whole partner": "Try later: the dialogues of sessions that end or stay idle are released.",
        }
        for now, limit, who, scope, constant in checks:
            if growth > 0 and now + growth > limit:
                return (
                    f"{who} would hold {now + growth} bytes, over the {limit} bytes {scope} may hold "
                    f"(the partner's limit {constant}, docs/mcp.md); nothing of this Request was kept. {advice[scope]}"
                )
        return None


@dataclass
class PartnerDialogue:
    """What a partner holds of one dialogue (one DialogID): what :meth:`Partner.payload` is given.

    A partner's own state for the dialogue goes into :attr:`state`; ``payload`` is given a copy,
    which becomes the dialogue's state only when the answer is committed (see :class:`Partner`).
    """

    identity: dict[str, str]
    """The session identities of the Request that opened it (``dialogue.documents.SESSION``)."""
    owner: str = ""
    """Who opened the dialogue: ``mcp:<session id>`` where the transport has one, else ``pgm:<SessionID>``."""
    queries: set[str] = field(default_factory=set)
    turns: set[int] = field(default_factory=set)
    state: dict[str, Any] = field(default_factory=dict)
    """What a partner keeps for the dialogue beyond its turns (Domain Access: the commitments)."""
    size: int = 0
    """Bytes the dialogue holds (:func:`_bytes_of`), as of its last committed answer."""


_Dialogue = PartnerDialogue  # its name before 0.2.0, kept for partners written against it

Commit = Callable[[], None]


class Partner:
    """Base of the three partners: ``answer(message)`` returns the Response document.

    An answer is made in two steps, :meth:`prepare` (works on a copy of the dialogue's state and
    returns the Response with a ``commit`` function) and ``commit()`` (makes the copy the state): a
    Request whose answer fails, is refused or is cancelled before ``commit`` changes nothing, so its
    QueryID and TurnIndex can be sent again.
    """

    type_name: str = ""

    def __init__(self) -> None:
        self.dialogues: dict[str, PartnerDialogue] = {}
        """DialogID -> its state, the dialogue used longest ago first (at most ``limits.dialogues``)."""
        self.responses: deque[dict[str, Any]] = deque(maxlen=MAX_RESPONSES)
        """The latest Responses sent, in order (tests check that each conforms)."""
        self._response_sizes: deque[int] = deque()
        self._kept_bytes = 0
        self.limits = Limits()
        """The limits this partner keeps to (settable: ``partner.limits = Limits(...)``)."""
        self.idle_timeout: float | None = None
        """Seconds after which the dialogues of a session without an MCP session (a PGM SessionID:
        stdio, in-process, the stateless protocol) that kept nothing since are forgotten; None: never.
        ``pgm-explore``'s HTTP server sets it to ``--idle-timeout``."""
        self._seen: OrderedDict[str, float] = OrderedDict()

    def holdings(self) -> Iterator[tuple[str, str, int]]:
        """(DialogID, owner, bytes) of everything the partner holds for its dialogues."""
        for dialog_id, dialogue in self.dialogues.items():
            yield dialog_id, dialogue.owner, dialogue.size

    def held(self, owner: str | None = None, dialog_id: str | None = None) -> tuple[int, int, int]:
        """Bytes held now by dialogue ``dialog_id``, by ``owner``'s dialogues, and by the whole partner."""
        dialogue = session = state = 0
        for held_id, held_owner, size in self.holdings():
            state += size
            session += size if held_owner == owner else 0
            dialogue += size if held_id == dialog_id else 0
        return dialogue, session, state

    def answer(self, message: Any, owner: str | None = None, **extra: Any) -> dict[str, Any]:
        response, commit = self.prepare(message, owner, **extra)
        commit()
        return response

    def opened_by(self, dialog_id: str) -> str | None:
        """The owner of ``dialog_id`` (None: no such dialogue yet)."""
        dialogue = self.dialogues.get(dialog_id)
        return dialogue.owner if dialogue is not None else None

    def forget(self, owner: str) -> None:
        """Drop every dialogue ``owner`` opened: its MCP session ended, or it stayed idle."""
        for dialog_id in [d for d, dialogue in self.dialogues.items() if dialogue.owner == owner]:
            del self.dialogues[dialog_id]
        self._seen.pop(owner, None)

    def touch(self, owner: str) -> None:
        """Note that ``owner`` kept something now. Only owners without an MCP session (``pgm:`` a
        SessionID) are noted: an MCP session's dialogues end with it, when the SDK ends it."""
        if not owner.startswith("pgm:"):
            return
        self._seen[owner] = time.monotonic()
        self._seen.move_to_end(owner)
        while len(self._seen) > 2 * self.limits.dialogues:  # more owners than dialogues: the idlest go
            self.forget(next(iter(self._seen)))

    def expire(self) -> None:
        """Forget the dialogues of owners idle longer than :attr:`idle_timeout` (called as a Request
        or a PC Prompt read comes in)."""
        if self.idle_timeout is None:
            return
        stale = time.monotonic() - self.idle_timeout
        while self._seen and next(iter(self._seen.values())) <= stale:
            self.forget(next(iter(self._seen)))

    def _keep(self, dialog_id: str, dialogue: PartnerDialogue) -> None:
        self.dialogues.pop(dialog_id, None)
        self.dialogues[dialog_id] = dialogue  # now the most recently used
        while len(self.dialogues) > self.limits.dialogues:
            del self.dialogues[next(iter(self.dialogues))]

    def prepare(self, message: Any, owner: str | None = None, **extra: Any) -> tuple[dict[str, Any], Commit]:
        """The Response to ``message`` and the function that records the exchange; raises RequestRejected.

        ``owner`` is the MCP session the Request came in (None where the transport has none: then the
        dialogue belongs to the PGM SessionID of its first Request).
        """
        self.expire()
        size = _size(message, extra)
        if size > MAX_REQUEST_BYTES:
            why = f"the Request is {size} bytes of JSON; this partner takes at most {MAX_REQUEST_BYTES}"
            spec = RULES["request-too-large"].spec
            raise RequestRejected([{"rule": "request-too-large", "path": "$", "message": why, "spec": spec}])
        report = validate(message) if isinstance(message, dict) else None
        findings = [f.to_dict() for f in report.findings if f.conformance] if report is not None else []
        unusable = unusable_findings(self.type_name, message)
        if unusable:
            # The Request's own findings only where it is one of this type: a Response or another
            # type's message is judged by another table, whose findings would say nothing useful.
            named_at = {f["path"] for f in unusable}
            same_kind = not any(f["path"] in ("$", "$.Header", "$.Mode") for f in unusable)
            raise RequestRejected([*unusable, *(f for f in findings if same_kind and f["path"] not in named_at)])
        self.check_extra(message, **extra)
        dialog_id = message["DialogID"]
        known = self.dialogues.get(dialog_id)
        if known is not None and message["QueryID"] in known.queries:
            # A second Response naming this QueryID would break D16; the first one stands.
            why = f"QueryID {message['QueryID']} was already answered; a second Response would name it again"
            raise RequestRejected([_finding("query-reused", ("QueryID",), why)])
        identity = {key: message[key] for key in documents.SESSION if isinstance(message.get(key), str)}
        owner = owner or f"pgm:{identity.get('SessionID', '')}"
        opener = self.opened_by(dialog_id)
        if opener is not None and opener != owner:
            # Another session's dialogue: answered, and nothing of it is read or changed.
            if len(identity) < len(documents.SESSION):
                raise RequestRejected(_identity_missing(self.type_name, identity))
            why = f"dialogue {dialog_id} belongs to another session; this Request cannot take part in it"
            payload: dict[str, Any] = {
                "Outcome": "not_answered",
                "DescrMetadata": f"[dialog-foreign] $.DialogID: {why}.",
            }
            return self._respond(message, PartnerDialogue(identity, owner), payload), _nothing
        if known is None:
            if len(identity) < len(documents.SESSION):
                # Without them no Response can conform, and no earlier turn of the dialogue has them.
                raise RequestRejected(_identity_missing(self.type_name, identity))
            dialogue = PartnerDialogue(identity, owner)
        else:
            dialogue = copy.deepcopy(known)
        if len(dialogue.queries) >= self.limits.turns:
            payload = {
                "Outcome": "not_answered",
                "DescrMetadata": f"Dialogue {dialog_id} has had {self.limits.turns} turns.",
            }
            return self._respond(message, dialogue, payload), _nothing
        dialogue.queries.add(message["QueryID"])
        problems = [f"{f['path']}: {f['message']}" for f in findings]
        if message["TurnIndex"] in dialogue.turns:
            problems.append(f"$.TurnIndex: turn {message['TurnIndex']} of dialogue {dialog_id} was taken")
        dialogue.turns.add(message["TurnIndex"])
        if problems:
            payload = {
                "Outcome": "not_answered",
                "DescrMetadata": _clip("The Request does not conform, so it is not answered: " + "; ".join(problems)),
            }
        else:
            payload = self.payload(message, dialogue, **extra)
        dialogue.size = _bytes_of(dialog_id, dialogue)
        over = self.limits.over(self.held(owner, dialog_id), dialogue.size - (known.size if known else 0), dialog_id)
        # The payload is measured first: a Response far over the limit is never built and checked.
        fits = over is None and _json_bytes(payload) <= self.limits.response_bytes
        response = self._respond(message, dialogue, payload) if fits else None
        size = _json_bytes(response if response is not None else payload)
        if over is None and size > self.limits.response_bytes:
            over = (
                f"the Response would be at least {size} bytes of JSON, over the {self.limits.response_bytes} bytes a "
                f"Response may have (the partner's limit MAX_RESPONSE_BYTES, docs/mcp.md); nothing of this "
                "Request was kept. Open a new dialogue."
            )
        if over is not None or response is None:
            payload = {"Outcome": "not_answered", "DescrMetadata": _clip(f"Not answered: {over}")}
            return self._respond(message, known or PartnerDialogue(identity, owner), payload), _nothing

        def commit() -> None:
            self._keep(dialog_id, dialogue)
            self._remember(response, size)
            self.touch(owner)

        return response, commit

    def _remember(self, response: dict[str, Any], size: int) -> None:
        if len(self.responses) == self.responses.maxlen:
            self._kept_bytes -= self._response_sizes.popleft()  # the deque drops its oldest on append
        self.responses.append(response)
        self._response_sizes.append(size)
        self._kept_bytes += size
        while self._kept_bytes > MAX_KEPT_RESPONSE_BYTES and len(self.responses) > 1:
            self.responses.popleft()
            self._kept_bytes -= self._response_sizes.popleft()

    def check_extra(self, message: dict[str, Any], **extra: Any) -> None:
        """Refuse (RequestRejected) tool arguments beside the message that cannot be used (subclasses)."""

    def payload(self, message: dict[str, Any], dialogue: PartnerDialogue, **extra: Any) -> dict[str, Any]:
        """``Outcome`` and the type's own fields for a conforming Request (subclasses); may change
        ``dialogue.state``, a copy that becomes the dialogue's state when the answer is committed."""
        raise NotImplementedError

    def _respond(self, message: dict[str, Any], dialogue: PartnerDialogue, payload: dict[str, Any]) -> dict[str, Any]:
        # The identities the Request lacks as text are the dialogue's, so that the Response conforms.
        response = documents.response(message, payload, identity=dialogue.identity)
        report = validate(response)
        if not report.conforms:  # a bug of this server, never the client's fault
            raise RuntimeError(f"{self.type_name} server built a non-conforming Response:\n{report}")
        return response


_NAMED = "FR Correlation: a Response names its Request by its QueryID (RequestID), in its dialogue and turn"


def _finding(
    rule: RuleCode, path: tuple[str, ...], message: str, spec: str | None = None, data_type: str | None = None
) -> dict[str, Any]:
    return Finding.of(rule, path, message, spec, data_type=data_type).to_dict()


def unusable_findings(type_name: str, message: Any) -> list[dict[str, Any]]:
    """Why ``message`` is no Request of ``type_name`` that a Response could name, in plain words
    (``unusable-request`` findings; empty: it is one). The wrong Header or Mode is named first.

    >>> [f["message"] for f in unusable_findings("BKN-DAC", {"Header": "PGM-KDA-V1.0", "Mode": "RS"})]
    ['Mode is RS: a Request must have Mode RQ.']
    >>> unusable_findings("BKN-DAC", {"Header": "PGM-KPA-V1.0", "Mode": "RQ"})[0]["message"]
    'Header is PGM-KPA-V1.0, the Header of BKN-PAL: a BKN-DAC Request has Header PGM-KDA-V1.0.'
    >>> unusable_findings("BKN-PAL", "hello")[0]["message"]
    'The message is the string "hello", not a JSON object: a BKN-PAL Request is an object.'
    """
    dt = data_type(type_name)
    if not isinstance(message, dict):
        why = f"The message is {shown(message)}, not a JSON object: a {type_name} Request is an object."
        # No field to point at: the clause is the type's Syntax.
        return [_finding("unusable-request", (), why, f"{type_name} Syntax: the top level is a JSON object")]
    found = []
    header = message.get("Header", _ABSENT)
    if header != dt.header:
        said = "missing" if header is _ABSENT else shown(header).removeprefix("the string ").strip('"')
        other = HEADERS.get(header) if isinstance(header, str) else None
        if other is not None:
            said += f", the Header of {other.name}"
        why = f"Header is {said}: a {type_name} Request has Header {dt.header}."
        found.append(_finding("unusable-request", ("Header",), why, data_type=type_name))
    mode = message.get("Mode", _ABSENT)
    if mode != "RQ":
        said = "missing" if mode is _ABSENT else shown(mode).removeprefix("the string ").strip('"')
        why = f"Mode is {said}: a Request must have Mode RQ."
        found.append(_finding("unusable-request", ("Mode",), why, data_type=type_name))
    if found:
        return found
    for key in ("QueryID", "DialogID"):
        value = message.get(key, _ABSENT)
        if not isinstance(value, str):
            said = "missing" if value is _ABSENT else f"{shown(value)}, not a string"
            why = f"{key} is {said}: no Response could name this Request."
            # What names the Request: Functional Requirement Correlation rather than the field's row.
            found.append(_finding("unusable-request", (key,), why, _NAMED))
    turn = message.get("TurnIndex", _ABSENT)
    if type(turn) is not int or turn < 0:
        said = "missing" if turn is _ABSENT else f"{shown(turn)}, not an integer from 0"
        why = f"TurnIndex is {said}: no Response could name this Request's turn."
        found.append(_finding("unusable-request", ("TurnIndex",), why, _NAMED))
    return found


def _identity_missing(type_name: str, identity: Mapping[str, str]) -> list[dict[str, Any]]:
    missing = [key for key in documents.SESSION if key not in identity]
    why = (
        f"{', '.join(missing)} missing (or not a string), and no earlier turn of the dialogue gives "
        f"{'it' if len(missing) == 1 else 'them'}: a Response could not carry the session identities."
    )
    return [_finding("unusable-request", (missing[0],), why, data_type=type_name)]


def _nothing() -> None:
    """The commit of an answer that changes nothing."""


_state_encoder = msgspec.json.Encoder(enc_hook=repr)  # msgspec: the ledger is a Struct; anything else by its repr


def _bytes_of(dialog_id: str, dialogue: PartnerDialogue) -> int:
    """What a dialogue holds, in bytes: its texts as UTF-8, and _ITEM for each thing kept (in its
    state, each JSON string: a commitment is an ID, a Statement and a status)."""
    texts = [dialog_id, dialogue.owner, *dialogue.identity.values(), *dialogue.queries]
    state = _state_encoder.encode(dialogue.state)
    kept = len(texts) + len(dialogue.turns) + state.count(b'"') // 2
    return _ITEM * kept + sum(len(t.encode("utf-8", "replace")) for t in texts) + len(state)


def _json_bytes(document: Any) -> int:
    return len(json.dumps(document, ensure_ascii=False).encode("utf-8", "replace"))


def _size(message: Any, extra: Mapping[str, Any]) -> int:
    try:
        return len(json.dumps([message, extra], ensure_ascii=False, default=str).encode("utf-8", "replace"))
    except (ValueError, RecursionError):  # a circular or too deep structure: not JSON at all
        return MAX_REQUEST_BYTES + 1


def _clip(text: str) -> str:
    return text if len(text) <= _DESCR_LIMIT else text[: _DESCR_LIMIT - 1] + "…"
