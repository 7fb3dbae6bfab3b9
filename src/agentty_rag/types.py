"""Value types shared by every stage: what sources produce, what chunkers cut and what retrieval returns.

No logic and no I/O lives here beyond trivial derived properties.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import xxhash

from agentty_rag.source_kinds import SourceKind, SourceSpec, source_spec

# The most passages a search returns (the tools' ``k``).
MAX_K = 50

# Ends the origin at the start of a chunk's title (``SourceSpec.origin``): ``wiki<TAB>Runbook``.
ORIGIN_END = "\t"


@dataclass(frozen=True, slots=True)
class FileStamp:
    """A file found by a scan: its index key, where it is, and what it looked like on disk.

    ``key`` is stable across processes and hosts (a source prefix plus a relative path, or an absolute path
    for user-level skill folders) so that a rename shows up as one deletion and one addition.
    """

    key: str
    path: str
    size: int
    mtime_ns: int
    boundary: str = ""  # the real folder the file must lie in when it is read ("" for no such check)


@dataclass(frozen=True, slots=True)
class Document:
    """One unit of text a source produced: a docs file, a skill, a memory fact or a source file."""

    source: SourceKind
    ref: str  # what provenance names: docs path, skill name, memory id or code path
    text: str
    language: str = "text"
    title: str = ""  # skill description, memory tags, an MCP resource's server: indexed with the heading path
    first_line: int = 1  # where ``text`` starts in its file (memory facts in a JSONL log)


# Kinds of code chunk that define something (as opposed to grouped top-level statements or windows).
DEFINITION_KINDS = frozenset(
    {"function", "method", "class", "struct", "interface", "enum", "type", "impl", "module", "namespace", "macro"}
)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable passage with its provenance."""

    source: SourceKind
    ref: str
    start_line: int
    end_line: int
    text: str
    language: str = "text"
    kind: str = "section"  # section, paragraph, fact, skill, function, method, class, block, window
    context: str = ""  # heading path ("Guide > Auth > Tokens") or enclosing signature for code
    symbol: str = ""  # code symbol path ("TokenStore.refresh")
    title: str = ""

    @property
    def chunk_id(self) -> str:
        """Stable identity: provenance, span and content."""
        key = f"{self.source}\0{self.ref}\0{self.start_line}\0{self.end_line}\0{self.symbol}\0{self.text}"
        return xxhash.xxh3_128_hexdigest(key.encode("utf-8", "surrogatepass"))

    @property
    def spec(self) -> SourceSpec:
        """What its source kind is (see ``source_kinds``)."""
        return source_spec(self.source)

    @property
    def own_name(self) -> str:
        """The name a passage is about: the last part of a symbol path, the deepest heading, a skill or fact id."""
        named_by = self.spec.named_by
        if named_by == "symbol":
            return self.symbol.rsplit(".", 1)[-1]
        if named_by == "ref":
            return self.ref
        return self.context.rsplit(" > ", 1)[-1] if self.context else ""

    @property
    def provenance(self) -> str:
        """``docs:guide/auth.md:20-44``, ``skill:NAME``, ``memory:ID``, ``code:src/x.py:80-126`` or ``mcp:URI``."""
        return self.spec.provenance(self.ref, self.start_line, self.end_line)

    @property
    def origin(self) -> str:
        """Where the passage came from, for a kind that names one (an MCP resource's server): its title up to the
        first tab; "" for the other kinds."""
        return self.title.split(ORIGIN_END, 1)[0] if self.spec.origin else ""


@dataclass(frozen=True, slots=True)
class Hit:
    """A chunk with the score retrieval gave it (higher is better).

    ``also`` lists the provenance of duplicates that were collapsed into this hit. A stitched passage has
    ``parts``: the chunks it joins, in the order they were joined (the earlier-starting one first); its
    ``chunk`` then holds the joined lines and text, and its other fields are those of its first part.
    """

    chunk: Chunk
    score: float
    also: tuple[str, ...] = ()
    parts: tuple[Chunk, ...] = ()

    @property
    def pieces(self) -> tuple[Chunk, ...]:
        """The chunks this hit shows: its parts when it was stitched, else its chunk alone."""
        return self.parts or (self.chunk,)

    @property
    def key(self) -> str:
        """A stable identity for breaking ties: its chunk's id; a stitched passage's also covers every symbol
        it joins (hashed as one path list, as stitched passages have always been, so ties break as before)."""
        if not self.parts:
            return self.chunk.chunk_id
        symbols = ", ".join(dict.fromkeys(part.symbol for part in self.parts if part.symbol))
        return replace(self.chunk, symbol=symbols).chunk_id


# The count of a funnel step that is a note, not a number of candidates.
NOTE = -1


@dataclass(frozen=True, slots=True)
class Funnel:
    """How many candidates each stage kept, for the result header."""

    stages: tuple[tuple[str, int], ...] = ()

    def then(self, stage: str, count: int) -> Funnel:
        return Funnel((*self.stages, (stage, count)))

    def note(self, text: str) -> Funnel:
        """A step that reports what it did rather than a count (``prf +6 terms``)."""
        return Funnel((*self.stages, (text, NOTE)))


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What one search produced, before formatting."""

    tool: str
    query: str
    mode: str  # "bm25" now; "hybrid" once a dense leg contributes
    hits: tuple[Hit, ...]
    funnel: Funnel
    empty_reason: str = ""  # why nothing came back, when nothing did
    notes: tuple[str, ...] = field(default=())  # e.g. "query cut to 4000 characters"
    workspace: str = ""  # the workspace searched, named when it is not the folder the process started in
    partial: str = ""  # "421 of 1,301 files" while the index's first build is still adding parts


__all__ = [
    "DEFINITION_KINDS",
    "NOTE",
    "ORIGIN_END",
    "Chunk",
    "Document",
    "FileStamp",
    "Funnel",
    "Hit",
    "SearchResult",
    "SourceKind",
]
