"""Write too-deep.json: a PC Prompt whose SceneContext holds a value nested 100,000 levels deep.

SceneContext is an open object (DECISIONS D3), so nothing in the schema limits what it holds.
Nesting objects ({"":{"":...}}) costs five bytes a level, 500 KB in all; nesting arrays
([[[...]]]) costs two, so the file stays near 200 KB and is committed as generated.
Regenerate it (deterministically) with:

    python data/examples/malformed/make_too_deep.py
"""

from __future__ import annotations

from pathlib import Path

LEVELS = 100_000

HEAD = """{
  "Header": "PGM-PCP-V1.0",
  "MInstance": "mi-agora-market",
  "UEnvironment": "ue-flat-turin-12",
  "SessionID": "ses-7f3a-20261114",
  "PCPromptID": "pcp-7f3a-9999",
  "PCPromptTime": {
    "Header": "OSD-STM-V1.5",
    "SimpleTimeID": "st-pcp-7f3a-9999",
    "SimpleTimeData": [
      {
        "FlagsByte": 3,
        "StartTime": 1794651300000,
        "EndTime": 1794651300000,
        "AccuracyMode": "single",
        "AccuracyPlusMinus": 5,
        "TimeType": true,
        "TimeUnit": "01"
      }
    ]
  },
  "DialogID": "dlg-7f3a-99",
  "Prompt": "Describe the scene around me.",
  "SceneContext": {
    "SpaceID": "sp-agora-plaza",
    "Layers": """

TAIL = """
  },
  "DataXMData": {
    "Header": "PTF-DEM-V1.0",
    "DataID": "pcp-7f3a-9999",
    "DataType": "PGM-PCP-V1.0",
    "Source": [
      {
        "AIMID": "PGM-PRC"
      }
    ]
  }
}
"""


def make(levels: int = LEVELS) -> bytes:
    """The UTF-8 bytes of the message, with SceneContext.Layers ``levels`` arrays deep."""
    return (HEAD + "[" * levels + "]" * levels + TAIL).encode("utf-8")


if __name__ == "__main__":
    target = Path(__file__).with_name("too-deep.json")
    target.write_bytes(make())
    print(f"wrote {target} ({target.stat().st_size:,} bytes)")
