"""Reading files into chunks with their term counts: one file at a time, or on several cores for a build.

A file is read once (never through a link out of its folder, never past its size limit), fingerprinted,
parsed by its source, cleared of recognised secrets and cut into chunks; each chunk's terms are counted per
field. One hostile file never takes the index down: it is skipped, with the reason.

For a full build the workers do everything that needs no global state: besides counting terms, they number
each file's terms (``FileTerms``), compress the texts and checksum the rows (``file_records``), so that the
writing process only maps term ids and writes.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace

import xxhash

from agentty_rag.chunking import ChunkingConfig, chunk_document
from agentty_rag.fsguard import UnsafeFile, read_regular
from agentty_rag.index.lexical.chunk_terms import FileTerms
from agentty_rag.index.lexical.fields import field_terms
from agentty_rag.index.lexical.tokenize import Tokenizer
from agentty_rag.index.storage.records import Block, ChunkRecord, file_records
from agentty_rag.index.storage.store import FileRow
from agentty_rag.sources.base import HeldSource, Source
from agentty_rag.sources.secrets import redact
from agentty_rag.types import Chunk, Document, FileStamp

log = logging.getLogger(__name__)

# A full build of at least this many files is spread over processes (up to MAX_WORKERS of them).
PARALLEL_MIN_FILES = 400
MAX_WORKERS = 4
_worker_tokenizer: Tokenizer | None = None

Counted = tuple[Chunk, dict[str, Counter[str]]]
# What one file needs to be prepared: its source, its stamp from the scan, and the chunk sizes.
Job = tuple[Source, FileStamp, ChunkingConfig]


@dataclass
class Prepared:
    """A file read, fingerprinted and cut into chunks (or the reason it was skipped)."""

    key: str
    stamp: FileStamp
    hash: str
    chunks: list[Chunk]
    skip: str = ""
    redacted: int = 0  # secrets replaced in its text

    def row(self) -> FileRow:
        return FileRow(self.stamp.size, self.stamp.mtime_ns, self.hash, len(self.chunks), self.skip, self.redacted)


@dataclass(frozen=True)
class BuiltFile:
    """A file ready for a full build's writer: its row, its chunks' records, the blocks of their texts and their
    terms."""

    key: str
    row: FileRow
    records: list[ChunkRecord]
    blocks: list[Block]
    terms: FileTerms


def read_file(source: Source, stamp: FileStamp) -> tuple[Prepared, bytes]:
    """Read and fingerprint one file; a file that grew past the source's ``max_bytes`` since the scan is
    skipped, and so is one swapped since the scan for a link out of its folder, a FIFO or a device. A
    ``HeldSource``'s item is read from memory."""
    max_bytes = source.max_bytes
    try:
        data = (
            _held(source, stamp)
            if isinstance(source, HeldSource)
            else read_regular(stamp.path, stamp.boundary, max_bytes)
        )
    except UnsafeFile as error:
        return Prepared(stamp.key, stamp, "", [], error.reason), b""
    except OSError:
        return Prepared(stamp.key, stamp, "", [], "unreadable"), b""
    digest = xxhash.xxh3_128_hexdigest(data)
    stamp = FileStamp(stamp.key, stamp.path, len(data), stamp.mtime_ns, stamp.boundary)
    if len(data) > max_bytes:
        return Prepared(stamp.key, stamp, digest, [], "too large"), b""
    return Prepared(stamp.key, stamp, digest, []), data


def _held(source: HeldSource, stamp: FileStamp) -> bytes:
    held = source.held(stamp)
    if held is None:
        raise OSError(f"{stamp.key} went away since the scan")
    return held


def chunk_file(
    source: Source, item: Prepared, data: bytes, chunking: ChunkingConfig
) -> tuple[Prepared, tuple[str, ...]]:
    """Parse a read file into chunks (or the reason it is skipped), with the source's warnings."""
    if item.skip:
        return item, ()
    try:
        loaded = source.parse(item.stamp, data)
        if loaded.skip_reason:
            return Prepared(item.key, item.stamp, item.hash, [], loaded.skip_reason), loaded.warnings
        documents, found = _without_secrets(loaded.documents)
        chunks = [c for doc in documents for c in chunk_document(doc, chunking)]
        for chunk in chunks:
            _check_storable(chunk)
    except Exception as error:  # one hostile file must not take the whole index down: skip it, say why
        reason = f"could not be read ({type(error).__name__})"
        warning = f"{item.stamp.path}: {reason}: {error}; the file is skipped"
        return Prepared(item.key, item.stamp, item.hash, [], reason), (warning,)
    if found:  # said in the passage itself and counted in status; the log only on request
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(found.items()))
        log.info("%s: secrets redacted before indexing (%s)", item.stamp.path, kinds)
    return Prepared(item.key, item.stamp, item.hash, chunks, redacted=found.total()), loaded.warnings


def _without_secrets(documents: Sequence[Document]) -> tuple[list[Document], Counter[str]]:
    """The documents with every recognised secret replaced, and how many of each kind there were."""
    found: Counter[str] = Counter()
    clean = []
    for document in documents:
        text = redact(document.text, document.source, document.language)
        title = redact(document.title, document.source)
        found += text.found + title.found
        clean.append(replace(document, text=text.text, title=title.text) if text.found or title.found else document)
    return clean, found


def _check_storable(chunk: Chunk) -> None:
    """Raise ``UnicodeEncodeError`` for text that cannot be stored (a lone surrogate from a JSON escape)."""
    for text in (chunk.ref, chunk.text, chunk.context, chunk.symbol, chunk.title):
        text.encode("utf-8")


def prepare_file(job: Job, tokenizer: Tokenizer | None = None) -> tuple[Prepared, list[Counted], tuple[str, ...]]:
    """Read, chunk and count one file's terms (also in a worker process, with its own tokenizer)."""
    global _worker_tokenizer
    source, stamp, chunking = job
    if tokenizer is None:
        if _worker_tokenizer is None:
            _worker_tokenizer = Tokenizer()
        tokenizer = _worker_tokenizer
    item, data = read_file(source, stamp)
    item, warnings = chunk_file(source, item, data, chunking)
    item, counted = counted_terms(tokenizer, item)
    return item, counted, warnings


def build_file(job: Job, tokenizer: Tokenizer | None = None) -> tuple[BuiltFile, tuple[str, ...]]:
    """``prepare_file``, then what the writer stores of it: the records of its chunks and their terms."""
    item, counted, warnings = prepare_file(job, tokenizer)
    records, blocks = file_records([chunk for chunk, _ in counted])
    return BuiltFile(item.key, item.row(), records, blocks, FileTerms.of([counts for _, counts in counted])), warnings


def counted_terms(tokenizer: Tokenizer, item: Prepared) -> tuple[Prepared, list[Counted]]:
    """Each chunk of a file with its term counts; a file whose text the tokenizer fails on is skipped."""
    try:
        return item, [(chunk, count_terms(tokenizer, chunk)) for chunk in item.chunks]
    except Exception as error:  # one hostile file must not take the whole index down
        log.warning("%s: terms could not be counted (%s); the file is skipped", item.stamp.path, error)
        return replace(item, chunks=[], skip=f"could not be read ({type(error).__name__})"), []


def count_terms(tokenizer: Tokenizer, chunk: Chunk) -> dict[str, Counter[str]]:
    """How often each term occurs in each field of a chunk."""
    return {name: Counter(terms) for name, terms in field_terms(tokenizer, chunk).items()}


def prepare_all(jobs: Sequence[Job], tokenizer: Tokenizer, warn: Callable[[str], None]) -> Iterator[BuiltFile]:
    """Every file read, chunked, counted and made ready to write, in ``jobs`` order: on several cores for a
    large build."""
    results: Iterable[tuple[BuiltFile, tuple[str, ...]]]
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    pool = None
    held = any(isinstance(source, HeldSource) for source, _, _ in jobs)  # its bytes live in this process
    if len(jobs) >= PARALLEL_MIN_FILES and workers > 1 and not held:
        import multiprocessing  # only a large build starts processes: a search never loads the machinery
        from concurrent.futures import ProcessPoolExecutor

        try:
            pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
            results = pool.map(build_file, jobs, chunksize=16)
        except (OSError, ValueError) as error:  # no processes here: do it in this one
            log.info("building on one core (%s)", error)
            pool = None
    if pool is None:
        results = (build_file(job, tokenizer) for job in jobs)
    try:
        for built, warnings in results:
            for warning in warnings:
                warn(warning)
            yield built
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


class PartPool:
    """Worker processes a build in parts keeps from one part to the next: each part's files read, chunked and
    counted on several cores (``prepare_file``), without paying for new processes per part."""

    def __init__(self) -> None:
        self._pool: Executor | None = None
        self._unavailable = False

    def prepare(
        self, jobs: Sequence[Job], tokenizer: Tokenizer, warn: Callable[[str], None]
    ) -> list[tuple[Prepared, list[Counted]]]:
        """Every job's file read, chunked and counted, in ``jobs`` order."""
        pool = self._workers(jobs)
        results: Iterable[tuple[Prepared, list[Counted], tuple[str, ...]]]
        if pool is None:
            results = (prepare_file(job, tokenizer) for job in jobs)
        else:
            results = pool.map(prepare_file, jobs, chunksize=8)
        out = []
        for item, counted, warnings in results:
            for warning in warnings:
                warn(warning)
            out.append((item, counted))
        return out

    def _workers(self, jobs: Sequence[Job]) -> Executor | None:
        held = any(isinstance(source, HeldSource) for source, _, _ in jobs)  # its bytes live in this process
        workers = min(os.cpu_count() or 1, MAX_WORKERS)
        if self._pool is None and not self._unavailable and not held and workers > 1 and len(jobs) >= 32:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            try:
                self._pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
            except (OSError, ValueError) as error:  # no processes here: do it in this one
                log.info("building on one core (%s)", error)
                self._unavailable = True
        return None if held else self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


__all__ = [
    "MAX_WORKERS",
    "PartPool",
    "PARALLEL_MIN_FILES",
    "BuiltFile",
    "Counted",
    "Job",
    "Prepared",
    "build_file",
    "chunk_file",
    "count_terms",
    "counted_terms",
    "prepare_all",
    "prepare_file",
    "read_file",
]
