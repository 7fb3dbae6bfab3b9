"""Learned memory: facts an agent recorded about the project.

Two formats, both under the memory folder (``.agentty/memory/`` by default):

* ``*.md`` — one fact per file; optional front matter ``id``, ``tags``, ``created``; the id defaults to the
  file name without ``.md``.
* ``*.jsonl`` — a log, one JSON object per line: ``{"id": "...", "text": "...", "tags": [...],
  "created": "..."}``. A later line with the same id replaces the earlier one; ``{"id": "...",
  "deleted": true}`` removes it. Lines that are not objects with a string ``id`` and ``text`` are skipped
  with a warning.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentty_rag.sources.base import LoadResult
from agentty_rag.sources.frontmatter import field_text, parse_front_matter
from agentty_rag.sources.text import decode
from agentty_rag.sources.walker import ListingCache, ScanResult, SkipReport, WalkRules, scan_tree
from agentty_rag.types import Document, FileStamp

MEMORY_SUFFIXES = (".md", ".jsonl")


def parse_fact_log(text: str, where: str) -> tuple[list[Document], list[str]]:
    """Facts of a JSONL log with replace/delete semantics, in order of each id's latest line."""
    facts: dict[str, Document] = {}
    warnings: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as error:
            warnings.append(f"{where}:{number}: not JSON ({error.msg}); line skipped")
            continue
        except RecursionError:
            warnings.append(f"{where}:{number}: nested too deeply to read; line skipped")
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"].strip():
            warnings.append(f'{where}:{number}: a fact needs a string "id"; line skipped')
            continue
        fact_id = entry["id"].strip()
        if entry.get("deleted") is True:
            facts.pop(fact_id, None)
            continue
        body = entry.get("text", entry.get("fact"))
        if not isinstance(body, str) or not body.strip():
            warnings.append(f'{where}:{number}: fact {fact_id} needs a string "text"; line skipped')
            continue
        tags = entry.get("tags", [])
        title = " ".join(str(t) for t in tags) if isinstance(tags, list) else str(tags)
        facts.pop(fact_id, None)  # the latest line decides the order too
        facts[fact_id] = Document("memory", fact_id, body.strip(), language="text", title=title, first_line=number)
    return list(facts.values()), warnings


class MemorySource:
    """Facts in Markdown files and JSONL logs under one folder."""

    name = "memory"

    def __init__(self, folder: Path, workspace: Path, max_bytes: int) -> None:
        self.folder = folder
        self.workspace = workspace
        self.max_bytes = max_bytes
        self._listings = ListingCache()  # the folders of the last scan

    def scan(self) -> ScanResult:
        if not self.folder.is_dir():
            return ScanResult([], SkipReport())
        rules = WalkRules(accept=lambda n: n.endswith(MEMORY_SUFFIXES), key_prefix="memory:", max_bytes=self.max_bytes)
        return scan_tree(self.folder, self.workspace, rules, self._listings)

    def parse(self, stamp: FileStamp, data: bytes) -> LoadResult:
        loaded = decode(data)
        if loaded.text is None:
            return LoadResult(skip_reason=loaded.skip_reason)
        rel = stamp.key.removeprefix("memory:")
        if rel.endswith(".jsonl"):
            documents, warnings = parse_fact_log(loaded.text, rel)
            return LoadResult(tuple(documents), warnings=tuple(warnings))
        matter = parse_front_matter(loaded.text)
        fact_id = field_text(matter.fields, "id") or Path(rel).stem
        if not matter.body.strip():
            return LoadResult(skip_reason="empty fact")
        title = field_text(matter.fields, "tags")
        document = Document(
            "memory", fact_id, matter.body, language="markdown", title=title, first_line=matter.body_line
        )
        return LoadResult((document,))

    def describe(self) -> str:
        return f"memory folder {self.folder}"


__all__ = ["MEMORY_SUFFIXES", "MemorySource", "parse_fact_log"]
