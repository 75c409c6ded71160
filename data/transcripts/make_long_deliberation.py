"""Build ``long-deliberation.jsonl`` (and its sidecar): a long, valid deliberation of Basic Knowledge.

Run ``python data/transcripts/make_long_deliberation.py``; it rewrites both files next to it. The output is
deterministic (no clock, no randomness) and uses only the standard library.

The story: an A-User hosts the opening of an exhibition in the Arte Viva gallery. The curator asks it to hang
eight new canvases, put the catering by the entrance and keep the spending under 300 AGR. Basic Knowledge
deliberates with its three partners over one PC Prompt dialogue and one dialogue each for Domain Access and
Personality Alignment:

- for every canvas: ground its catalogue entry (BKN-DAC semantic_grounding), resolve how the curator named it
  (BKN-PRC referents or propositions), check the plan that moves it from storage to its wall (BKN-DAC
  feasibility) and retain where it hangs (BKN-DAC commitment);
- two canvases are meant for the West wall, which is closed for renovation and not among the ActionContext's
  MLocations: Domain Access reports LocOOR, Prompt Creation is asked where else they go, and the corrected plan
  is feasible;
- the sixth canvas is proposed as the centrepiece of the North wall, which the second already is: Domain Access
  reports that commitment conflicting, and Prompt Creation confirms the first choice;
- catering and flowers together exceed the WalletLimit (InsValue on the flowers); cheaper flowers fit;
- Personality Alignment is asked for the host's stance at several moments (answered with the Role and Locale
  asked for), and every commitment is released when the gallery opens.

Every message is conforming and consistent, so ``pgm-explore check`` reports nothing. The feasibility statements
follow the operand conventions of the heuristic pre-check (docs/process-actions.md): M-Locations are ``ML-``
words after ``From``/``To``/``At``, amounts are ``With Transaction=<n> AGR`` / ``With SPM=<n> AGR``, so the
pre-check predicts exactly the PA Status that Domain Access reports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "long-deliberation.jsonl"
SIDECAR = HERE / "long-deliberation.expected.json"

MINSTANCE, UENVIRONMENT, SESSION, CODE = "mi-arte-viva", "ue-office-sevilla-02", "ses-e3f7-20261123", "e3f7"
DIALOG, DAC, PAL = f"dlg-{CODE}-01", f"dlg-{CODE}-dac", f"dlg-{CODE}-pal"
START_MS = 1795449600000  # 2026-11-23 16:00:00 UTC
HOST, CURATOR = "aua-host-04", "proc-curator-ines"
ROLE, LOCALE = "gallery host", "es-ES"

MLOCATIONS = [
    "ML-Storage",
    "ML-Entrance",
    "ML-Wall-North-1",
    "ML-Wall-North-2",
    "ML-Wall-North-3",
    "ML-Wall-East-1",
    "ML-Wall-East-2",
    "ML-Wall-East-3",
    "ML-Wall-South-1",
    "ML-Wall-South-2",
]

# (id, title, artist, width cm, height cm, wall asked for, wall used when the first is out of range)
ARTWORKS = [
    ("art-01", "Marea baja", "Lucía Ferrer", 120, 90, "ML-Wall-North-1", None),
    ("art-02", "Patio con naranjos", "Tomás Vidal", 160, 120, "ML-Wall-North-2", None),
    ("art-03", "Estudio en azul", "Lucía Ferrer", 60, 80, "ML-Wall-West-1", "ML-Wall-South-1"),
    ("art-04", "La espera", "Nuria Campos", 90, 90, "ML-Wall-East-1", None),
    ("art-05", "Noche de feria", "Tomás Vidal", 140, 100, "ML-Wall-North-3", None),
    ("art-06", "Azoteas", "Nuria Campos", 150, 110, "ML-Wall-East-2", None),
    ("art-07", "Barcas", "Lucía Ferrer", 70, 50, "ML-Wall-West-2", "ML-Wall-South-2"),
    ("art-08", "Tríptico del río", "Pablo Ortega", 200, 80, "ML-Wall-East-3", None),
]
EXPRESSIONS = {
    "art-01": "the sea one",
    "art-02": "the big one with the orange trees",
    "art-03": "the little blue study",
    "art-04": "Nuria's square one",
    "art-05": "the fairground at night",
    "art-06": "the rooftops",
    "art-07": "the small boats",
    "art-08": "the long triptych",
}
CENTREPIECE, SECOND_CENTREPIECE = "art-02", "art-06"


def simple_time(ident: str, ms: int) -> dict[str, Any]:
    """OSD V1.5 Simple Time, absolute, in milliseconds (FlagsByte 3), as the examples write it."""
    return {
        "Header": "OSD-STM-V1.5",
        "SimpleTimeID": f"st-{ident}",
        "SimpleTimeData": [
            {
                "FlagsByte": 3,
                "StartTime": ms,
                "EndTime": ms,
                "AccuracyMode": "single",
                "AccuracyPlusMinus": 5,
                "TimeType": True,
                "TimeUnit": "01",
            }
        ],
    }


HEADERS = {"PRC": "PGM-KPR-V1.0", "DAC": "PGM-KDA-V1.0", "PAL": "PGM-KPA-V1.0"}
PREFIXES = {"PRC": "kpr", "DAC": "kda", "PAL": "kpa"}
PARTNERS = {"PRC": "PGM-PRC", "DAC": "PGM-DAC", "PAL": "PGM-PAL"}
DIALOGS = {"PRC": DIALOG, "DAC": DAC, "PAL": PAL}
# Typical latency of each partner, in ms, varied deterministically by the turn.
LATENCY = {"PRC": 180, "DAC": 560, "PAL": 940}


class Deliberation:
    """Messages in the order they happened, with ids, turns and times kept coherent."""

    def __init__(self) -> None:
        self.now = START_MS
        self.messages: list[dict[str, Any]] = []
        self.counter = {"PRC": 0, "DAC": 0, "PAL": 0}
        self.turn = {"PRC": 0, "DAC": 0, "PAL": 0}

    def _common(self, kind: str, mode: str, query_id: str, turn: int) -> dict[str, Any]:
        return {
            "Header": HEADERS[kind],
            "Mode": mode,
            "MInstance": MINSTANCE,
            "UEnvironment": UENVIRONMENT,
            "SessionID": SESSION,
            "QueryID": query_id,
            "QueryTime": simple_time(query_id, self.now),
            "DialogID": DIALOGS[kind],
            "TurnIndex": turn,
        }

    def _new_id(self, kind: str) -> str:
        self.counter[kind] += 1
        return f"{PREFIXES[kind]}-{CODE}-{self.counter[kind]:04d}"

    def prompt(self, **fields: Any) -> None:
        ident = f"pcp-{CODE}-0001"
        doc: dict[str, Any] = {
            "Header": "PGM-PCP-V1.0",
            "MInstance": MINSTANCE,
            "UEnvironment": UENVIRONMENT,
            "SessionID": SESSION,
            "PCPromptID": ident,
            "PCPromptTime": simple_time(ident, self.now),
            "DialogID": DIALOG,
            **fields,
            "DataXMData": {
                "Header": "PTF-DEM-V1.0",
                "DataID": ident,
                "DataType": "PGM-PCP-V1.0",
                "Source": [{"AIMID": "PGM-PRC"}],
            },
        }
        self.messages.append(doc)

    def request(self, kind: str, after: int = 120, **fields: Any) -> dict[str, Any]:
        """A Request of Basic Knowledge, ``after`` ms after the previous message."""
        self.now += after
        query_id = self._new_id(kind)
        turn = self.turn[kind]
        self.turn[kind] += 1
        doc = self._common(kind, "RQ", query_id, turn) | fields
        doc["DataXMData"] = {
            "Header": "PTF-DEM-V1.0",
            "DataID": query_id,
            "DataType": HEADERS[kind],
            "Source": [{"AIMID": "PGM-BKN"}],
        }
        self.messages.append(doc)
        return doc

    def response(self, request: dict[str, Any], after: int | None = None, **fields: Any) -> dict[str, Any]:
        """The partner's Response to ``request``; by default after the partner's typical latency."""
        kind = next(k for k, h in HEADERS.items() if h == request["Header"])
        self.now += after if after is not None else LATENCY[kind] + 37 * (request["TurnIndex"] % 7)
        query_id = self._new_id(kind)
        doc = self._common(kind, "RS", query_id, request["TurnIndex"])
        doc["RequestID"] = request["QueryID"]
        doc |= fields
        doc["DataXMData"] = {
            "Header": "PTF-DEM-V1.0",
            "DataID": query_id,
            "DataType": HEADERS[kind],
            "Source": [{"AIMID": PARTNERS[kind]}],
        }
        self.messages.append(doc)
        return doc


# --- the templates ----------------------------------------------------------------------------------------


def open_session(d: Deliberation) -> None:
    d.prompt(
        Prompt="Hang the eight new canvases for tonight's opening, put the catering by the entrance, and keep the "
        "spending under three hundred credits.",
        SceneContext={
            "SpaceID": "sp-arte-viva-main-hall",
            "AUserID": HOST,
            "UserID": CURATOR,
            "Entities": [
                {"EntityID": art, "Class": "Canvas", "Title": title, "MLocation": "ML-Storage"}
                for art, title, *_ in ARTWORKS
            ]
            + [{"EntityID": "item-catering-stand-01", "Class": "CateringStand", "MLocation": "ML-Storage"}],
        },
        Intent={"Category": "Procedural", "Action": "prepare_exhibition", "Type": "instruction"},
        ResolvedReferents=[
            {"Expression": "the catering", "EntityID": "item-catering-stand-01", "Confidence": 0.88},
            {"Expression": "the entrance", "EntityID": "ML-Entrance", "Confidence": 0.95},
        ],
        GoalConstraints=["Spend at most 300 AGR.", "Everything in place before the opening at 19:00 Europe/Madrid."],
        ExpressiveConfiguration={
            "Personality": "gracious-host",
            "Role": ROLE,
            "Locale": LOCALE,
            "Constraints": ["formal usted with guests"],
        },
        ActionContext=ACTION_CONTEXT,
        DescrMetadata="Exhibition set-up; A-User Control asked for Process Actions, hence the ActionContext.",
    )


ACTION_CONTEXT: dict[str, Any] = {
    "Repertoire": ["MM-Move", "MM-Add", "MM-Send", "Transact"],
    "Vocabularies": ["PGM-AOQ-Speech-V1.0", "PGM-AOQ-Gesture-V1.0"],
    "MaxSteps": 4,
    "MLocations": MLOCATIONS,
    "RightsRefs": ["rgt-host04-locate-arteviva", "rgt-host04-economy-events", "rgt-ines-collection-delegated"],
    "WalletLimit": 300,
    "Rules": ["rule-arteviva-west-wing-closed", "rule-arteviva-no-food-near-canvases"],
}


def preliminaries(d: Deliberation) -> None:
    rq = d.request(
        "PRC",
        400,
        Kind="action_context",
        Question="Which Process Actions and M-Locations may the host use to set up the hall?",
        EntityIDs=[HOST],
    )
    d.response(
        rq,
        Outcome="answered",
        Representation={
            "Text": "A-User Control confirms the ActionContext of the PC Prompt: the West wing is closed.",
            "ActionContext": ACTION_CONTEXT,
        },
    )
    rq = d.request(
        "DAC",
        Kind="affordances",
        Question="What can the host do with the walls and the entrance of the main hall?",
        Space={"SpaceID": "sp-arte-viva-main-hall", "MLocation": MLOCATIONS[1:]},
    )
    d.response(
        rq,
        Outcome="answered",
        Answer={
            "Affordances": [
                {"EntityID": wall, "Class": "HangingWall", "Action": "hang_canvas"}
                for wall in MLOCATIONS
                if wall.startswith("ML-Wall")
            ]
            + [{"EntityID": "ML-Entrance", "Class": "Foyer", "Action": "place_stand"}],
            "Text": "Every listed wall takes one canvas per section; the foyer takes stands.",
        },
        SourcesUsed=["arteviva-floor-plan"],
    )
    rq = d.request(
        "DAC",
        Kind="constraints",
        Question="Which hanging rules of the gallery apply tonight?",
        Space={"SpaceID": "sp-arte-viva-main-hall"},
    )
    d.response(
        rq,
        Outcome="answered",
        Answer={
            "Constraints": [
                "Canvases hang with their centre at 150 cm.",
                "No food or drink within 3 m of a canvas.",
                "The West wing is closed for renovation until December.",
            ]
        },
        SourcesUsed=["arteviva-house-rules"],
    )
    rq = d.request(
        "DAC",
        Kind="behavioural_expectations",
        Question="How is a host expected to behave during an opening at Arte Viva?",
        Space={"SpaceID": "sp-arte-viva-main-hall"},
    )
    d.response(
        rq,
        Outcome="answered",
        Answer={
            "BehaviouralExpectations": [
                "Greet guests at the entrance for the first half hour.",
                "Introduce the artists present before the curator's speech.",
                "Never touch a hung canvas while guests are in the hall.",
            ]
        },
        SourcesUsed=["arteviva-event-guide"],
    )
    stance(d, "The host prepares the hall alone before guests arrive. Which stance while working?", ["brief"])


def stance(d: Deliberation, question: str, constraints: list[str], label: str = "composed-professional") -> None:
    rq = d.request(
        "PAL",
        Question=question,
        Constraints={"Role": ROLE, "Locale": LOCALE, "ExpressiveConstraints": constraints},
    )
    d.response(
        rq,
        Outcome="answered",
        Stance={
            "Label": label,
            "Role": ROLE,
            "Locale": LOCALE,
            "ExpressiveConstraints": [*constraints, "formal usted with guests"],
            "Rationale": "The host's personality profile and the occasion call for a "
            f"{label.replace('-', ' ')} manner.",
        },
    )


def name_of(d: Deliberation, index: int, art: str, title: str) -> None:
    """How the curator referred to the canvas: referents for even canvases, propositions for odd ones."""
    expression = EXPRESSIONS[art]
    if index % 2 == 0:
        rq = d.request(
            "PRC",
            Kind="referents",
            Question=f"In her notes the curator wrote '{expression}'. Is that {art}?",
            EntityIDs=[art],
        )
        d.response(
            rq,
            Outcome="answered",
            Representation={"ResolvedReferents": [{"Expression": expression, "EntityID": art, "Confidence": 0.93}]},
        )
    else:
        rq = d.request(
            "PRC",
            Kind="propositions",
            Question=f"What did the curator say about where '{expression}' should hang?",
            EntityIDs=[art],
        )
        d.response(
            rq,
            Outcome="answered",
            Representation={
                "Propositions": [
                    {"Subject": art, "Predicate": "to_be_hung_at", "Object": dict(_wall_asked())[art]},
                    {"Subject": art, "Predicate": "titled", "Object": title},
                ]
            },
        )


def _wall_asked() -> list[tuple[str, str]]:
    return [(art, wall) for art, _, _, _, _, wall, _ in ARTWORKS]


def ground(d: Deliberation, art: str, title: str, artist: str, width: int, height: int, *, concurrent: bool) -> None:
    """Semantic grounding of a canvas; when ``concurrent``, a stance Request is answered in between."""
    rq = d.request(
        "DAC",
        Kind="semantic_grounding",
        Question=f"What is '{title}' in the catalogue, and how large is it?",
        Terms=[{"Text": title, "Class": "Painting"}],
        EntityIDs=[art],
    )
    if concurrent:
        stance(
            d,
            f"'{title}' is by {artist}, who will be present. How should the host introduce the work?",
            ["name the artist first"],
            label="warm-formal",
        )
    d.response(
        rq,
        Outcome="answered",
        Answer={
            "ObjectClasses": [{"Class": "Painting", "Label": title, "Confidence": 0.99}],
            "Relations": [
                {"Subject": art, "Predicate": "painted_by", "Object": artist},
                {"Subject": art, "Predicate": "has_size_cm", "Object": f"{width} x {height}"},
            ],
        },
        SourcesUsed=["arteviva-catalogue"],
    )


def move_plan(art: str, wall: str) -> list[dict[str, Any]]:
    return [
        {
            "Step": 0,
            "Statement": f"MM-Move Nil {art} From ML-Storage To {wall} With SpatialAttitude With Rights (Status=Model)",
        },
        {"Step": 1, "Statement": f"MM-Send Nil Message To {CURATOR} With Rights (Status=Model)"},
    ]


def hang(d: Deliberation, art: str, title: str, wall: str, fallback: str | None) -> str:
    """The feasibility of hanging a canvas; out of range first when the wall is not in MLocations."""
    rq = d.request(
        "DAC",
        Kind="feasibility",
        Question=f"Can the host move '{title}' from storage to {wall} and tell the curator?",
        EntityIDs=[art],
        Space={"SpaceID": "sp-arte-viva-main-hall", "MLocation": ["ML-Storage", wall]},
        ProcessActions=move_plan(art, wall),
    )
    if fallback is None:
        d.response(
            rq,
            Outcome="answered",
            Feasibility={
                "Steps": [{"Step": 0, "PAStatus": "Ack"}, {"Step": 1, "PAStatus": "Ack"}],
                "Overall": "feasible",
            },
            SourcesUsed=["arteviva-floor-plan"],
        )
        return wall
    d.response(
        rq,
        Outcome="answered",
        Feasibility={
            "Steps": [
                {
                    "Step": 0,
                    "PAStatus": "LocOOR",
                    "Reason": f"{wall} is in the West wing, closed for renovation; it is not among the session's "
                    "M-Locations.",
                },
                {"Step": 1, "PAStatus": "Ack"},
            ],
            "Overall": "partially_feasible",
        },
        SourcesUsed=["arteviva-floor-plan", "arteviva-house-rules"],
    )
    rq = d.request(
        "PRC",
        Kind="clarification",
        Question=f"The curator wanted '{title}' on the West wall, which is closed. Did she name another place?",
        EntityIDs=[art],
    )
    d.response(
        rq,
        Outcome="answered",
        Representation={"Text": f"Her notes say: 'if the West wing is still closed, use the South wall' ({fallback})."},
    )
    rq = d.request(
        "DAC",
        Kind="feasibility",
        Question=f"Corrected plan: can the host move '{title}' to {fallback} instead?",
        EntityIDs=[art],
        Space={"SpaceID": "sp-arte-viva-main-hall", "MLocation": ["ML-Storage", fallback]},
        ProcessActions=move_plan(art, fallback),
    )
    d.response(
        rq,
        Outcome="answered",
        Feasibility={"Steps": [{"Step": 0, "PAStatus": "Ack"}, {"Step": 1, "PAStatus": "Ack"}], "Overall": "feasible"},
        SourcesUsed=["arteviva-floor-plan"],
    )
    return fallback


def retain(d: Deliberation, art: str, title: str, wall: str, retained: list[str]) -> None:
    """Retain where the canvas hangs; the second centrepiece proposal conflicts with the first."""
    commitments = [{"CommitmentID": f"cm-hang-{art}", "Statement": f"'{title}' ({art}) hangs at {wall}."}]
    if art == CENTREPIECE:
        commitments.append(
            {"CommitmentID": "cm-centrepiece-north", "Statement": f"{art} is the centrepiece of the North wall."}
        )
    if art == SECOND_CENTREPIECE:
        commitments.append(
            {"CommitmentID": "cm-centrepiece-north-b", "Statement": f"{art} is the centrepiece of the North wall."}
        )
    rq = d.request("DAC", Kind="commitment", Question="Keep where this canvas hangs.", Commitments=commitments)
    status = [{"CommitmentID": c["CommitmentID"], "Status": "retained"} for c in commitments]
    if art == SECOND_CENTREPIECE:
        status[-1]["Status"] = "conflicting"
    d.response(rq, Outcome="answered", CommitmentStatus=status)
    retained += [s["CommitmentID"] for s in status if s["Status"] == "retained"]
    if art == SECOND_CENTREPIECE:
        rq = d.request(
            "PRC",
            Kind="intent",
            Question=f"Domain Access keeps {CENTREPIECE} as the North wall's centrepiece. Did the curator want "
            f"{art} to replace it, or only to hang on the East wall?",
            EntityIDs=[CENTREPIECE, art],
        )
        d.response(
            rq,
            Outcome="answered",
            Representation={
                "Intent": {"Category": "Informational", "Action": "keep_centrepiece", "Type": "statement"},
                "Text": f"The curator's notes keep {CENTREPIECE}; {art} was only called 'a strong piece'.",
            },
        )


def catering(d: Deliberation) -> None:
    rq = d.request(
        "PRC",
        Kind="goal_constraints",
        Question="Does the 300 AGR limit cover the catering and the flowers together?",
        EntityIDs=["item-catering-stand-01"],
    )
    d.response(
        rq,
        Outcome="answered",
        Representation={"GoalConstraints": ["Catering and flowers together must not exceed 300 AGR."]},
    )
    rq = d.request(
        "DAC",
        Kind="clarification",
        Question="Does 'near the entrance' respect the rule of no food within 3 m of a canvas?",
        Space={"SpaceID": "sp-arte-viva-main-hall", "MLocation": ["ML-Entrance"]},
    )
    d.response(
        rq,
        Outcome="answered",
        Answer={"Text": "Yes: the foyer is 6 m from the nearest wall section."},
        SourcesUsed=["arteviva-floor-plan"],
    )
    place = (
        "MM-Add Nil item-catering-stand-01 At ML-Entrance With SpatialAttitude With PerceptibilityState=1 "
        "With Rights (Status=Model)"
    )
    rq = d.request(
        "DAC",
        Kind="feasibility",
        Question="Can the host order the catering and the large flower arrangements and set up the stand?",
        EntityIDs=["item-catering-stand-01"],
        Space={"SpaceID": "sp-arte-viva-main-hall", "MLocation": ["ML-Entrance"]},
        ProcessActions=[
            {"Step": 0, "Statement": "Transact With Transaction=180 AGR With SPM=180 AGR (Status=Model)"},
            {"Step": 1, "Statement": "Transact With Transaction=150 AGR With SPM=150 AGR (Status=Model)"},
            {"Step": 2, "Statement": place},
        ],
    )
    d.response(
        rq,
        Outcome="answered",
        Feasibility={
            "Steps": [
                {"Step": 0, "PAStatus": "Ack"},
                {
                    "Step": 1,
                    "PAStatus": "InsValue",
                    "Reason": "After the catering (180 AGR) the flowers (150 AGR) would bring the spending to 330 AGR, "
                    "over the WalletLimit of 300.",
                },
                {"Step": 2, "PAStatus": "Ack"},
            ],
            "Overall": "partially_feasible",
        },
        SourcesUsed=["arteviva-suppliers-spm"],
    )
    rq = d.request(
        "DAC",
        Kind="feasibility",
        Question="With the small arrangements (90 AGR) instead, is the whole order feasible?",
        EntityIDs=["item-catering-stand-01"],
        Space={"SpaceID": "sp-arte-viva-main-hall", "MLocation": ["ML-Entrance"]},
        ProcessActions=[
            {"Step": 0, "Statement": "Transact With Transaction=180 AGR With SPM=180 AGR (Status=Model)"},
            {"Step": 1, "Statement": "Transact With Transaction=90 AGR With SPM=90 AGR (Status=Model)"},
            {"Step": 2, "Statement": place},
        ],
    )
    d.response(
        rq,
        Outcome="answered",
        Feasibility={"Steps": [{"Step": s, "PAStatus": "Ack"} for s in range(3)], "Overall": "feasible"},
        SourcesUsed=["arteviva-suppliers-spm"],
    )


def closing(d: Deliberation, retained: list[str]) -> None:
    rq = d.request(
        "PRC",
        Kind="more_context",
        Question="Is the curator giving a speech at the opening, and should the host introduce her?",
        EntityIDs=[CURATOR],
    )
    d.response(
        rq,
        Outcome="partially_answered",
        Representation={"Text": "A speech at 19:30 is in the programme; who introduces her is not said."},
    )
    stance(
        d,
        "Guests are arriving. Which stance should the host take to greet them and introduce the curator?",
        ["greet each group", "introduce the curator at 19:30"],
        label="gracious-host",
    )
    rq = d.request(
        "DAC",
        Kind="commitment",
        Question="The hall is set up and the opening has started: stop retaining the set-up facts.",
        ReleasedCommitmentIDs=retained,
    )
    d.response(
        rq,
        Outcome="answered",
        CommitmentStatus=[{"CommitmentID": c, "Status": "released"} for c in retained],
    )


def build() -> list[dict[str, Any]]:
    d = Deliberation()
    open_session(d)
    preliminaries(d)
    retained: list[str] = []
    for index, (art, title, artist, width, height, wall, fallback) in enumerate(ARTWORKS):
        ground(d, art, title, artist, width, height, concurrent=index % 3 == 1)
        name_of(d, index, art, title)
        used = hang(d, art, title, wall, fallback)
        retain(d, art, title, used, retained)
        d.now += 2500 + 100 * index  # the host carries the canvas
    catering(d)
    closing(d, retained)
    return d.messages


def main() -> None:
    messages = build()
    exchanges = sum(m.get("Mode") == "RQ" for m in messages)
    text = "".join(json.dumps(m, ensure_ascii=False, separators=(",", ":")) + "\n" for m in messages)
    OUTPUT.write_text(text, encoding="utf-8")
    sidecar = {
        "description": f"Valid. Generated by make_long_deliberation.py: {len(messages)} messages, {exchanges} "
        "exchanges of every Kind of BKN-PRC and BKN-DAC and several of BKN-PAL, over one PC Prompt dialogue "
        "and one dialogue each for Domain Access and Personality Alignment: an A-User hangs eight canvases "
        "for an exhibition opening (two out of range, then moved), handles a conflicting commitment, exceeds "
        "and then respects the WalletLimit, and releases every commitment at the end. No finding.",
        "errors": 0,
        "findings": [],
    }
    SIDECAR.write_text(json.dumps(sidecar, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{OUTPUT.name}: {len(messages)} messages, {exchanges} exchanges")


if __name__ == "__main__":
    main()
