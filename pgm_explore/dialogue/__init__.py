"""Layer 4: dialogues and transcripts.

A transcript is what a Basic Knowledge exchanged during one or more deliberations: PC
Prompts and the Requests and Responses of BKN-PRC, BKN-DAC and BKN-PAL, in the order they
happened. :class:`Transcript` holds one in memory; :class:`TranscriptChecker` and
:func:`check_paths` check one as a stream, :func:`iter_checked` gives its messages with what was
found at each, one at a time; :func:`corpus_files` names the transcripts of a
corpus (many transcripts, one file each).
"""

from pgm_explore.dialogue._checker import TranscriptChecker, TranscriptFinding, check_documents
from pgm_explore.dialogue._corpus import corpus_files
from pgm_explore.dialogue._transcript import Exchange, Message, Transcript, check_paths, dialogue_key, iter_checked
from pgm_explore.spec import simple_time_seconds

__all__ = [
    "Exchange",
    "Message",
    "Transcript",
    "TranscriptChecker",
    "TranscriptFinding",
    "check_documents",
    "check_paths",
    "corpus_files",
    "dialogue_key",
    "iter_checked",
    "simple_time_seconds",
]

for _name in __all__:
    globals()[_name].__module__ = __name__
