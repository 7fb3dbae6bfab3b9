"""Labeled queries: reading them, and deciding whether a hit answers a label.

A queries file has one JSON object per line::

    {"id": "d001", "query": "...", "relevant": ["guide/auth.md#Tokens", "skill:NAME"], "answers": ["..."],
     "category": "..."}

``relevant`` entries take these forms (paths relative to the corpus root — the docs folder for docs, the
workspace root for code —, or for docs relative to the workspace root, as ``scope`` accepts them):

* ``path`` — the whole file;
* ``path#Heading`` — the section under that heading (its deepest heading);
* ``path:START-END`` — a line span;
* ``path:Symbol.name`` — a definition (matched as a dot-boundary suffix of the chunk's symbol path); a member
  (``CliRunner.isolation``) is matched only by a passage that holds it — its own chunk, a passage over its
  lines, or the chunk of a class kept whole that holds it — never by another chunk of its class (the class
  header, a sibling method);
* ``skill:NAME``, ``memory:ID`` — a skill or a memory fact.

``answers`` and ``category`` (a group the reports average over) are optional. The query text is read as the
tools receive it: whitespace runs collapsed to one space, cut to the tools' length limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentty_rag.chunking.code import chunk_code
from agentty_rag.chunking.languages import spec_named
from agentty_rag.errors import QueriesError
from agentty_rag.source_kinds import SOURCES, kinds_of
from agentty_rag.types import Chunk, Document, Hit
from agentty_rag.workspace.request import MAX_QUERY_CHARS
from agentty_rag.workspace.service import Workspace

_SPAN = re.compile(r"^(.*):(\d+)-(\d+)$")


@dataclass(frozen=True)
class Label:
    """One relevant item: a file, and optionally a heading, line span or symbol inside it."""

    source: str  # docs, skill, memory, code
    path: str
    heading: str = ""
    span: tuple[int, int] | None = None
    symbol: str = ""
    # The lines of ``symbol``'s definition, found in the corpus by ``reconcile`` (``definition_spans``).
    symbol_spans: tuple[tuple[int, int], ...] = ()

    @classmethod
    def parse(cls, raw: str, corpus: str) -> Label:
        text = raw.strip()
        for kind in SOURCES.values():
            if not kind.located and text.startswith(kind.name + ":"):
                return cls(kind.name, text[len(kind.name) + 1 :])
        for kind in SOURCES.values():
            if kind.located:
                text = text.removeprefix(kind.name + ":")
        # a path names a file of the corpus's own kind of files
        source = next(kind.name for kind in kinds_of(corpus) if kind.located)
        if "#" in text:
            path, heading = text.split("#", 1)
            return cls(source, path, heading=" ".join(heading.split()))
        span = _SPAN.match(text)
        if span:
            return cls(source, span.group(1), span=(int(span.group(2)), int(span.group(3))))
        if ":" in text:
            path, symbol = text.split(":", 1)
            return cls(source, path, symbol=symbol)
        return cls(source, text)

    @property
    def file_id(self) -> str:
        return f"{self.source}:{self.path}"

    def matches_file(self, chunk: Chunk) -> bool:
        return chunk.source == self.source and chunk.ref == self.path

    def matches_passage(self, hit: Hit, answers: tuple[str, ...] = ()) -> bool:
        """Whether ``hit`` is (or holds) this item; a stitched hit holds each of its parts.

        A symbol label matches a passage that holds the definition: one carrying its symbol, or reaching the
        lines of its definition (``symbol_spans``: its own chunks, or its place inside a class kept whole).
        Where no grammar tells those lines, a passage naming the member and its owner matches, when it
        holds one of the query's ``answers`` (if it has any).
        """
        chunk = hit.chunk
        if not self.matches_file(chunk):
            return False
        if chunk.kind == "file":
            return True  # a whole-file hit (the baseline) holds every passage of its file
        if self.heading:
            deepest = [" ".join(p.context.split(" > ")[-1].split()).lower() for p in hit.pieces if p.context]
            return self.heading.lower() in deepest
        if self.span is not None:
            return chunk.start_line <= self.span[1] and self.span[0] <= chunk.end_line
        if self.symbol:
            return self._holds_symbol(hit, answers)
        return True

    def _holds_symbol(self, hit: Hit, answers: tuple[str, ...]) -> bool:
        symbols = [p.symbol for p in hit.pieces if p.symbol]
        if any(names(s, self.symbol) for s in symbols):
            return True
        chunk = hit.chunk
        if self.symbol_spans:  # where the definition is: a passage holds it when it reaches its lines
            return any(chunk.start_line <= end and start <= chunk.end_line for start, end in self.symbol_spans)
        # no grammar told where it is: a passage naming the member and its owner (and holding the answers)
        text = chunk.text
        parts = [part for part in self.symbol.split(".")[-2:] if part]
        named = all(re.search(rf"(?<!\w){re.escape(part)}(?!\w)", text) for part in parts)
        return named and (not answers or any(a in text for a in answers))


def names(symbol_path: str, symbol: str) -> bool:
    """Whether a chunk's ``symbol_path`` is ``symbol``, or ends with it at a dot (``pkg.Pool.submit``)."""
    return symbol_path == symbol or symbol_path.endswith("." + symbol)


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    labels: tuple[Label, ...]
    answers: tuple[str, ...] = ()
    category: str = ""


def as_tool_query(text: str) -> str:
    """The query as ``search_docs`` and ``search_code`` receive it (a long issue text is cut the same way)."""
    return " ".join(text.split())[:MAX_QUERY_CHARS]


def chunk_file_id(chunk: Chunk) -> str:
    return f"{chunk.source}:{chunk.ref}"


def json_object(line: str, where: str) -> dict[str, Any]:
    """One line of a JSONL file as an object; ``QueriesError`` naming ``where`` (file:line) otherwise."""
    try:
        entry = json.loads(line)
    except json.JSONDecodeError as error:
        raise QueriesError(f"{where}: not JSON ({error.msg})") from error
    if not isinstance(entry, dict):
        raise QueriesError(f"{where}: expected a JSON object")
    return entry


def query_text(entry: dict[str, Any], where: str) -> str:
    text = entry.get("query")
    if not isinstance(text, str) or not text.strip():
        raise QueriesError(f'{where}: "query" must be a non-empty string')
    return text


def reconcile(
    queries: Sequence[Query], chunks: Sequence[Chunk], corpus: str, docs_prefix: str = ""
) -> tuple[list[Query], list[str]]:
    """Labels as the corpus names its files, and a warning for each label that matches nothing.

    Docs passages are named by their path from the workspace root (``docs/guide/install.md``); a docs label
    written relative to the docs folder (``guide/install.md``) is read as that folder's file: ``docs_prefix``
    (the docs folder relative to the workspace, ``docs/``) before it, else the one file of the corpus whose
    path ends with it. The queries still run with the labels that match nothing.
    """
    by_file: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_file.setdefault(chunk_file_id(chunk), []).append(chunk)
    fixed: list[Query] = []
    warnings: list[str] = []
    for query in queries:
        labels: list[Label] = []
        for label in query.labels:
            if label.file_id not in by_file and label.source == "docs":
                found = _docs_file(label.path, docs_prefix, by_file)
                label = replace(label, path=found) if found else label
            own = by_file.get(label.file_id, [])
            if label.symbol:
                label = replace(label, symbol_spans=definition_spans(own, label.symbol))
            labels.append(label)
            if not own:
                warnings.append(f"query {query.id}: {label.file_id} is not in the {corpus} corpus")
            elif not any(label.matches_passage(Hit(c, 0.0)) for c in own):
                warnings.append(f"query {query.id}: {_describe(label)} names no passage of {label.file_id}")
        fixed.append(replace(query, labels=tuple(labels)))
    return fixed, warnings


def _docs_file(path: str, docs_prefix: str, by_file: Mapping[str, object]) -> str:
    """The corpus's docs file a label relative to the docs folder names ("" when none, or several)."""
    if docs_prefix and f"docs:{docs_prefix}{path}" in by_file:
        return docs_prefix + path
    ending = "/" + path.lstrip("/")
    found = [key.removeprefix("docs:") for key in by_file if key.startswith("docs:") and key.endswith(ending)]
    return found[0] if len(found) == 1 else ""


def definition_spans(chunks: Sequence[Chunk], symbol: str) -> tuple[tuple[int, int], ...]:
    """The lines of ``symbol``'s definition among one file's ``chunks``: the chunks that carry it, else where
    it sits inside a chunk that holds it (a class kept whole, a module holding the class), found by cutting
    each chunk again down to single definitions; () when neither tells (a language with no grammar)."""
    spans = tuple((c.start_line, c.end_line) for c in chunks if c.symbol and names(c.symbol, symbol))
    if spans:
        return spans
    found: list[tuple[int, int]] = []
    for chunk in chunks:
        try:
            language = spec_named(chunk.language)
        except KeyError:
            continue
        document = Document(chunk.source, chunk.ref, chunk.text, chunk.language)
        offset = chunk.start_line - 1
        found += [
            (part.start_line + offset, part.end_line + offset)
            for part in chunk_code(document, language, 1)  # 1 character: every definition is cut apart
            if part.symbol and names(part.symbol, symbol)
        ]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):  # a definition cut into line windows is one span again
        if merged and start <= merged[-1][1] + 2:  # a blank line between two windows
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return tuple(merged)


def _describe(label: Label) -> str:
    if label.heading:
        return f"the heading {label.heading!r}"
    if label.span is not None:
        return f"the lines {label.span[0]}-{label.span[1]}"
    return f"the symbol {label.symbol!r}"


def docs_prefix_of(workspace: Workspace) -> str:
    """The docs folder relative to the workspace (``docs/``), or "" when it lies elsewhere."""
    docs = workspace.docs_root()
    if workspace.root not in docs.parents:
        return ""
    return docs.relative_to(workspace.root).as_posix() + "/"


def load_queries(path: Path, corpus: str) -> list[Query]:
    """Read a labeled queries file; raises ``QueriesError`` naming the first bad line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise QueriesError(f"{path}: cannot read ({error})") from error
    queries: list[Query] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        entry = json_object(line, f"{path}:{number}")
        text, relevant = query_text(entry, f"{path}:{number}"), entry.get("relevant")
        if not isinstance(relevant, list) or not relevant or not all(isinstance(r, str) for r in relevant):
            raise QueriesError(f'{path}:{number}: "relevant" must be a non-empty list of strings')
        answers = entry.get("answers", [])
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise QueriesError(f'{path}:{number}: "answers" must be a list of strings')
        category = entry.get("category", "")
        if not isinstance(category, str):
            raise QueriesError(f'{path}:{number}: "category" must be a string')
        query_id = str(entry.get("id", f"line{number}"))
        if query_id in seen:
            raise QueriesError(f"{path}:{number}: duplicate id {query_id!r}")
        seen.add(query_id)
        labels = tuple(Label.parse(r, corpus) for r in relevant)
        queries.append(Query(query_id, as_tool_query(text), labels, tuple(answers), category))
    if not queries:
        raise QueriesError(f"{path}: no queries")
    return queries


__all__ = [
    "Label",
    "Query",
    "QueriesError",
    "as_tool_query",
    "chunk_file_id",
    "docs_prefix_of",
    "json_object",
    "load_queries",
    "names",
    "query_text",
    "reconcile",
]
