"""Shared test data: where the examples are, and minimal conforming messages to vary."""

from __future__ import annotations

import copy
import fnmatch
import importlib.util
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "data" / "examples"

_TIME = {
    "Header": "OSD-STM-V1.5",
    "SimpleTimeID": "t-1",
    "SimpleTimeData": [
        {
            "FlagsByte": 3,
            "StartTime": 1795000000000,
            "EndTime": 1795000000000,
            "AccuracyMode": "single",
            "AccuracyPlusMinus": 5,
            "TimeType": True,
            "TimeUnit": "01",
        }
    ],
}
_HEADERS = {
    "PC Prompt": "PGM-PCP-V1.0",
    "BKN-PRC": "PGM-KPR-V1.0",
    "BKN-DAC": "PGM-KDA-V1.0",
    "BKN-PAL": "PGM-KPA-V1.0",
}
_SENDERS = {"BKN-PRC": "PGM-PRC", "BKN-DAC": "PGM-DAC", "BKN-PAL": "PGM-PAL"}


def minimal_message(type_name: str, mode: str | None = None) -> dict[str, Any]:
    """The smallest conforming message of a type and mode, built by hand (not by the library)."""
    header = _HEADERS[type_name]
    if type_name == "PC Prompt":
        return {
            "Header": header,
            "MInstance": "mi-1",
            "UEnvironment": "ue-1",
            "SessionID": "s-1",
            "PCPromptID": "p-1",
            "PCPromptTime": copy.deepcopy(_TIME),
            "DialogID": "d-1",
            "Prompt": "Help me buy a lantern.",
            "DataXMData": {"Header": "PTF-DEM-V1.0", "DataID": "p-1", "Source": [{"AIMID": "PGM-PRC"}]},
        }
    doc: dict[str, Any] = {
        "Header": header,
        "Mode": mode,
        "MInstance": "mi-1",
        "UEnvironment": "ue-1",
        "SessionID": "s-1",
        "QueryID": f"q-{mode}",
        "QueryTime": copy.deepcopy(_TIME),
        "DialogID": "d-1",
        "TurnIndex": 0,
        "DataXMData": {
            "Header": "PTF-DEM-V1.0",
            "DataID": f"q-{mode}",
            "Source": [{"AIMID": "PGM-BKN" if mode == "RQ" else _SENDERS[type_name]}],
        },
    }
    if mode == "RQ" and type_name != "BKN-PAL":
        doc["Kind"] = "clarification"
    if mode == "RS":
        doc["RequestID"] = "q-RQ"
        doc["Outcome"] = "answered"
        doc.update(
            {
                "BKN-PRC": {"Representation": {"Text": "The lantern on the left stall."}},
                "BKN-DAC": {"Answer": {"Text": "Lanterns are sold at stall 7."}},
                "BKN-PAL": {"Stance": {"Label": "helpful-guide"}},
            }[type_name]
        )
    return doc


KINDS = [("PC Prompt", None)] + [(t, m) for t in ("BKN-PRC", "BKN-DAC", "BKN-PAL") for m in ("RQ", "RS")]


@pytest.fixture
def drafts_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Drafts and saved files go to a temporary folder, never to the home directory (the widget
    tests make it theirs with an autouse fixture); the current folder is the temporary one."""
    folder = tmp_path / "drafts"
    monkeypatch.setenv("PGM_EXPLORE_DRAFTS", str(folder))
    monkeypatch.setenv("PGM_EXPLORE_WORK", str(tmp_path / "work"))
    monkeypatch.chdir(tmp_path)
    return folder


@pytest.fixture
def message() -> Callable[..., dict[str, Any]]:
    return minimal_message


def example_files(kind: str) -> list[Path]:
    """Example messages (not their ``.expected.json`` sidecars) under ``data/examples/*/<kind>/``."""
    return sorted(p for p in EXAMPLES.glob(f"*/{kind}/*.json") if not p.name.endswith(".expected.json"))


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def pytest_configure(config: pytest.Config) -> None:
    """Keep kernels, IPython and matplotlib from writing into the home directory."""
    import os
    import tempfile

    without = _WithoutExtras()
    if without.missing:
        config.pluginmanager.register(without, "pgm-explore-without-extras")
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: it inherits the folders below
        return
    state = Path(tempfile.mkdtemp(prefix="pgm-explore-test-"))
    for variable, folder in (
        ("JUPYTER_CONFIG_DIR", "jupyter-config"),
        ("JUPYTER_DATA_DIR", "jupyter-data"),
        ("JUPYTER_RUNTIME_DIR", "jupyter-runtime"),
        ("IPYTHONDIR", "ipython"),
        ("MPLCONFIGDIR", "mpl"),
    ):
        os.environ.setdefault(variable, str(state / folder))
    # The e2e tests' screenshots and server logs (tests/e2e/conftest.py); named here, in the process
    # that reports, since with pytest-xdist the tests run in workers (which inherit the name).
    os.environ.setdefault("PGM_EXPLORE_SCREENSHOTS", str(state / "e2e"))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    folder = Path(os.environ.get("PGM_EXPLORE_SCREENSHOTS", ""))
    if folder.name and folder.is_dir():
        shots = sorted(folder.rglob("*.png"))  # (a folder a worker under pytest-xdist)
        terminalreporter.write_sep("-", "e2e screenshots")
        terminalreporter.write_line(f"{len(shots)} screenshots and the server logs in {folder}")


# Without an optional extra, the modules that need it cannot be imported, so their doctests
# (``--doctest-modules`` collects every module of the package and of these test helpers) are left
# out, and the report's header says so; the test modules themselves skip with the reason
# (``pytest.importorskip``).
_NEEDS_EXTRA = {
    "ipywidgets": ("notebook", ["pgm_explore/widgets/*.py"]),
    "mcp": (
        "mcp",
        [
            "pgm_explore/mcp/*.py",
            "pgm_explore/_servers.py",
            "tests/faulty_partners.py",
            "tests/legacy_partner.py",
            "tests/probing.py",
        ],
    ),
}


class _WithoutExtras:
    """A plugin, not a hook of this file: a conftest's hooks see only the paths below it, and the
    package's modules are not below ``tests/``."""

    def __init__(self) -> None:
        self.missing = {
            module: needs for module, needs in _NEEDS_EXTRA.items() if importlib.util.find_spec(module) is None
        }
        self.left_out = [str(ROOT / pattern) for _, patterns in self.missing.values() for pattern in patterns]

    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        path = str(collection_path)
        return True if any(fnmatch.fnmatch(path, pattern) for pattern in self.left_out) else None

    def pytest_report_header(self) -> list[str]:
        return [
            f"{module} is not installed (the {extra} extra): the doctests of {', '.join(patterns)} are left out"
            for module, (extra, patterns) in self.missing.items()
        ]


# CI runs the same examples every time: a red build must be reproducible from its log.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
