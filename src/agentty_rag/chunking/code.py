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
import threading
from dataclasses import dataclass, field
from itertools import accumulate

from tree_sitter import Node, Parser, Query, QueryCursor

from agentty_rag.chunking.languages import LanguageSpec
from agentty_rag.chunking.rules import Spans, describe
from agentty_rag.chunking.rules import first_child_of as _first_child_of
from agentty_rag.chunking.rules import node_text as _text
from agentty_rag.types import Chunk, Document

log = logging.getLogger(__name__)

# A gap of at most this many non-blank lines joins the definition below it rather than standing alone.
_SMALL_GAP_LINES = 3
# Larger files are cut into line windows without a syntax tree: a tree costs about 35 times the file's size
# in memory and 0.4 s per MiB here (a 15 MiB file: 6.2 s and 540 MB), windows cost 0.03 s per MiB.
PARSE_MAX_CHARS = 1 << 20
_SIGNATURE_CHARS = 200


@dataclass
class Definition:
    """A definition's rows (0-based, inclusive; ``start`` includes its decorators and doc comments)."""

    start: int
    end: int
    head: int  # row of the definition keyword itself, for the signature
    kind: str
    name: str
    start_byte: int
    end_byte: int
    children: list[Definition] = field(default_factory=list)


class _Grammars(threading.local):
    """Parsers and compiled queries per language, one set per thread (parsers are not thread-safe)."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[Parser, QueryCursor] | None] = {}


_grammars = _Grammars()


def load_grammar(spec: LanguageSpec) -> tuple[Parser, QueryCursor] | None:
    """The parser and definition query of a language (cached; None when its grammar cannot be loaded)."""
    if spec.name in _grammars.cache:
        return _grammars.cache[spec.name]
    loaded: tuple[Parser, QueryCursor] | None = None
    try:
        from tree_sitter_language_pack import get_language

        language = get_language(spec.grammar)  # type: ignore[arg-type]
        patterns = [f"({t}) @def" for t in (*spec.containers, *spec.functions, *spec.others)]
        valid = []
        for pattern in (*patterns, *spec.extra_patterns):
            try:
                Query(language, pattern)
                valid.append(pattern)
            except Exception:  # a node type this grammar version lacks
                log.debug("pattern %s not valid for %s", pattern, spec.grammar)
        loaded = (Parser(language), QueryCursor(Query(language, "\n".join(valid))))
    except Exception as error:  # a missing or broken grammar: fall back to line windows
        log.warning("no tree-sitter grammar for %s (%s); indexing its files as line windows", spec.name, error)
    _grammars.cache[spec.name] = loaded
    return loaded


def _normalise(name: str) -> str:
    name = name.split("<", 1)[0].split("(", 1)[0].strip()
    for separator in ("::", "\\", ":", "->"):
        name = name.replace(separator, ".")
    return ".".join(part for part in name.split(".") if part.strip()).replace(" ", "")


_C_FAMILY = ("c", "cpp", "objc")


_C_KEYWORDS = frozenset({"namespace", "template", "class", "struct", "union", "enum", "typename", "using"})


def _misparsed_c_name(name: str) -> bool:
    """A macro the grammar cannot expand (``FMT_BEGIN_NAMESPACE namespace detail {``) reads as a function whose
    name is a keyword or several words; such a node is not a definition, though the ones inside it are."""
    words = name.split()
    if len(words) == 1:
        return words[0] in _C_KEYWORDS
    return not any(word.endswith("operator") for word in words[:-1])  # `operator bool` is one name


def _c_declarator_name(node: Node) -> str:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            break
        declarator = inner
    if declarator is not None and declarator.type == "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return _text(declarator)


def definition_name(node: Node, spec: LanguageSpec, quoted: bool = False) -> str:
    """The name a definition node declares, normalised to dotted form; "" when it has none (or is quoted)."""
    described = describe(node, spec.name, quoted)
    if described is not None:
        return _normalise(described[0])
    kind = node.type
    if kind == "method_declaration" and spec.name == "go":
        receiver = node.child_by_field_name("receiver")
        type_node = None
        if receiver is not None:
            stack = [receiver]
            while stack and type_node is None:
                current = stack.pop(0)
                if current.type == "type_identifier":
                    type_node = current
                stack.extend(current.named_children)
        name = _text(node.child_by_field_name("name"))
        return _normalise(f"{_text(type_node)}.{name}" if type_node is not None else name)
    if kind == "type_declaration":
        spec_node = _first_child_of(node, ("type_spec", "type_alias"))
        return _normalise(_text(spec_node.child_by_field_name("name") if spec_node else None))
    if kind == "impl_item":
        return _normalise(_text(node.child_by_field_name("type")))
    if kind == "function_definition" and spec.name in _C_FAMILY:
        name = _c_declarator_name(node)
        return "" if _misparsed_c_name(name) else _normalise(name)
    if kind == "type_definition" and spec.name in _C_FAMILY:
        return _normalise(_text(node.child_by_field_name("declarator")))
    if kind in ("lexical_declaration", "variable_declaration") and spec.name != "lua":
        declarator = _first_child_of(node, ("variable_declarator",))
        return _normalise(_text(declarator.child_by_field_name("name") if declarator else None))
    if kind == "expression_statement":
        assignment = _first_child_of(node, ("assignment_expression",))
        left = _text(assignment.child_by_field_name("left") if assignment else None)
        for prefix in ("module.exports.", "exports.", "this."):
            left = left.removeprefix(prefix)
        return _normalise(left.replace(".prototype.", "."))
    if kind in ("assignment_statement", "variable_declaration"):
        target = node if kind == "assignment_statement" else _first_child_of(node, ("assignment_statement",))
        return _normalise(_text(_first_child_of(target, ("variable_list",)) if target else None))
    if kind == "namespace_definition" and node.child_by_field_name("body") is None:
        return ""  # PHP's `namespace A\B;` statement: not a container
    if kind == "companion_object":
        named = _first_child_of(node, ("type_identifier", "simple_identifier"))
        return _text(named) or "Companion"
    if kind == "singleton_class":
        return "self"
    named = node.child_by_field_name("name")
    if named is None and spec.name == "kotlin":
        named = _first_child_of(node, ("type_identifier", "simple_identifier"))
    if named is None and kind in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
        return ""
    return _normalise(_text(named))


def definition_kind(node: Node, spec: LanguageSpec, inside_class: bool, quoted: bool = False) -> str:
    described = describe(node, spec.name, quoted)
    if described is not None:
        return "method" if described[1] == "function" and inside_class else described[1]
    kind = node.type
    if kind == "class_declaration" and spec.name == "swift":
        declared = _text(node.child_by_field_name("declaration_kind"))
        return {"struct": "struct", "enum": "enum", "extension": "impl", "protocol": "interface"}.get(declared, "class")
    if kind in spec.functions or kind in (
        "lexical_declaration",
        "variable_declaration",
        "expression_statement",
        "assignment_statement",
    ):
        return "method" if inside_class or kind == "method_declaration" and spec.name == "go" else "function"
    for word, label in (
        ("namespace", "namespace"),
        ("internal_module", "namespace"),
        ("mod_item", "module"),
        ("module", "module"),
        ("impl", "impl"),
        ("interface", "interface"),
        ("protocol", "interface"),
        ("trait", "interface"),
        ("enum", "enum"),
        ("struct", "struct"),
        ("union", "struct"),
        ("macro", "macro"),
        ("type", "type"),
    ):
        if word in kind:
            return label
    return "class"


_CLASS_KINDS = frozenset({"class", "interface", "impl", "struct", "enum"})


def _row_end(node: Node) -> int:
    """Last row a node occupies (a node ending at column 0 ends on the row before)."""
    row = node.end_point.row
    return row - 1 if node.end_point.column == 0 and row > node.start_point.row else row


def _extent(node: Node, spec: LanguageSpec) -> tuple[Node, Node]:
    """The first and last node a definition spans: its wrappers above, a trailing body beside it."""
    outer = node
    while outer.parent is not None and outer.parent.type in spec.wrappers:
        outer = outer.parent
    after = outer.next_named_sibling if spec.trailing else None
    return outer, after if after is not None and after.type in spec.trailing else outer


_CLAUSE_KINDS = frozenset({"function", "method", "macro"})


def _merge_clauses(definitions: list[Definition]) -> list[Definition]:
    """Consecutive definitions of one name and kind become one: a signature with its equations, clauses."""
    merged: list[Definition] = []
    for definition in definitions:
        definition.children = _merge_clauses(definition.children)
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and definition.kind in _CLAUSE_KINDS
            and (previous.name, previous.kind) == (definition.name, definition.kind)
        ):
            previous.end, previous.end_byte = definition.end, definition.end_byte
            previous.children.extend(definition.children)
        else:
            merged.append(definition)
    return merged


def find_definitions(tree_root: Node, cursor: QueryCursor, spec: LanguageSpec, lines: list[str]) -> list[Definition]:
    """Named definitions of a parsed file, nested by containment, in source order."""
    seen: dict[tuple[int, int], Node] = {}
    captures = cursor.captures(tree_root)
    for node in captures.get("def", []):
        seen.setdefault((node.start_byte, node.end_byte), node)
    quotes = Spans(captures.get("quote", []))
    candidates = [(node, *_extent(node, spec)) for node in seen.values()]
    candidates.sort(key=lambda found: (found[1].start_byte, -found[2].end_byte))
    roots: list[Definition] = []
    stack: list[Definition] = []
    for node, outer, last in candidates:
        while stack and stack[-1].end_byte <= outer.start_byte:
            stack.pop()
        parent = stack[-1] if stack else None
        quoted = quotes.hold(node)
        name = definition_name(node, spec, quoted)
        if not name:
            continue
        inside_class = parent is not None and parent.kind in _CLASS_KINDS
        start = outer.start_point.row
        previous = outer.prev_named_sibling
        while previous is not None and previous.type in spec.prefixes and _row_end(previous) >= start - 1:
            line = lines[previous.start_point.row] if previous.start_point.row < len(lines) else ""
            if line[: previous.start_point.column].strip():
                break  # a trailing comment of the line above, not a doc comment
            start = previous.start_point.row
            previous = previous.prev_named_sibling
        kind = definition_kind(node, spec, inside_class, quoted)
        if kind == "function" and spec.name == "cpp" and "." in name:
            kind = "method"  # an out-of-line member: void Pool::submit() {...}
        definition = Definition(
            start, _row_end(last), node.start_point.row, kind, name, outer.start_byte, last.end_byte
        )
        if parent is not None and parent.start_byte <= outer.start_byte and last.end_byte <= parent.end_byte:
            # A member's doc comment never reaches above its container's own first row.
            definition.start = max(definition.start, parent.head + 1)
            parent.children.append(definition)
        else:
            roots.append(definition)
        stack.append(definition)
    return _merge_clauses(roots) if spec.clauses else roots


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
            self.emit(start, definition.end, definition.kind, symbol, outer_context)
        elif definition.children:
            self.region(definition.children, start, definition.end, symbol, signature, definition.kind, definition.head)
        else:
            for a, b in self.windows(start, definition.end):
                self.emit(a, b, definition.kind, symbol, signature if a > definition.head else outer_context)


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
        tree = parser.parse(document.text.encode("utf-8", "surrogatepass"))
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


__all__ = [
    "PARSE_MAX_CHARS",
    "Definition",
    "chunk_code",
    "definition_kind",
    "definition_name",
    "find_definitions",
    "line_windows",
    "load_grammar",
]
