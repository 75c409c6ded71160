"""The probe's results over every exchange of a partner: result shape, conformance, echoes, Outcome, schemas."""

from __future__ import annotations

import json

from pgm_explore.mcp._probe_base import Exchange, ProbeRun, evidence_of
from pgm_explore.validation import validate

# -- results over every exchange -----------------------------------------------------------------


def judge_exchanges(run: ProbeRun) -> None:
    answered = [e for e in run.exchanges if e.reply.document is not None]
    requests_ok = [e for e in answered if isinstance(e.request, dict) and "QueryID" in e.request]

    def judge(check: str, problems: list[tuple[Exchange, str]], passed: str, judged: list[Exchange]) -> None:
        if not judged:
            run.record(check, "skip", "no Response to judge")
        elif problems:
            first = "; ".join(p for _, p in problems[:3])
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            evidence = [item for e, _ in problems[:3] for item in evidence_of(e)]
            run.record(check, "fail", f"{first}{more}", evidence)
        else:
            run.record(check, "pass", passed.format(n=len(judged)))

    shape = []
    for e in run.exchanges:
        reply = e.reply
        if reply.document is None or reply.is_error:
            continue
        if not reply.structured:
            shape.append((e, "a result without structuredContent (Response read from its text)"))
        elif reply.text is None:
            shape.append((e, "a result without the Response as text content"))
        else:
            try:
                same = json.loads(reply.text) == reply.document
            except ValueError:
                same = False
            if not same:
                shape.append((e, "the text content is not the same JSON as structuredContent"))
    results = [e for e in run.exchanges if e.reply.document is not None and not e.reply.is_error]
    judge("structured-result", shape, "{n} results: structuredContent and the same JSON as text", results)

    conform = []
    for e in answered:
        report = validate(e.reply.document)
        problems = [f"{f.json_path}: {f.message}" for f in report.findings if f.conformance]
        if report.type != run.type_name or report.mode != "RS":
            problems.insert(0, f"a {report.type or 'document of no known type'} {report.mode or ''}, not a Response")
        if problems:
            conform.append((e, "; ".join(problems[:3])))
    judge("response-conforms", conform, "{n} Responses, each conforming", answered)

    echo = []
    for e in requests_ok:
        doc, req = e.reply.document or {}, e.request
        wrong = [
            f"{key} {doc.get(theirs)!r} (Request: {req.get(ours)!r})"
            for key, ours, theirs in (
                ("RequestID", "QueryID", "RequestID"),
                ("TurnIndex", "TurnIndex", "TurnIndex"),
                ("DialogID", "DialogID", "DialogID"),
                ("SessionID", "SessionID", "SessionID"),
                ("MInstance", "MInstance", "MInstance"),
                ("UEnvironment", "UEnvironment", "UEnvironment"),
            )
            if doc.get(theirs) != req.get(ours)
        ]
        if wrong:
            echo.append((e, f"Response to {req.get('QueryID')}: {', '.join(wrong)}"))
    judge("echo", echo, "{n} Responses echo RequestID, TurnIndex, DialogID and the session identities", requests_ok)

    outcome = []
    for e in answered:
        doc = e.reply.document or {}
        if "Outcome" not in doc:
            outcome.append((e, "a Response without Outcome"))
            continue
        odd = [f"{f.message}" for f in validate(doc).findings if f.rule in ("outcome-payload", "failure-outcome")]
        if odd:
            outcome.append((e, "; ".join(odd)))
    judge("outcome", outcome, "{n} Responses: Outcome present and agreeing with the payload", answered)


def judge_tool_schemas(run: ProbeRun) -> None:
    if run.tool is None:
        run.record("tool-schemas", "skip", "no tool to read schemas from")
        return
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from referencing import Registry
    from referencing.exceptions import Unresolvable

    problems = []
    unjudged = ""
    try:
        schema = run.tool.input_schema
        Draft202012Validator.check_schema(schema)
        inputs = Draft202012Validator(schema, registry=Registry())
        sent = [e.request for e in run.exchanges if isinstance(e.request, dict) and validate(e.request).conforms]
        for request in sent[:5]:
            arguments = {"message": request}
            if not inputs.is_valid(arguments):
                problems.append(f"the inputSchema refuses a conforming Request ({request.get('QueryID')})")
                break
        if inputs.is_valid({"message": {"hello": 1}}):
            problems.append('the inputSchema accepts {"message": {"hello": 1}}: a host learns nothing of the Request')
        output = run.tool.output_schema
        if output is None:
            problems.append("no outputSchema")
        else:
            Draft202012Validator.check_schema(output)
            outputs = Draft202012Validator(output, registry=Registry())
            # Only a conforming Response of the partner's own type says anything of its outputSchema:
            # another type's Response is refused by a right schema (response-conforms says why).
            received = [e.reply.document for e in run.exchanges if e.reply.document is not None]
            own = [d for d in received if _own_response(d, run.type_name)]
            for document in own[:5]:
                if not outputs.is_valid(document):
                    problems.append(f"the outputSchema refuses a conforming Response ({document.get('QueryID')})")
                    break
            if not own:
                unjudged = f"no conforming {run.type_name} Response came back to try the outputSchema on"
    except (SchemaError, Unresolvable) as exc:
        problems.append(f"a schema that cannot be used without fetching anything: {str(exc).splitlines()[0]}")
    if problems:
        run.record("tool-schemas", "fail", "; ".join(problems))
    elif unjudged:
        run.record("tool-schemas", "skip", f"the inputSchema is right, but {unjudged}")
    else:
        run.record("tool-schemas", "pass", "self-contained schemas: conforming messages pass, a stray object does not")


def _own_response(document: dict, type_name: str) -> bool:
    report = validate(document)
    return report.type == type_name and report.mode == "RS" and report.conforms
