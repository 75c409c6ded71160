"""``pgm-explore table``: one table of a transcript, as CSV or JSON (layer 5, docs/tables.md).

The transcript is read as a stream and the table built by :mod:`pgm_explore.analysis` as its
messages go by (pandas, imported only when the command runs): what is kept is the table's rows.
"""

from __future__ import annotations

import argparse
import math
import textwrap
from typing import IO, TYPE_CHECKING, Any

from pgm_explore._progress import progress
from pgm_explore.analysis import TABLE_CATALOG, Table
from pgm_explore.cli._check import refuse, unreadable
from pgm_explore.cli._options import Command, add_corpus_options, add_engine_options
from pgm_explore.cli._output import EXIT_OK, EXIT_USAGE, PROG, clean, encode, input_size, stdin_notice, write_text
from pgm_explore.cli._process import keep_to_the_end
from pgm_explore.io import UnreadablePath

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COMMAND", "FORMULA_START", "TABLE_NAMES", "formulas_defused", "json_records"]

# From the catalog, which imports no pandas: the parser (and --help) stays light.
TABLE_NAMES = tuple(table.name for table in TABLE_CATALOG)

_CHUNK = 1 << 16  # characters per write of a table

_HELP_WIDTH = 90  # as the lines were wrapped by hand before: --help is a contract


def _listed(table: Table) -> str:
    """The table's lines under "tables:", its help wrapped beside its name."""
    return textwrap.fill(table.help, _HELP_WIDTH, initial_indent=f"  {table.name:<15}", subsequent_indent=" " * 17)


EPILOG = (
    "tables (docs/tables.md describes every column, its dtype and meaning):\n"
    + "".join(_listed(table) + "\n" for table in TABLE_CATALOG)
    + """
inputs:
  As for 'pgm-explore check': all PATHs form one transcript, read in order; - is
  standard input. It is read as check reads it, in this process, and the table
  keeps its rows, not the messages. Findings never change the exit status:
  'pgm-explore check' is the command for that.

corpus (--corpus):
  Each file is a transcript of its own, read as 'pgm-explore check --corpus' reads
  them (a directory stands for its *.jsonl and *.json files, recursively, sorted by
  path), and the table is ONE table over all of them: each transcript's rows, in
  the corpus's order, with a first column 'transcript', the path of the file the
  row comes from. --workers N and --scheduler ADDRESS build each transcript's table
  on local worker processes or an existing Dask cluster, as for check; the table
  is the same. If one transcript cannot be read, nothing is written.

progress:
  On a terminal, work that takes more than two seconds shows a progress bar on
  stderr; --no-progress hides it. Never on stdout.

output:
  csv (default)      a header row with the column names in the documented order, then
                     one line per row, no index column; a missing value is an empty field.
                     A text cell that a spreadsheet would run as a formula (it starts with
                     = + - @, a tab or a carriage return: messages may carry such text, e.g.
                     a QueryID =HYPERLINK(...)) gets a leading ', as the OWASP guidance on
                     CSV injection says; --no-csv-escape writes every cell as it is
  json               ONE JSON array of records, one record (an object with the columns
                     as keys, in the same order) per line; a missing value (NA, NaN) is
                     null; an empty table is []

exit status:
  0    the table was written
  2    usage error, a PATH (with --corpus: a transcript) that could not be read
       (nothing is written), the output that could not be written (a full disk),
       workers that died under the work, or a cluster with no worker
  130  interrupted (Ctrl-C)
  141  the output was closed early (e.g. piped into head)
  143  stopped by SIGTERM (kill, timeout)

examples:
  pgm-explore table feasibility session.jsonl
  pgm-explore table exchanges --format json session.jsonl | jq '.[] | select(.response == null)'
  pgm-explore table pastatus monday.jsonl tuesday.jsonl > pa-status.csv
  pgm-explore table pastatus --corpus logs/ > pa-status-per-session.csv
"""
)


def arguments(parser: argparse.ArgumentParser) -> None:
    """The options and arguments of ``pgm-explore table``."""
    parser.add_argument("what", choices=TABLE_NAMES, metavar="WHAT", help=f"the table: {', '.join(TABLE_NAMES)}")
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a .json or .jsonl file, or - for standard input; all PATHs form one transcript, in order "
        "(with --corpus: files and directories, each file a transcript)",
    )
    parser.add_argument(
        "--format",
        choices=("csv", "json"),
        default="csv",
        help="csv (default): header row, no index; json: one array of records, null where a value is missing",
    )
    parser.add_argument(
        "--no-csv-escape",
        dest="csv_escape",
        action="store_false",
        help="write text cells as they are, even those a spreadsheet would run as a formula "
        "(default: a cell starting with = + - @, a tab or a carriage return gets a leading ')",
    )
    add_corpus_options(parser)
    add_engine_options(
        parser,
        "with --corpus: build the transcripts' tables on N local worker processes (0: in this process; "
        "default: this process for a small corpus, one worker per core from 512 MiB on)",
        "with --corpus: build them on the existing Dask cluster whose scheduler is at ADDRESS "
        "(e.g. tcp://10.0.0.5:8786); its workers must see the same files (relative paths are read from "
        "this folder)",
    )


def run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    if args.corpus:
        frame = corpus_frame(args, err)
        if frame is None:
            return EXIT_USAGE
    else:
        if needs_corpus("table", args, err):
            return EXIT_USAGE
        problems = unreadable(args.paths)
        if problems:
            return refuse("table", problems, args.paths, err)
        for path in args.paths:
            stdin_notice("table", path, err)
        # Imported here: pandas takes longer to import than validating thousands of messages.
        from pgm_explore.analysis._tables import path_table

        try:
            with progress(input_size(args.paths), "B", stream=err, show=args.progress, what="table") as bar:
                # Read as a stream on the bulk path, as check reads: the table's rows are kept, not
                # the messages, so a log of any length takes the memory of its table.
                frame = path_table(args.what, args.paths, bar=bar)
        except UnreadablePath as exc:
            return refuse("table", [exc], args.paths, err)
        keep_to_the_end(frame)  # (a row a message for some tables: a second or more to free for millions)
    if args.format == "csv":
        text = (formulas_defused(frame) if args.csv_escape else frame).to_csv(index=False, lineterminator="\n")
    else:
        text = json_records(frame)
    # In pieces: one large write to a pipe whose reader left (| head) can end without an
    # error, where validate and check end with status 141; pieces end the same way.
    for start in range(0, len(text), _CHUNK):
        write_text(out, text[start : start + _CHUNK])
    return EXIT_OK


def corpus_frame(args: argparse.Namespace, err: IO[str]) -> pd.DataFrame | None:
    """``table WHAT --corpus``: the table of every transcript, one under the other, with the
    transcript's path first (None, with the reason on ``err``, if one cannot be read)."""
    from pgm_explore._engine import EngineUnavailable
    from pgm_explore.analysis import Corpus

    try:
        corpus = Corpus(*args.paths, workers=args.workers, scheduler=args.scheduler, progress=args.progress)
        if args.what not in TABLE_NAMES:  # pragma: no cover - argparse allows no other
            raise ValueError(args.what)
        return corpus._frame(args.what, err)  # (the bar on this command's stderr, never a notebook's)
    except (UnreadablePath, EngineUnavailable) as exc:
        err.write(f"{PROG} table: {clean(str(exc))}\n")
        return None


def needs_corpus(command: str, args: argparse.Namespace, err: IO[str]) -> bool:
    """Whether ``--workers`` or ``--scheduler`` came without ``--corpus`` (said on ``err``):
    one transcript is checked in this process."""
    if args.workers is None and args.scheduler is None:
        return False
    err.write(f"{PROG} {command}: --workers and --scheduler go with --corpus\n")
    return True


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet take a cell for a formula (OWASP, CSV Injection)."""


def formulas_defused(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell that a spreadsheet would run as a formula (it starts with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) prefixed with a single quote, as the
    OWASP guidance on CSV injection says: the cells come from messages, which anyone may write.
    Numbers stay numbers (``-1`` is no formula).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"a": pd.Series(['=HYPERLINK("http://x")', "ok", None], dtype="string"), "n": [-1, 2, 3]})
    >>> print(formulas_defused(frame).to_csv(index=False), end="")
    a,n
    "'=HYPERLINK(""http://x"")",-1
    ok,2
    ,3
    """

    def formula(value: Any) -> bool:
        return isinstance(value, str) and value.startswith(FORMULA_START)

    out = frame.copy(deep=False)  # (copy on write: a column is copied only if a cell of it changes)
    for name in out.columns:
        column = out[name]
        if column.dtype == "string":
            # (Looked at by Arrow, and only the few cells that need it changed: mapping a Python
            # function over every cell took as long as writing the CSV.)
            risky = column.str.startswith(FORMULA_START).fillna(False).to_numpy(dtype=bool)
        elif column.dtype == object:
            risky = column.map(formula).to_numpy(dtype=bool)
        else:
            continue
        if risky.any():
            out.loc[risky, name] = "'" + column[risky]
    return out


def json_records(frame: pd.DataFrame) -> str:
    """The table as one JSON array, a record per line, ``null`` for NA and NaN.

    Not ``DataFrame.to_json``: it writes ``/`` as ``\\/`` and rounds floats to ten digits.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"a": pd.Series(["x", None], dtype="string"), "b": [1.5, float("nan")]})
    >>> print(json_records(frame), end="")
    [
    {"a":"x","b":1.5},
    {"a":null,"b":null}
    ]
    >>> json_records(frame.iloc[:0])
    '[]\\n'
    """
    import pandas as pd

    columns = [str(name) for name in frame.columns]

    def plain(value: Any) -> Any:
        if hasattr(value, "item"):  # a NumPy scalar
            value = value.item()
        if value is None or value is pd.NA or (isinstance(value, float) and not math.isfinite(value)):
            return None
        return value

    records = [
        encode(dict(zip(columns, map(plain, row), strict=True))) for row in frame.itertuples(index=False, name=None)
    ]
    return "[\n" + ",\n".join(records) + "\n]\n" if records else "[]\n"


COMMAND = Command(
    "table",
    help="print a table of a transcript (messages, exchanges, feasibility, ...) as CSV or JSON",
    description="Print one table of a PGM-AUA V1.0 transcript, as pgm_explore.analysis builds it:\n"
    "fixed columns in a fixed order, one row per message, exchange, Process Action, ...",
    epilog=EPILOG,
    arguments=arguments,
    run=run,
)
