"""The corpus a benchmark runs on: a private copy of the user's files, and the queries generated from it.

The benchmark never writes to the user's workspace: the files the sources would index are copied to a
temporary folder, and every index, edit and timing happens there.
"""

from __future__ import annotations

import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from tree_sitter import Node

from agentty_rag.bench.datasets import Label, Query
from agentty_rag.chunking.code import Definition, find_definitions, load_grammar
from agentty_rag.chunking.languages import LanguageSpec, language_of
from agentty_rag.config import VARIABLES
from agentty_rag.service import Workspace
from agentty_rag.source_kinds import SourceSpec, kinds_of, source_spec
from agentty_rag.sources.walker import SkipReport
from agentty_rag.types import Chunk


@dataclass
class CopiedCorpus:
    """A copy of one index's files under ``root``, and the settings overrides that point at it."""

    root: Path
    overrides: dict[str, str]
    files: int
    bytes: int
    skipped: SkipReport


def copy_corpus(workspace: Workspace, name: str, destination: Path) -> CopiedCorpus:
    """Copy every file the ``docs`` or ``code`` index would read into ``destination``.

    Each kind's files go where its registry entry says (``copy_folder``), and the overrides point each
    kind's folder setting there.
    """
    index = workspace.index(name)
    destination.mkdir(parents=True, exist_ok=True)
    skipped = SkipReport()
    files = total = 0
    for source in index.config.sources:
        scan = source.scan()
        skipped.merge(scan.skipped)
        for stamp in scan.files:
            kind, _, rel = stamp.key.partition(":")
            target = _copied_path(source_spec(kind), destination, Path(stamp.path), rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(stamp.path, target)
            files += 1
            total += stamp.size
    overrides: dict[str, str] = {}
    variables = {variable.attr: variable.name for variable in VARIABLES}
    for spec in kinds_of(name):
        if spec.folder_setting:
            (destination / spec.copy_folder).mkdir(exist_ok=True)
            overrides[variables[spec.folder_setting]] = str(destination / spec.copy_folder)
    return CopiedCorpus(destination, overrides, files, total, skipped)


def _copied_path(spec: SourceSpec, destination: Path, path: Path, rel: str) -> Path:
    """Where a copy keeps one file: under its kind's folder, at the path its key names, or (a skill) in a
    folder of the same name as its own, which is the skill's default name."""
    if spec.keeps_folder:
        return destination / spec.copy_folder / path.parent.name / path.name
    return destination / spec.copy_folder / rel


# -- known-item queries ---------------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_']+")


def label_for(chunk: Chunk) -> str:
    """The chunk as a queries file names it: its provenance, without the kind for a path (``guide/a.md:3-9``)."""
    return chunk.provenance.removeprefix(f"{chunk.source}:") if chunk.spec.located else chunk.provenance


def known_item_queries(chunks: list[Chunk], count: int, seed: int, words: int = 8) -> list[Query]:
    """Queries made of ``words`` consecutive words of a randomly chosen passage; the answer is that passage.

    Deterministic for a given corpus and seed. Intentionally lexical: the words are copied from the answer,
    so this set measures how well exact wording is found, not paraphrase.
    """
    rng = random.Random(seed)
    eligible = sorted((c for c in chunks if len(_WORD.findall(c.text)) >= words + 2), key=lambda c: c.chunk_id)
    picked = rng.sample(eligible, min(count, len(eligible)))
    queries: list[Query] = []
    for number, chunk in enumerate(picked, start=1):
        tokens = _WORD.findall(chunk.text)
        start = rng.randrange(0, len(tokens) - words + 1)
        text = " ".join(tokens[start : start + words])
        label = Label.parse(label_for(chunk), chunk.spec.index)
        queries.append(Query(f"known-{number:04}", text, (label,)))
    return queries


# -- docstring queries ----------------------------------------------------------------------------------------

_COMMENT_MARKERS = re.compile(r"^\s*(///?|/\*\*?|\*/?|#|--+|;+)\s?")
# A sentence ends at . ! or ? followed by a space and a capital letter (or the end): "e.g. x" does not end one.
_SENTENCE = re.compile(r"(.+?[.!?])(?=\s+[A-Z(`\"']|\s*$)", re.S)


@dataclass(frozen=True)
class DocumentedFunction:
    path: str
    symbol: str
    sentence: str
    mask: tuple[int, int, str]  # (start byte, end byte, replacement) of the text to hide


def first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = _SENTENCE.match(flat)
    return (match.group(1) if match else flat).strip()


def _python_docstrings(source: bytes, root: Node) -> list[tuple[str, Node]]:
    """(symbol path, docstring node) of every Python function with a docstring."""
    found: list[tuple[str, Node]] = []
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, prefix = stack.pop()
        for child in node.named_children:
            target = child
            if child.type == "decorated_definition":
                inner = child.child_by_field_name("definition")
                target = inner if inner is not None else child
            if target.type in ("function_definition", "class_definition"):
                name_node = target.child_by_field_name("name")
                name = name_node.text.decode("utf-8", "replace") if name_node and name_node.text else ""
                path = f"{prefix}.{name}" if prefix else name
                body = target.child_by_field_name("body")
                if target.type == "function_definition" and body is not None and body.named_children:
                    first = body.named_children[0]
                    if first.type == "expression_statement" and first.named_children:
                        first = first.named_children[0]  # older grammars wrap the docstring in a statement
                    if first.type == "string":
                        found.append((path, first))
                if body is not None:
                    stack.append((body, path))
            elif child.type not in ("string", "comment"):
                stack.append((child, prefix))
    return found


def _comment_functions(text: str, spec: LanguageSpec) -> list[tuple[str, int, int]]:
    """(symbol path, first comment row, head row) of functions with a doc comment directly above them."""
    loaded = load_grammar(spec)
    if loaded is None:
        return []
    parser, cursor = loaded
    lines = text.split("\n")
    tree = parser.parse(text.encode("utf-8"))
    out: list[tuple[str, int, int]] = []

    def visit(definitions: list[Definition], prefix: str) -> None:
        for definition in definitions:
            path = f"{prefix}.{definition.name}" if prefix else definition.name
            if definition.kind in ("function", "method") and definition.start < definition.head:
                rows = [
                    r
                    for r in range(definition.start, definition.head)
                    if _COMMENT_MARKERS.match(lines[r]) and not lines[r].lstrip().startswith(("#[", "@"))
                ]
                if rows:
                    out.append((path, rows[0], rows[-1]))
            visit(definition.children, path)

    visit(find_definitions(tree.root_node, cursor, spec, lines), "")
    return out


def documented_functions(path: str, text: str) -> list[DocumentedFunction]:
    """Functions of one file whose docs can become a query, with what to mask."""
    spec = language_of(path, text)
    if spec is None or not spec.grammar:
        return []
    data = text.encode("utf-8")
    out: list[DocumentedFunction] = []
    if spec.name == "python":
        loaded = load_grammar(spec)
        if loaded is None:
            return []
        tree = loaded[0].parse(data)
        for symbol, node in _python_docstrings(data, tree.root_node):
            raw = node.text.decode("utf-8", "replace") if node.text else ""
            body = raw.strip("rRuUbBfF").strip("\"'")
            sentence = first_sentence(body)
            replacement = '""' + "\n" * raw.count("\n")
            out.append(DocumentedFunction(path, symbol, sentence, (node.start_byte, node.end_byte, replacement)))
        return out
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")) + 1)
    for symbol, first, last in _comment_functions(text, spec):
        comment = " ".join(_COMMENT_MARKERS.sub("", lines[r]).strip() for r in range(first, last + 1))
        sentence = first_sentence(comment.replace("*/", " "))
        start, end = offsets[first], offsets[last + 1] - 1
        out.append(DocumentedFunction(path, symbol, sentence, (start, end, "\n" * (last - first))))
    return out


def docstring_queries(root: Path, files: list[str], count: int, seed: int, min_words: int = 4) -> list[Query]:
    """Mask the docs of up to ``count`` documented functions under ``root`` and return them as queries.

    Each query is a function's first doc sentence; its answer is the function, whose doc text is removed
    from the copied file so the match must come from the code and its names.
    """
    candidates: list[DocumentedFunction] = []
    for rel in sorted(files):
        path = root / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for function in documented_functions(rel, text):
            if len(function.sentence.split()) >= min_words and not function.symbol.split(".")[-1].startswith("test"):
                candidates.append(function)
    rng = random.Random(seed)
    chosen = sorted(rng.sample(candidates, min(count, len(candidates))), key=lambda f: (f.path, f.mask[0]))
    by_file: dict[str, list[DocumentedFunction]] = {}
    for function in chosen:
        by_file.setdefault(function.path, []).append(function)
    for rel, functions in by_file.items():
        path = root / rel
        data = path.read_bytes()
        for function in sorted(functions, key=lambda f: -f.mask[0]):
            start, end, replacement = function.mask
            data = data[:start] + replacement.encode("utf-8") + data[end:]
        path.write_bytes(data)
    return [
        Query(f"doc-{number:04}", f.sentence, (Label("code", f.path, symbol=f.symbol),))
        for number, f in enumerate(chosen, start=1)
    ]


__all__ = [
    "CopiedCorpus",
    "copy_corpus",
    "docstring_queries",
    "documented_functions",
    "first_sentence",
    "known_item_queries",
]
