"""The benchmarks page, written from the committed result files ``docs/benchmarks/*.json``.

A result file is one measured set: what was measured, when, on which machine, by which command, in which
configuration, and a table of configurations (rows) by metrics (columns), with optional notes::

    {
      "set": "Fixture code",                      # the section's heading
      "order": 20,                                # optional: sections are sorted by it, then by file name
      "about": "83 files in 17 languages; ...",   # what the set is (one paragraph)
      "date": "2026-12-05",                       # when it was measured (YYYY-MM-DD)
      "machine": {"cores": 2, "python": "3.11.7", "platform": "Linux x86_64"},
      "version": "0.1.0",                         # optional: the agentty-rag version measured
      "command": "rag-bench code --root fixtures/code ...",
      "configuration": "BM25 mode (no embedding server); every other setting at its default",
      "columns": [{"key": "mrr", "title": "MRR"}, {"key": "ms_p50", "title": "ms p50", "digits": 1}],
      "rows": [{"configuration": "bm25", "mrr": 0.413, "ms_p50": 0.9}, ...],
      "default": "+budget",                       # optional: the row that is the default configuration
      "notes": ["..."]                            # optional: one paragraph each
    }

A number is shown with the column's ``digits`` (3 unless it says otherwise), an integer with thousands
separators, anything else as written; a row may leave a column out or give it null (shown as ``-``: not
measured). ``from_rag_bench`` turns the ``--json`` report of ``rag-bench docs|code`` into such a file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentty_rag.errors import ResultFileError

RESULTS = "docs/benchmarks"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_REQUIRED = ("set", "about", "date", "machine", "command", "configuration", "columns", "rows")
# The columns a rag-bench ladder gives a result file, in its tables' order.
LADDER_COLUMNS = (
    ("recall@1", "recall@1", 3),
    ("recall@5", "recall@5", 3),
    ("recall@10", "recall@10", 3),
    ("mrr", "MRR", 3),
    ("ndcg@10", "nDCG@10", 3),
    ("tokens@500", "≤500 tokens", 3),
    ("tokens@1k", "≤1k tokens", 3),
    ("tokens@2k", "≤2k tokens", 3),
    ("tokens@4k", "≤4k tokens", 3),
    ("expected_tokens", "expected tokens", 0),
    ("ms_p50", "ms p50", 1),
)


def _checked(data: object, name: str) -> dict[str, Any]:
    """A result file's content, or ``ResultFileError`` naming the file and what is wrong with it."""
    if not isinstance(data, dict):
        raise ResultFileError(f"{name}: a result file holds one JSON object")
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise ResultFileError(f"{name}: missing {', '.join(missing)}")
    if not isinstance(data["date"], str) or not _DATE.match(data["date"]):
        raise ResultFileError(f"{name}: date must be YYYY-MM-DD (got {data['date']!r})")
    machine = data["machine"]
    if not isinstance(machine, dict) or not isinstance(machine.get("cores"), int):
        raise ResultFileError(f"{name}: machine must be an object with the number of cores")
    columns = data["columns"]
    if not isinstance(columns, list) or not columns or not all(isinstance(c, dict) and "key" in c for c in columns):
        raise ResultFileError(f"{name}: columns must be a list of objects with a key")
    rows = data["rows"]
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) and "configuration" in r for r in rows):
        raise ResultFileError(f"{name}: rows must be a list of objects, each with its configuration")
    return data


def load(folder: Path) -> list[dict[str, Any]]:
    """Every result file of ``folder``, in page order."""
    results = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ResultFileError(f"{path.name}: not a JSON file ({error})") from None
        results.append(_checked(data, path.name))
    return sorted(results, key=lambda r: r.get("order", 0))


def _number(value: object, digits: int) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def _machine(machine: Mapping[str, Any]) -> str:
    parts = [f"{machine['cores']} cores"]
    if machine.get("python"):
        parts.append(f"Python {machine['python']}")
    if machine.get("platform"):
        parts.append(str(machine["platform"]))
    return ", ".join(parts)


def section(result: Mapping[str, Any]) -> list[str]:
    """One result file as a page section: heading, what and how, the table, the notes."""
    version = f", agentty-rag {result['version']}" if result.get("version") else ""
    lines = [f"## {result['set']}", "", str(result["about"]), ""]
    lines += [f"Measured on {result['date']} ({_machine(result['machine'])}{version}).", ""]
    lines += [f"Configuration: {result['configuration']}.", ""]
    lines += ["```sh", str(result["command"]), "```", ""]
    columns = result["columns"]
    lines.append("| configuration | " + " | ".join(str(c.get("title", c["key"])) for c in columns) + " |")
    lines.append("|---" * (len(columns) + 1) + "|")
    for row in result["rows"]:
        name = str(row["configuration"])
        if name == result.get("default"):
            name = f"**{name} (default)**"
        cells = [_number(row.get(c["key"]), int(c.get("digits", 3))) for c in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    for note in result.get("notes", []):
        lines += [str(note), ""]
    return lines


def page_part(root: Path) -> str:
    """The generated part of the benchmarks page: one section per result file."""
    results = load(root / RESULTS)
    if not results:
        return "No result files yet."
    lines: list[str] = []
    for result in results:
        lines += section(result)
    return "\n".join(lines).rstrip("\n")


def from_rag_bench(
    report: Mapping[str, Any],
    set_name: str,
    command: str,
    about: str,
    configuration: str,
    date: str,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """A result file made from the ``--json`` report of ``rag-bench docs|code``: one row per rung, with the
    columns the report measured (the token figures, for instance, on every rung but the baseline)."""
    measured = [(key, title, digits) for key, title, digits in LADDER_COLUMNS if any(key in r for r in report["rungs"])]
    rows = []
    default = ""
    for rung in report["rungs"]:
        rows.append({"configuration": rung["rung"], **{key: rung[key] for key, _, _ in measured if key in rung}})
        if rung.get("default"):
            default = rung["rung"]
    machine = report["machine"]
    result: dict[str, Any] = {
        "set": set_name,
        "about": about,
        "date": date,
        "machine": {"cores": machine["cores"], "python": machine["python"], "platform": machine["platform"]},
        "version": report["version"],
        "command": command,
        "configuration": configuration,
        "columns": [{"key": key, "title": title, "digits": digits} for key, title, digits in measured],
        "rows": rows,
    }
    if default:
        result["default"] = default
    if notes:
        result["notes"] = list(notes)
    return _checked(result, set_name)


__all__ = ["LADDER_COLUMNS", "RESULTS", "from_rag_bench", "load", "page_part", "section"]
