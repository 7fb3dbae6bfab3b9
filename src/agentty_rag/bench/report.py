"""rag-bench's terminal tables: plain columns, the same figures the JSON report holds."""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentty_rag import __version__
from agentty_rag.bench.metrics import MISS_TOKENS

# (column heading, key in a summary row); ms columns are shown with one decimal, the others with three.
LADDER_COLUMNS = (
    ("recall@1", "recall@1"),
    ("recall@5", "recall@5"),
    ("recall@10", "recall@10"),
    ("MRR", "mrr"),
    ("nDCG@10", "ndcg@10"),
    ("ms p50", "ms_p50"),
    ("ms p95", "ms_p95"),
)
SUITE_COLUMNS = (
    ("recall@5", "recall@5"),
    ("recall@10", "recall@10"),
    ("hit@1", "hit@1"),
    ("hit@5", "hit@5"),
    ("hit@10", "hit@10"),
    ("MRR", "mrr"),
    ("nDCG@10", "ndcg@10"),
    ("ms p50", "ms_p50"),
)
# Token efficiency: the share of queries whose first found passage ends within each budget, and the mean
# tokens read to it.
TOKEN_COLUMNS = (
    ("≤500 tokens", "tokens@500"),
    ("≤1k tokens", "tokens@1k"),
    ("≤2k tokens", "tokens@2k"),
    ("≤4k tokens", "tokens@4k"),
    ("expected tokens", "expected_tokens"),
)
TOKEN_CAPTION = (
    "token efficiency: share of queries whose first found passage ends within N tokens of the answer's text;"
    f" expected tokens read to it (a miss counts {MISS_TOKENS:,})"
)


def columns(lines: Sequence[Sequence[str]]) -> str:
    """Rows of cells as left-aligned columns, two spaces apart."""
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in lines)


def ratio(value: float) -> str:
    return "-" if value != value else f"{value:.3f}"


def figure(key: str, value: float | None) -> str:
    """A figure as a table shows it; ``-`` for one not measured (the baseline's tokens)."""
    if value is None:
        return "-"
    if key == "expected_tokens":
        return f"{value:,.0f}"
    return f"{value:.1f}" if key.startswith("ms_") else f"{value:.3f}"


def metrics_table(
    rows: Sequence[Mapping[str, Any]],
    heading: Sequence[str] = ("rung",),
    cells: Sequence[str] = ("rung",),
    metric_columns: Sequence[tuple[str, str]] = LADDER_COLUMNS,
) -> str:
    """One line per row: its ``cells`` (keys shown as text under ``heading``), then its figures; the rung
    that is the default configuration says so."""
    lines = [[*heading, *(title for title, _ in metric_columns)]]
    for row in rows:
        line = [f"{row[key]} (default)" if key == "rung" and row.get("default") else str(row[key]) for key in cells]
        lines.append(line + [figure(key, row.get(key)) for _, key in metric_columns])
    return columns(lines)


def token_table(
    rows: Sequence[Mapping[str, Any]],
    heading: Sequence[str] = ("rung",),
    cells: Sequence[str] = ("rung",),
    over: str = "",
) -> str:
    """The token efficiency of ``rows`` under its caption (``over`` says which rows): ``-`` for a row that has
    none, the baseline."""
    caption = f"{over} · {TOKEN_CAPTION}" if over else TOKEN_CAPTION
    return caption + "\n" + metrics_table(rows, heading, cells, TOKEN_COLUMNS)


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """The report as JSON: keys sorted, so two runs can be diffed."""
    path.write_text(json.dumps(data, indent=2, sort_keys=True, default=str), encoding="utf-8")


def machine() -> dict[str, Any]:
    """The machine a report was measured on (for its JSON)."""
    return {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


def machine_line() -> str:
    return f"machine: {os.cpu_count()} cores · Python {platform.python_version()} · agentty-rag {__version__}"


def levers_table(levers: Mapping[str, Mapping[str, float]]) -> str:
    """The token-economy table: one row per lever switched off, against all off and against no
    water-filling and no extraction (the same ranking with only the floor and confidence scaling)."""
    base = levers["all levers off"]["tokens_per_query"] or 1.0
    plain = levers["- water-filling, - extractive"]["tokens_per_query"] or 1.0
    header = [
        "token economy (same ranking)",
        "bytes/q",
        "tokens/q",
        "vs all off",
        "vs no wf/extr",
        "answers in output",
        "answer retention",
    ]
    lines = [header]
    for name, row in levers.items():
        tokens = row["tokens_per_query"]
        lines.append(
            [
                name,
                f"{row['bytes_per_query']:.0f}",
                f"{tokens:.0f}",
                f"{tokens / base - 1:+.0%}",
                f"{tokens / plain - 1:+.0%}",
                ratio(row["answers_in_output"]),
                ratio(row["answer_retention"]),
            ]
        )
    return columns(lines)


__all__ = [
    "LADDER_COLUMNS",
    "SUITE_COLUMNS",
    "TOKEN_CAPTION",
    "TOKEN_COLUMNS",
    "columns",
    "figure",
    "levers_table",
    "machine",
    "machine_line",
    "metrics_table",
    "ratio",
    "token_table",
]
