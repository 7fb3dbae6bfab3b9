"""``rag-bench make-suite``: a suite from one JSONL set whose queries name their workspace.

Each line of the set is one query::

    {"id": "api-001", "repo": "api", "query": "...", "relevant": [...], "category": "symbol"}

``--by repo`` names the field that holds the workspace's folder (relative to ``--corpora``); ``relevant`` holds
rag-bench labels (``path``, ``path:START-END``, ...) or objects ``{"path": ..., "start_line": ..., "end_line":
...}`` (a line span when both lines are given, else the whole file); ``--category`` names the field read as
the query's category. Other fields are ignored. It writes ``suite.toml`` and one queries file per workspace
under ``queries/`` in ``--out``, with the workspaces in name order.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path, PurePosixPath
from typing import Any

from agentty_rag.bench.console import UsageError, warn
from agentty_rag.bench.datasets import json_object, query_text


def _label(raw: Any, where: str) -> str:
    """A rag-bench label from a label string or a ``{"path", "start_line", "end_line"}`` object."""
    if isinstance(raw, str) and raw.strip():
        return raw
    if isinstance(raw, dict) and isinstance(raw.get("path"), str) and raw["path"].strip():
        start, end = raw.get("start_line"), raw.get("end_line")
        if isinstance(start, int) and isinstance(end, int):
            return f"{raw['path']}:{start}-{end}"
        return str(raw["path"])
    raise UsageError(f'{where}: each "relevant" item must be a label or an object with a "path"')


def _folder(value: Any, field: str, where: str) -> str:
    """The workspace folder a query names: a relative path that stays under the corpora folder."""
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f'{where}: "{field}" must name the workspace\'s folder (a non-empty string)')
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts:
        raise UsageError(f'{where}: "{field}" must be a folder under --corpora (got {value!r})')
    return str(path)


def _entry(line: str, where: str, number: int, args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """(workspace folder, the query in rag-bench's queries format) of line ``number`` of the set."""
    data = json_object(line, where)
    text, relevant = query_text(data, where), data.get("relevant")
    if not isinstance(relevant, list) or not relevant:
        raise UsageError(f'{where}: "relevant" must be a non-empty list')
    entry: dict[str, Any] = {
        "id": str(data.get("id", f"line{number}")),
        "query": text,
        "relevant": [_label(item, where) for item in relevant],
    }
    category = data.get(args.category)
    if category is not None:
        entry["category"] = str(category)
    return _folder(data.get(args.by), args.by, where), entry


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def make_suite(args: argparse.Namespace) -> int:
    """Write ``suite.toml`` and the queries files; 2 for an unusable set or an existing manifest."""
    manifest = args.out / "suite.toml"
    if manifest.exists():
        raise UsageError(f"{manifest} exists; remove it or choose another --out")
    try:
        lines = args.queries.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{args.queries}: cannot read ({error})") from error
    groups: dict[str, list[dict[str, Any]]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{args.queries}:{number}"
        folder, entry = _entry(line, where, number, args)
        group = groups.setdefault(folder, [])
        if any(e["id"] == entry["id"] for e in group):
            raise UsageError(f"{where}: duplicate id {entry['id']!r} in workspace {folder!r}")
        group.append(entry)
    if not groups:
        raise UsageError(f"{args.queries}: no queries")
    corpora = args.corpora.expanduser().resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    text = [
        f"# Written by rag-bench make-suite from {args.queries.name}: {len(groups)} workspaces.",
        "[suite]",
        f"corpus = {_toml_string(args.corpus)}",
        f"level = {_toml_string(args.level)}",
    ]
    for folder in sorted(groups):
        queries_file = Path("queries") / f"{folder}.jsonl"
        target = args.out / queries_file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in groups[folder]), encoding="utf-8")
        root = corpora / folder
        if not root.is_dir():
            warn(f"{root} is not a folder yet; the suite stops there until it is")
        text += ["", "[[workspace]]", f"name = {_toml_string(folder)}", f"path = {_toml_string(str(root))}"]
        text.append(f"queries = {_toml_string(queries_file.as_posix())}")
    manifest.write_text("\n".join(text) + "\n", encoding="utf-8")
    count = sum(len(entries) for entries in groups.values())
    print(f"wrote {manifest}: {len(groups)} workspaces, {count:,} queries")
    return 0


__all__ = ["make_suite"]
