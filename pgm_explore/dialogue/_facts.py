"""What the transcript rules read of one message: the names of :mod:`pgm_explore._facts`.

The facts are made below this layer, where the bulk reader's helper process makes them;
the rules, the transcript checker and the command import them from here.
"""

from __future__ import annotations

from pgm_explore._facts import FACTS, Facts, entities, facts_of, item_facts, simple_time_seconds

__all__ = ["FACTS", "Facts", "entities", "facts_of", "item_facts", "simple_time_seconds"]
