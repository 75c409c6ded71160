"""The three reference partners of Basic Knowledge, as plain classes (no MCP here).

Each answers one Request at a time from a JSON file: :class:`PromptCreation` from a scenario,
:class:`DomainAccess` from a domain knowledge file, :class:`PersonalityAlignment` from a personality
profile. ``servers.py`` puts each behind an MCP tool; the classes stay usable (and testable) without
a transport.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pgm_explore.dialogue.commitments import CommitmentLedger
from pgm_explore.dialogue.precheck import predict
from pgm_explore.mcp._common import LimitReached, Partner, PartnerDialogue, RequestRejected, data_folder, load_json
from pgm_explore.mcp._schemas import action_context_findings
from pgm_explore.models import data_exchange_metadata
from pgm_explore.spec import overall_of, simple_time_now

__all__ = ["DomainAccess", "PersonalityAlignment", "PromptCreation"]

Source = str | os.PathLike[str] | Mapping[str, Any]

# BKN-PRC Kind -> the Representation field the scenario's PC Prompt supplies for it (O2).
_PRC_FIELDS = {
    "referents": "ResolvedReferents",
    "intent": "Intent",
    "propositions": "Propositions",
    "goal_constraints": "GoalConstraints",
    "action_context": "ActionContext",
}


_TRANSACTION = re.compile(r"Transaction=([^\s,;]+)")
_WORD = re.compile(r"[a-z0-9]{4,}")


_PROMPT_BYTES = 1024
"""What a PC Prompt holds beside its DialogID and owner: its own dict and the fields made for its
dialogue (PCPromptID, PCPromptTime, DataXMData); the scenario's fields are shared, not copied."""


def _prompt_bytes(dialog_id: str, owner: str) -> int:
    # The DialogID is kept twice (the key and the document's field), the owner once.
    return _PROMPT_BYTES + 2 * len(dialog_id.encode("utf-8", "replace")) + len(owner)


class PromptCreation(Partner):
    """Prompt Creation: assembles the PC Prompt that opens a dialogue and answers BKN-PRC Requests.

    ``scenario`` holds ``PCPrompt`` (a PC Prompt without PCPromptID, PCPromptTime, DialogID and
    DataXMData, which are made per dialogue) and ``Refinements`` (Kind -> Representation).
    """

    type_name = "BKN-PRC"

    def __init__(self, scenario: Source | None = None) -> None:
        super().__init__()
        self.scenario = load_json(
            scenario if scenario is not None else data_folder() / "domains" / "market-scenario.json"
        )
        self.prompts: dict[str, dict[str, Any]] = {}
        """The PC Prompt of each dialogue opened so far, by DialogID."""
        self.owners: dict[str, str] = {}
        """Who opened each dialogue (see :meth:`pc_prompt`)."""

    def pc_prompt(self, dialog_id: str, owner: str | None = None) -> dict[str, Any]:
        """The PC Prompt opening ``dialog_id``: made on first use, the same document afterwards (D3).

        The dialogue belongs to ``owner`` (the MCP session that read it first), else to the PC Prompt's
        SessionID; at most ``limits.dialogues`` are kept, the one read longest ago forgotten first.
        """
        self.expire()
        if dialog_id not in self.prompts:
            owner = owner or f"pgm:{self.scenario['PCPrompt'].get('SessionID', '')}"
            why = self.limits.over(self.held(owner, dialog_id), _prompt_bytes(dialog_id, owner), dialog_id)
            if why is not None:
                raise LimitReached(f"No PC Prompt: {why}")
            prompt_id = f"pcp-{uuid.uuid4().hex[:12]}"
            document = dict(self.scenario["PCPrompt"])
            document.update(
                PCPromptID=prompt_id,
                PCPromptTime=simple_time_now(time_id=f"st-{prompt_id}"),
                DialogID=dialog_id,
                DataXMData=data_exchange_metadata("PC Prompt", None, prompt_id),
            )
            self.owners[dialog_id] = owner
            while len(self.prompts) >= self.limits.dialogues:
                oldest = next(iter(self.prompts))
                del self.prompts[oldest], self.owners[oldest]
            self.prompts[dialog_id] = document
        if owner is None or owner == self.owners[dialog_id]:
            self.touch(self.owners[dialog_id])
        return self.prompts[dialog_id]

    def opened_by(self, dialog_id: str) -> str | None:
        return self.owners.get(dialog_id) or super().opened_by(dialog_id)

    def holdings(self) -> Iterator[tuple[str, str, int]]:
        yield from super().holdings()
        for dialog_id, owner in self.owners.items():
            yield dialog_id, owner, _prompt_bytes(dialog_id, owner)

    def forget(self, owner: str) -> None:
        super().forget(owner)
        for dialog_id in [d for d, o in self.owners.items() if o == owner]:
            del self.prompts[dialog_id], self.owners[dialog_id]

    def payload(self, message: dict[str, Any], dialogue: PartnerDialogue, **extra: Any) -> dict[str, Any]:
        prompt = self.prompts.get(message["DialogID"])
        if prompt is None:  # D1: BKN-PRC lives in a dialogue a PC Prompt opened
            return {"Outcome": "not_answered", "DescrMetadata": f"No PC Prompt opened dialogue {message['DialogID']}."}
        kind = message["Kind"]
        question = (message.get("Question") or "").lower()
        refined = dict(self.scenario.get("Refinements", {}).get(kind, {}))
        keywords = refined.pop("Keywords", None)
        if keywords is not None and not any(word.lower() in question for word in keywords):
            refined = {}  # the scenario's refinement answers another question: the PC Prompt's own view
        wanted = _PRC_FIELDS.get(kind)
        if wanted and wanted not in refined and wanted in prompt:
            refined[wanted] = prompt[wanted]  # nothing new: the PC Prompt's own view
        if kind == "referents":
            referents = refined.get("ResolvedReferents", [])
            if message.get("EntityIDs"):
                ids = set(message["EntityIDs"])
                referents = [r for r in referents if r.get("EntityID") in ids]
            elif question:
                # The referents the Question is about: those sharing a word with it.
                words = set(_WORD.findall(question))
                referents = [r for r in referents if words & set(_WORD.findall(r.get("Expression", "").lower()))]
            refined["ResolvedReferents"] = referents
        if not refined or (wanted and not refined.get(wanted)):
            about = f" on {message['Question']!r}" if question else ""
            return {"Outcome": "not_answered", "DescrMetadata": f"The scenario has nothing on {kind}{about}."}
        return {"Outcome": "answered", "Representation": refined}


class DomainAccess(Partner):
    """Domain Access: domain knowledge, feasibility of Process Actions, and the dialogue's commitments.

    Feasibility combines the heuristic pre-check (:func:`~pgm_explore.dialogue.precheck.predict`) under
    the ActionContext Basic Knowledge passes beside the Request, with the domain's own facts: its
    M-Locations, its Rules, the IDs it knows, prices and who owns what.
    """

    type_name = "BKN-DAC"

    def __init__(self, domain: Source | None = None) -> None:
        super().__init__()
        self.domain = load_json(domain if domain is not None else data_folder() / "domains" / "market.json")
        self.entities = {e["EntityID"]: e for e in self.domain.get("Entities", [])}
        self.locations = [m["MLocationID"] for m in self.domain.get("MLocations", [])]

    def check_extra(self, message: dict[str, Any], action_context: Any = None, **extra: Any) -> None:
        # Checked before anything is recorded: the corrected retry, same QueryID, is served.
        if action_context is not None:
            findings = action_context_findings(action_context)
            if findings:
                raise RequestRejected(findings)

    def payload(
        self,
        message: dict[str, Any],
        dialogue: PartnerDialogue,
        action_context: Mapping[str, Any] | None = None,
        **extra: Any,
    ) -> dict:
        kind = message["Kind"]
        held: CommitmentLedger = dialogue.state.setdefault("commitments", CommitmentLedger())
        result: dict[str, Any]
        if kind == "feasibility":
            result = self._feasibility(message, action_context)
        elif kind == "commitment":
            result = self._commitments(message, held)
        else:
            result = self._knowledge(kind, message)
        # Commitments may ride on any Kind (C5 allows it); they are always retained as asked.
        if kind != "commitment" and (message.get("Commitments") or message.get("ReleasedCommitmentIDs")):
            result.update({k: v for k, v in self._commitments(message, held).items() if k == "CommitmentStatus"})
        if result.get("Outcome") != "not_answered":
            result.setdefault("SourcesUsed", list(self.domain.get("Sources", [])))
        return result

    # -- domain knowledge -------------------------------------------------------------------------

    def _ground(self, term: Any) -> set[str]:
        """The object classes a Term names: by its Class, or its Text among a class's Terms."""
        if not isinstance(term, Mapping):
            return set()
        text = str(term.get("Text", "")).lower().strip()
        found = set()
        for oc in self.domain.get("ObjectClasses", []):
            names = [t.lower() for t in oc.get("Terms", [])] + [oc["Label"].lower()]
            if term.get("Class") == oc["Class"] or (text and any(text == t or text in t for t in names)):
                found.add(oc["Class"])
        return found

    def _about(self, message: dict[str, Any]) -> tuple[set[str] | None, set[str], list[str]]:
        """(the entities and M-Locations the Request is about, None: the whole domain; the object
        classes its Terms name; the Terms the domain does not know)."""
        named = bool(message.get("EntityIDs") or message.get("Terms") or (message.get("Space") or {}).get("MLocation"))
        ids = set(message.get("EntityIDs") or ())
        ids.update((message.get("Space") or {}).get("MLocation") or ())
        classes: set[str] = set()
        unknown_terms = []
        for term in message.get("Terms") or ():
            grounded = self._ground(term)
            if not grounded:
                unknown_terms.append(str(term.get("Text", "")) if isinstance(term, Mapping) else str(term))
            classes |= grounded
            ids.update(e for e, entity in self.entities.items() if entity["Class"] in grounded)
        return (ids if named else None), classes, unknown_terms

    def _knowledge(self, kind: str, message: dict[str, Any]) -> dict[str, Any]:
        about, classes, unknown_terms = self._about(message)
        unknown = sorted(i for i in (about or ()) if i not in self.entities and i not in self.locations)
        unknown += [f"'{t}'" for t in unknown_terms]
        if about is not None and not classes and not (about - set(unknown)):
            # Nothing the Request names is in the domain: say so, rather than answer about everything.
            return {"Outcome": "not_answered", "DescrMetadata": f"Not in the domain: {', '.join(unknown)}."}

        def concerns(item: Mapping[str, Any]) -> bool:
            targets = item.get("About", [])
            return about is None or not targets or bool(about.intersection(targets))

        answer: dict[str, Any] = {}
        if kind == "semantic_grounding":
            classes |= {self.entities[i]["Class"] for i in about or self.entities if i in self.entities}
            answer["ObjectClasses"] = [
                {"Class": oc["Class"], "Label": oc["Label"]}
                for oc in self.domain.get("ObjectClasses", [])
                if oc["Class"] in classes
            ]
            answer["Relations"] = [
                r for r in self.domain.get("Relations", []) if about is None or {r["Subject"], r["Object"]} & about
            ]
        elif kind == "affordances":
            answer["Affordances"] = [
                {"EntityID": e, "Class": entity["Class"], "Action": action}
                for e, entity in self.entities.items()
                if about is None or e in about
                for action in entity.get("Affordances", [])
            ]
        elif kind == "constraints":
            answer["Constraints"] = [c["Text"] for c in self.domain.get("Constraints", []) if concerns(c)]
        elif kind == "behavioural_expectations":
            answer["BehaviouralExpectations"] = [
                b["Text"] for b in self.domain.get("BehaviouralExpectations", []) if concerns(b)
            ]
        else:  # clarification
            answer["Text"] = self.domain.get("Description", "")
        answer = {k: v for k, v in answer.items() if v}
        if not answer:
            return {"Outcome": "not_answered", "DescrMetadata": f"The domain knows nothing on {kind} for this Request."}
        result: dict[str, Any] = {"Outcome": "partially_answered" if unknown else "answered", "Answer": answer}
        if unknown:
            result["DescrMetadata"] = f"Not in the domain: {', '.join(unknown)}."
        return result

    # -- feasibility ------------------------------------------------------------------------------

    def _context(self, action_context: Mapping[str, Any] | None) -> dict[str, Any]:
        """The ActionContext in force, narrowed by the domain: only M-Locations it has, its Rules too."""
        context = dict(action_context or {})
        if "MLocations" in context:
            context["MLocations"] = [m for m in context["MLocations"] if m in self.locations]
        else:
            context["MLocations"] = list(self.locations)
        context["Rules"] = [*context.get("Rules", []), *self.domain.get("Rules", [])]
        return context

    def _feasibility(self, message: dict[str, Any], action_context: Mapping[str, Any] | None) -> dict[str, Any]:
        steps = message.get("ProcessActions") or []
        if not steps:
            return {"Outcome": "not_answered", "DescrMetadata": "Kind feasibility, but no ProcessActions to validate."}
        context = self._context(action_context)
        known = set(self.entities) | set(self.locations) | set(message.get("EntityIDs") or ())
        predictions = predict(steps, context, known_ids=known, lenient=True)
        limit = context.get("WalletLimit")
        spent = 0.0
        bought: set[str] = set()
        holders = set(self.domain.get("Holders", []))
        rows = []
        for p in predictions:
            status, reason = p.predicted, p.reason
            mentioned = [e for e in self.entities if re.search(rf"(?<![\w-]){re.escape(e)}(?![\w-])", p.statement)]
            action = p.statement.split(" ", 1)[0]
            item = _TRANSACTION.search(p.statement) if action == "Transact" else None
            if status == "Ack" and item and item.group(1) not in self.entities:
                # Nothing of the domain can be bought under that name: not a purchase to Ack.
                status = "IncID"
                reason = f"{item.group(1)} is not an Item of the domain {self.domain.get('DomainID', '')}".rstrip()
                reason += "; nothing can be bought under that ID."
            elif status == "Ack" and action == "Transact":
                price = sum(float(self.entities[e].get("Price", 0)) for e in mentioned)
                if isinstance(limit, int | float) and spent + price > limit:
                    status = "InsValue"
                    reason = f"{', '.join(mentioned)} costs {price:g} {self.domain.get('Currency', '')}".rstrip()
                    reason += f"; the plan would spend {spent + price:g}, over the WalletLimit {limit:g}."
                else:
                    spent += price
                    bought.update(mentioned)
            elif status == "Ack" and action in ("MM-Add", "MM-Move", "MU-Add"):
                for e in mentioned:
                    owner = self.entities[e].get("Owner")
                    if owner and owner not in holders and e not in bought and self.entities[e]["Class"] != "Avatar":
                        status = "InsRights"
                        reason = f"{e} belongs to {owner}; no earlier step of the plan buys it."
                        break
            if status != "Ack":
                # A failed purchase leaves its Item with the vendor (later steps see that above).
                rows.append({"Step": p.step, "PAStatus": status, "Reason": reason})
            else:
                rows.append({"Step": p.step, "PAStatus": "Ack"})
        overall = overall_of(row["PAStatus"] for row in rows)  # rows: one a step, and there are steps
        return {"Outcome": "answered", "Feasibility": {"Steps": rows, "Overall": overall}}

    # -- commitments ------------------------------------------------------------------------------

    def _commitments(self, message: dict[str, Any], held: CommitmentLedger) -> dict[str, Any]:
        reported: dict[str, str] = {}
        notes = []
        for item in message.get("Commitments") or ():
            cid, statement = item["CommitmentID"], item["Statement"]
            if held.conflicting(cid, statement) is not None:
                # The retained statement stands until Basic Knowledge releases it (C1).
                reported[cid] = "conflicting"
                notes.append(f"{cid} is retained with another Statement; it is kept.")
            else:
                held.retain(cid, statement)
                reported[cid] = "retained"
        for cid in message.get("ReleasedCommitmentIDs") or ():
            if held.release(cid) != "released":
                notes.append(f"{cid} is not retained in this dialogue; nothing to release.")
                continue
            reported[cid] = "released"
        # "Status of the commitments of the dialogue": every one held so far, this Request's statuses first.
        status = [{"CommitmentID": c, "Status": s} for c, s in reported.items()]
        status += [{"CommitmentID": c, "Status": s} for c, s in held.statuses() if c not in reported]
        if not status:
            return {"Outcome": "not_answered", "DescrMetadata": " ".join(notes) or "No commitments in this dialogue."}
        result: dict[str, Any] = {
            "Outcome": "partially_answered" if notes else "answered",
            "CommitmentStatus": status,
        }
        if notes:
            result["DescrMetadata"] = " ".join(notes)
        return result

    def retained(self, dialog_id: str) -> dict[str, str]:
        """The commitments Domain Access holds for ``dialog_id`` now: CommitmentID -> Statement."""
        dialogue = self.dialogues.get(dialog_id)
        held = dialogue.state.get("commitments") if dialogue is not None else None
        return held.retained() if held is not None else {}


class PersonalityAlignment(Partner):
    """Personality Alignment: the stance for a BKN-PAL Request, from a personality profile.

    The profile's ``Default`` stance, changed by the first ``Cues`` entry whose keyword occurs in the
    Question; the Request's Role and Locale are kept (O5); its ExpressiveConstraints are added unless
    the profile ``Refuses`` them (then the answer is partial and says so).
    """

    type_name = "BKN-PAL"

    def __init__(self, profile: Source | None = None) -> None:
        super().__init__()
        self.profile = load_json(
            profile if profile is not None else data_folder() / "personalities" / "shop-assistant.json"
        )

    def payload(self, message: dict[str, Any], dialogue: PartnerDialogue, **extra: Any) -> dict[str, Any]:
        stance = dict(self.profile["Default"])
        question = (message.get("Question") or "").lower()
        for cue in self.profile.get("Cues", []):
            if any(word in question for word in cue["Keywords"]):
                stance.update(Label=cue["Label"], Rationale=cue["Rationale"])
                stance["ExpressiveConstraints"] = _merge(stance["ExpressiveConstraints"], cue["ExpressiveConstraints"])
                break
        asked = message.get("Constraints") or {}
        refused = [c for c in asked.get("ExpressiveConstraints", []) if _refused(c, self.profile.get("Refuses", []))]
        kept = [c for c in asked.get("ExpressiveConstraints", []) if c not in refused]
        stance["ExpressiveConstraints"] = _merge(kept, stance["ExpressiveConstraints"])
        for key, listed in (("Role", "Roles"), ("Locale", "Locales")):
            offered = self.profile.get(listed)
            if key in asked and offered is not None and asked[key] not in offered:
                # The profile decides who the A-User can be: another Role or Locale is refused, not faked.
                return {
                    "Outcome": "not_answered",
                    "DescrMetadata": f"The personality has no {key} {asked[key]!r}; it has {', '.join(offered)}.",
                }
            if key in asked:
                stance[key] = asked[key]
        result: dict[str, Any] = {"Outcome": "answered", "Stance": stance}
        if refused:
            result["Outcome"] = "partially_answered"
            result["DescrMetadata"] = f"The personality refuses: {'; '.join(refused)}."
        return result


def _merge(first: Sequence[str], second: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


def _refused(constraint: str, refuses: Iterable[str]) -> bool:
    text = constraint.lower()
    # "no sarcasm" asks to avoid sarcasm: only a constraint that asks for a refused trait is refused.
    return any(word in text for word in refuses) and not text.startswith(("no ", "never ", "avoid "))
