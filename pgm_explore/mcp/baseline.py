"""Known failures of a partner, so that CI fails only on new ones (``pgm-explore probe --baseline FILE``).

The file, YAML or JSON, maps a partner role to the check ids that are known to fail there::

    # probe-baseline.yml
    dac:
      - unknown-tool      # the SDK answers an unknown tool with a tool error; fixed in 0.3
      - http-get
    pal: [capabilities]

The same in JSON: ``{"dac": ["unknown-tool", "http-get"], "pal": ["capabilities"]}``. A role may map
to ``"*"`` instead of a list: every check of that partner may fail. As in the official MCP
conformance suite's ``--expected-failures`` file, a result is judged against the baseline:

========  ===========  =====================================================
result    in the file  the run
========  ===========  =====================================================
fail      yes          known: exit 0
fail      no           **new**: exit 1
pass      yes          **stale**: exit 1, until the entry is removed
pass      no           exit 0
skip      either       exit 0 (a check that could not run says nothing)
========  ===========  =====================================================

>>> from pgm_explore.mcp.probe import Check
>>> baseline = Baseline.parse({"dac": ["echo", "outcome"]}, "probe-baseline.yml")
>>> verdict = baseline.judge([Check("dac", "echo", "fail", "", ""), Check("dac", "outcome", "pass", "", ""),
...                           Check("dac", "feasibility", "fail", "", "")])
>>> [c.check for c in verdict.known], [c.check for c in verdict.new], [c.check for c in verdict.stale]
(['echo'], ['feasibility'], ['outcome'])
>>> verdict.ok
False
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgm_explore.errors import PgmExploreError
from pgm_explore.mcp._probe_base import CHECKS, Check
from pgm_explore.mcp.connect import ROLES

__all__ = ["Baseline", "BaselineError", "Verdict"]


class BaselineError(PgmExploreError, ValueError):
    """A baseline file that cannot be read or says something impossible; the message says where."""


@dataclass(frozen=True)
class Verdict:
    """The results against a baseline: the failures it knew, the new ones, and entries that pass now."""

    known: tuple[Check, ...]
    new: tuple[Check, ...]
    stale: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        """No new failure and no stale entry: what CI should accept."""
        return not self.new and not self.stale

    def lines(self, source: str) -> list[str]:
        """What the run says of the baseline, one line each (for stderr)."""
        said = [f"baseline {source}: {len(self.known)} known failures, {len(self.new)} new, {len(self.stale)} stale"]
        said += [
            f"  new failure: {c.partner} {c.check}: {c.message.splitlines()[0] if c.message else ''}" for c in self.new
        ]
        said += [f"  stale: {c.partner} {c.check} passes now: remove it from {source}" for c in self.stale]
        return said


@dataclass(frozen=True)
class Baseline:
    """Per role, the check ids allowed to fail (``None``: every check of that role)."""

    expected: Mapping[str, frozenset[str] | None]
    source: str

    @classmethod
    def load(cls, path: str | Path) -> Baseline:
        """Read a YAML or JSON baseline file; raises BaselineError."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BaselineError(f"{path}: cannot be read ({exc})") from None
        try:
            if path.suffix.lower() == ".json":
                data = json.loads(text)
            else:
                import yaml  # only here: a JSON baseline needs no YAML reader

                data = yaml.safe_load(text)
        except Exception as exc:  # the readers' errors say where the text is wrong
            raise BaselineError(f"{path}: not {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {exc}") from None
        return cls.parse(data if data is not None else {}, str(path))

    @classmethod
    def parse(cls, data: Any, source: str) -> Baseline:
        """A baseline from the file's content; raises BaselineError naming what is wrong."""
        if not isinstance(data, dict):
            raise BaselineError(f"{source}: expected a mapping of partner roles ({', '.join(ROLES)}) to check ids")
        expected: dict[str, frozenset[str] | None] = {}
        for role, entries in data.items():
            if role not in ROLES:
                raise BaselineError(f"{source}: {role!r} is not a partner role ({', '.join(ROLES)})")
            if entries == "*":
                expected[role] = None
                continue
            if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
                raise BaselineError(f'{source}: {role}: expected a list of check ids, or "*"')
            known = {c.id for c in CHECKS if role in c.roles}
            unknown = [e for e in entries if e not in known]
            if unknown:
                raise BaselineError(f"{source}: {role}: no check {', '.join(map(repr, unknown))} for this partner")
            expected[role] = frozenset(entries)
        return cls(expected, source)

    def expects(self, check: Check) -> bool:
        if check.partner not in self.expected:
            return False
        entries = self.expected[check.partner]
        return entries is None or check.check in entries

    def judge(self, checks: Sequence[Check]) -> Verdict:
        known = tuple(c for c in checks if c.status == "fail" and self.expects(c))
        new = tuple(c for c in checks if c.status == "fail" and not self.expects(c))
        # A role given as "*" excuses every failure; it lists no check that could go stale.
        stale = tuple(
            c for c in checks if c.status == "pass" and self.expects(c) and self.expected[c.partner] is not None
        )
        return Verdict(known, new, stale)
