"""Layer 3: validation of single messages.

>>> report = validate({"Header": "PGM-KPA-V1.0", "Mode": "RS"})
>>> report.type, report.mode, report.conforms
('BKN-PAL', 'RS', False)
>>> [f.rule for f in report.findings][:3]
['required', 'required', 'required']
"""

from pgm_explore.validation._limits import MAX_FINDINGS, Tally
from pgm_explore.validation._parse import (
    InputProblem,
    duplicate_keys,
    loads,
    parse_json,
    read_double,
    read_number,
)
from pgm_explore.validation._report import (
    FINDING_COLUMNS,
    Report,
    ReportFields,
    clean_fields,
    report_fields,
    validate,
)
from pgm_explore.validation._text import validate_json
from pgm_explore.validation._typed import Way, learn_order, read_clean, read_clean_typed
from pgm_explore.validation.findings import RULES, Finding, Rule, RuleCode, Severity, json_path

__all__ = [
    "FINDING_COLUMNS",
    "Finding",
    "InputProblem",
    "MAX_FINDINGS",
    "RULES",
    "Report",
    "ReportFields",
    "Rule",
    "RuleCode",
    "Severity",
    "Tally",
    "Way",
    "clean_fields",
    "duplicate_keys",
    "json_path",
    "learn_order",
    "loads",
    "parse_json",
    "read_clean",
    "read_clean_typed",
    "read_double",
    "read_number",
    "report_fields",
    "validate",
    "validate_json",
]

# Public names are documented where they are imported from, not in private modules.
for _name in __all__:
    if getattr(globals()[_name], "__module__", "").startswith(f"{__name__}._"):
        globals()[_name].__module__ = __name__
