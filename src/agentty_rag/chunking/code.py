"""Definition-aware chunking of source code with tree-sitter.

A file is split around its definitions: each function, method, class or declaration that fits becomes one
chunk, with its decorators and doc comments. A class too large for one chunk is split into its members,
each carrying the class's signature as context; its header (signature, docstring, fields) stays together.
Top-level statements between definitions are grouped into blocks; a few stray lines (an import, a constant)
join the definition below them instead of becoming a chunk of their own. A definition with no members that
is still too large is cut into line windows that end on blank lines.

Languages without definition rules, and files whose grammar cannot be loaded, are cut into line windows.
"""

from __future__ import annotations

import logging
from itertools import accumulate

from agentty_rag.chunking.definitions import Definition, find_definitions, load_grammar
from agentty_rag.chunking.language_spec import LanguageSpec
from agentty_rag.chunking.macros import blank_macros
from agentty_rag.types import Chunk, Document

log = logging.getLogger(__name__)

# A gap of at most this many non-blank lines joins the definition below it rather than standing alone.
_SMALL_GAP_LINES = 3
# Larger files are cut into line windows without a syntax tree: a tree costs about 35 times the file's size
# in memory and 0.4 s per MiB here (a 15 MiB file: 6.2 s and 540 MB), windows cost 0.03 s per MiB.
PARSE_MAX_CHARS = 1 << 20
_SIGNATURE_CHARS = 200


class _Emitter:
    """Turns definitions and the gaps between them into chunks of at most ``limit`` characters."""

    def __init__(self, document: Document, lines: list[str], limit: int) -> None:
        self.document = document
        self.lines = lines
        self.limit = limit
        self.offsets = [0, *accumulate(len(line) + 1 for line in lines)]
        self.chunks: list[Chunk] = []

    def size(self, start: int, end: int) -> int:
        return self.offsets[end + 1] - self.offsets[start]

    def content_rows(self, start: int, end: int) -> list[int]:
        return [r for r in range(start, end + 1) if self.lines[r].strip()]

    def signature(self, row: int) -> str:
        return self.lines[row].strip()[:_SIGNATURE_CHARS] if 0 <= row < len(self.lines) else ""

    def emit(self, start: int, end: int, kind: str, symbol: str, context: str) -> None:
        rows = self.content_rows(start, end)
        if not rows:
            return
        start, end = rows[0], rows[-1]
        text = "\n".join(self.lines[start : end + 1])
        self.chunks.append(
            Chunk(
                "code",
                self.document.ref,
                start + 1,
                end + 1,
                text,
                self.document.language,
                kind,
                context,
                symbol,
            )
        )

    def extend_last(self, end: int) -> bool:
        """Grow the last chunk down to ``end`` (a few trailing lines); False when that would be too large."""
        if not self.chunks:
            return False
        last = self.chunks[-1]
        start = last.start_line - 1
        if self.size(start, end) > self.limit:
            return False
        rows = self.content_rows(start, end)
        text = "\n".join(self.lines[start : rows[-1] + 1])
        self.chunks[-1] = Chunk(
            last.source,
            last.ref,
            last.start_line,
            rows[-1] + 1,
            text,
            last.language,
            last.kind,
            last.context,
            last.symbol,
            last.title,
        )
        return True

    def windows(self, start: int, end: int) -> list[tuple[int, int]]:
        """Line windows of at most ``limit`` characters, ending on a blank line when one is near the end."""
        out: list[tuple[int, int]] = []
        a = start
        while a <= end:
            b = a
            while b < end and self.size(a, b + 1) <= self.limit:
                b += 1
            if b < end:
                for row in range(b, a + (b - a) // 2, -1):
                    if not self.lines[row].strip():
                        b = row
                        break
            out.append((a, b))
            a = b + 1
        return out

    def block(self, start: int, end: int, kind: str, symbol: str, context: str) -> None:
        for a, b in self.windows(start, end):
            self.emit(a, b, kind, symbol, context)

    def region(
        self,
        definitions: list[Definition],
        start: int,
        end: int,
        symbol: str,
        context: str,
        gap_kind: str,
        header: int | None = None,
    ) -> None:
        """Chunks of ``definitions`` and of the lines between them. ``header`` is the row of the enclosing
        definition's own signature: the lines around it are that definition's header and never join a member
        (so ``class Engine < Railtie`` is found as the class, not as its first method)."""
        cursor = start
        for definition in definitions:
            first = max(definition.start, cursor)
            if first > definition.end:
                continue  # shares its rows with the previous definition, which already holds it
            gap = self.content_rows(cursor, first - 1)
            own_start = first
            if gap:
                fits = self.size(gap[0], definition.end) <= self.limit or self.size(first, definition.end) > self.limit
                holds_header = header is not None and gap[0] <= header <= gap[-1]
                if len(gap) <= _SMALL_GAP_LINES and fits and not holds_header:
                    own_start = gap[0]
                else:
                    self.block(gap[0], first - 1, gap_kind, symbol, context)
            self.definition(definition, own_start, symbol, context)
            cursor = definition.end + 1
        tail = self.content_rows(cursor, end)
        if tail:
            if not (len(tail) <= _SMALL_GAP_LINES and cursor > start and self.extend_last(tail[-1])):
                self.block(tail[0], end, gap_kind, symbol, context)

    def definition(self, definition: Definition, start: int, outer_symbol: str, outer_context: str) -> None:
        symbol = f"{outer_symbol}.{definition.name}" if outer_symbol else definition.name
        signature = self.signature(definition.head)
        if self.size(start, definition.end) <= self.limit:
            held = held_by_namespace(definition)
            if held is not None:  # a namespace around one thing is named after it
                names, kind = held
                self.emit(start, definition.end, kind, f"{symbol}.{names}", outer_context)
            else:
                self.emit(start, definition.end, definition.kind, symbol, outer_context)
        elif definition.children:
            self.region(definition.children, start, definition.end, symbol, signature, definition.kind, definition.head)
        else:
            for a, b in self.windows(start, definition.end):
                self.emit(a, b, definition.kind, symbol, signature if a > definition.head else outer_context)


def held_by_namespace(definition: Definition) -> tuple[str, str] | None:
    """What a namespace holds, when that is one thing: its one definition, looking through nested namespaces
    (``namespace Newtonsoft.Json { enum NullValueHandling }``), or the one class whose members it defines out
    of line (C++'s ``Pool::submit``, ``Pool::shutdown``: that class's ``impl``). Returns that thing's names
    below the namespace and its kind; None for anything else.

    A namespace is only a scope: a chunk named after it would hide a file's one class from a search for the
    class's own name."""
    names: list[str] = []
    current = definition
    while current.kind == "namespace":
        if len(current.children) == 1:
            current = current.children[0]
            names.append(current.name)
            continue
        owners = {child.name.rpartition(".")[0] for child in current.children}
        if len(owners) == 1 and (owner := owners.pop()):
            return ".".join([*names, owner]), "impl"
        break
    return (".".join(names), current.kind) if names else None


def line_windows(document: Document, limit: int, kind: str = "window") -> list[Chunk]:
    """Chunks of whole lines, at most ``limit`` characters each, ending on blank lines where possible."""
    lines = document.text.split("\n")
    emitter = _Emitter(document, lines, limit)
    emitter.block(0, len(lines) - 1, kind, "", "")
    return emitter.chunks


def chunk_code(document: Document, spec: LanguageSpec, limit: int) -> list[Chunk]:
    """Cut one source file into definition chunks (line windows when no grammar applies).

    Args:
        document: the file's text; ``document.ref`` is its workspace-relative path.
        spec: its language.
        limit: the largest chunk, in characters.
    """
    if len(document.text) > PARSE_MAX_CHARS:
        log.info("%s is over %d characters; indexing it as line windows", document.ref, PARSE_MAX_CHARS)
        return line_windows(document, limit)
    lines = document.text.split("\n")
    loaded = load_grammar(spec) if spec.grammar else None
    if loaded is None:
        return line_windows(document, limit)
    parser, cursor = loaded
    try:
        parsed = blank_macros(document.text, spec.macros == "cpp") if spec.macros else document.text
        tree = parser.parse(parsed.encode("utf-8", "surrogatepass"))
        definitions = find_definitions(tree.root_node, cursor, spec, lines)
    except Exception as error:  # a parser failure on one file must not stop the index
        log.warning("could not parse %s (%s); indexing it as line windows", document.ref, error)
        return line_windows(document, limit)
    emitter = _Emitter(document, lines, limit)
    try:
        emitter.region(definitions, 0, len(lines) - 1, "", "", "block")
    except RecursionError:  # definitions nested deeper than the interpreter's stack: cut the file by lines
        log.warning("%s nests definitions too deeply; indexing it as line windows", document.ref)
        return line_windows(document, limit)
    return emitter.chunks


# Definition, find_definitions and load_grammar are also read from here (by the benchmark's docstring sets).
__all__ = ["PARSE_MAX_CHARS", "Definition", "chunk_code", "find_definitions", "line_windows", "load_grammar"]
