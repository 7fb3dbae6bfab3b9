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

from agentty_rag.bench.datasets import Label, Query
from agentty_rag.chunking.documented import DocumentedFunction, documented_functions, first_sentence
from agentty_rag.config import VARIABLES
from agentty_rag.source_kinds import SourceSpec, kinds_of, source_spec
from agentty_rag.sources.walker import SkipReport
from agentty_rag.types import Chunk
from agentty_rag.workspace.service import Workspace


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
            (destination / spec.copy_folder).mkdir(parents=True, exist_ok=True)
            overrides[variables[spec.folder_setting]] = str(destination / spec.copy_folder)
    return CopiedCorpus(destination, overrides, files, total, skipped)


def _copied_path(spec: SourceSpec, destination: Path, path: Path, rel: str) -> Path:
    """Where a copy keeps one file: under its kind's folder, at the path its key names, or (a skill) in a
    folder of the same name as its own, which is the skill's default name."""
    if spec.keeps_folder:
        return destination / spec.copy_folder / path.parent.name / path.name
    return destination / spec.copy_folder / rel.lstrip("/")  # a docs folder outside the workspace: absolute


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
