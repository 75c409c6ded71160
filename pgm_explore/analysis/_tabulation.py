"""A table made as a transcript's messages go by: the one way every table is built.

Each table of :mod:`._tables` and :mod:`._feasibility` is a :class:`Tabulation`: told each message
in order (:meth:`~Tabulation.add`, with the checker's pre-check of a BKN-DAC Request) and every
finding (:meth:`~Tabulation.note`), it keeps only what its rows need, and makes its frame at the end.
A :class:`~pgm_explore.dialogue.Transcript` in memory is told its messages (:meth:`~Tabulation.over`);
a transcript read as a stream (:func:`~pgm_explore.dialogue.iter_checked`, what ``pgm-explore table``
reads) is told each message as it is read and checked (:meth:`~Tabulation.streamed`), and no message
is kept: a table of a log of millions of messages takes the memory of its rows, and a table of counts
(``pastatus``, ``outcomes``) not much more than the Requests' identifiers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pgm_explore.dialogue import Message, Transcript, TranscriptFinding
from pgm_explore.dialogue._transcript import Pairing

if TYPE_CHECKING:
    import pandas as pd

    from pgm_explore.dialogue._checker import Found
    from pgm_explore.dialogue.precheck import Prediction

__all__ = ["CLOCK", "Pairs", "Tabulation"]

CLOCK = frozenset({"QueryTime", "PCPromptTime"})
"""The members :attr:`Message.clock <pgm_explore.dialogue.Message.clock>` reads."""


class Tabulation(ABC):
    """One table of one transcript, made as its messages go by (see the module)."""

    members: ClassVar[frozenset[str]] = frozenset()
    """The members of a message's document it reads (``get``, ``dialog``, ``clock``): a transcript
    read on the bulk path makes no others of a message into plain values
    (:func:`~pgm_explore.dialogue._stream.iter_checked_paths`)."""

    def add(self, message: Message, predictions: list[Prediction] | None) -> None:  # noqa: B027 - by default, nothing
        """The next message of the transcript; ``predictions``: the checker's HEURISTIC pre-check
        of its steps (:meth:`Transcript.predicted <pgm_explore.dialogue.Transcript.predicted>`)."""

    def note(self, findings: Sequence[TranscriptFinding]) -> None:  # noqa: B027 - by default, nothing
        """More findings of the transcript, in the order found (any time before :meth:`frame`)."""

    @abstractmethod
    def frame(self) -> pd.DataFrame:
        """The table of the messages and findings told so far."""

    def over(self, transcript: Transcript) -> pd.DataFrame:
        """The table of a transcript in memory."""
        predictions = transcript.predictions
        for message in transcript.messages:
            self.add(message, predictions.get(message.position))
        self.note(transcript.findings)
        return self.frame()

    def streamed(self, checked: Iterable[tuple[Message | None, Found]]) -> pd.DataFrame:
        """The table of a transcript read as a stream, as :func:`~pgm_explore.dialogue.iter_checked`
        gives it: each message is let go once it is told."""
        for message, found in checked:
            if found:
                self.note(found.findings)
            if message is not None:
                self.add(message, found.predictions)
        return self.frame()


class Pairs(Pairing, Tabulation):
    """A table of exchanges: each Request with the first later Response that names it, paired as
    :class:`~pgm_explore.dialogue._transcript.Pairing` pairs them (as :meth:`Transcript.exchanges
    <pgm_explore.dialogue.Transcript.exchanges>` lists them), keeping of each what the table's rows
    need (:meth:`request`, :meth:`response`) and never the message, which a stream lets go."""

    members = frozenset({"DialogID", "QueryID", "RequestID"})

    def add(self, message: Message, predictions: list[Prediction] | None) -> None:
        self.pair(message)

    @abstractmethod
    def request(self, m: Message) -> Any:
        """What is kept of a Request that opens an exchange."""

    @abstractmethod
    def response(self, m: Message, request: Any) -> Any:
        """What is kept of the Response that answers the Request kept as ``request`` (never None)."""
