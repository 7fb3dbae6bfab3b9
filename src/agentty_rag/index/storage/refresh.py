"""Bringing an index up to date with its files: what changed, then a rebuild or a patch, under the lock.

A file whose stamp changed is read to see whether its content did: when it did not, only its stamp is
updated. Past ``rebuild_fraction`` of the corpus changed, or when the stored index does not match the
configuration, the update is a rebuild. Writes happen under a lock file shared by every process on the
workspace; when the files under ``.agentty/`` turn out unusable, the index is written in memory instead.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from agentty_rag.chunking import ChunkingConfig
from agentty_rag.errors import IndexCorrupt, IndexFull, IndexNotBuilt, IndexUnwritable
from agentty_rag.index.lexical.backends import lexical_index
from agentty_rag.index.lexical.tokenize import Tokenizer
from agentty_rag.index.storage.bulk import rebuild
from agentty_rag.index.storage.definition import Progress
from agentty_rag.index.storage.freshness import Freshness
from agentty_rag.index.storage.ingest import (
    Counted,
    PartPool,
    Prepared,
    chunk_file,
    counted_terms,
    prepare_all,
    read_file,
)
from agentty_rag.index.storage.lock import exclusive
from agentty_rag.index.storage.manifest import Diff, Scan, diff, stale_reason
from agentty_rag.index.storage.mirror import Mirror
from agentty_rag.index.storage.store import FileRow
from agentty_rag.index.storage.update import patch
from agentty_rag.sources.selection import build_order

log = logging.getLogger(__name__)

# The header key of a first build in parts: "files indexed, files found", "" when whole.
_PARTIAL = "partial"


@dataclass
class RefreshReport:
    """What one refresh did."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    touched: int = 0  # stamp changed, content did not: no re-indexing
    rechunked_files: int = 0
    chunks_added: int = 0
    rebuilt: bool = False
    reason: str = ""
    seconds: float = 0.0

    @property
    def changed_anything(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.touched or self.rebuilt)


@dataclass
class Parts:
    """A first build in parts: ``batch`` files a part, read on the workers of ``pool``, every part from the
    first part's scan (the build's last refresh, at once, scans again for what changed meanwhile)."""

    batch: int
    pool: PartPool
    scan: Scan | None = None


@dataclass
class Plan:
    """What an update will do: rebuild (``reason``), or patch the files of ``diff`` whose content changed."""

    reason: str
    report: RefreshReport
    diff: Diff
    changed: list[tuple[Prepared, bytes]] = field(default_factory=list)
    touched: dict[str, FileRow] = field(default_factory=dict)  # new stamp, same content


def plan(
    found: Scan, files: Mapping[str, FileRow], reason: str, rebuild_fraction: float, changes: Diff | None = None
) -> Plan | None:
    """Read the files whose stamp changed to see whether their content did; None when nothing changed.

    Args:
        found: the scan of the sources.
        files: the manifest's rows.
        reason: why the stored index must be rebuilt anyway ("" when it need not).
        rebuild_fraction: share of changed files above which the update is a rebuild.
        changes: how ``found`` differs from ``files``, when already known (None: compared here).
    """
    changes = diff(files, found) if changes is None else changes
    if not reason and changes.empty:
        return None
    report = RefreshReport(added=len(changes.added), removed=len(changes.removed))
    result = Plan(reason, report, changes)
    if reason:
        return result
    for key in changes.stamp_changed:
        item, data = read_file(found.owners[key], found.stamps[key])
        old = files[key]
        if item.hash == old.hash and not item.skip:
            result.touched[key] = replace(old, size=item.stamp.size, mtime_ns=item.stamp.mtime_ns)
        else:
            result.changed.append((item, data))
    report.touched = len(result.touched)
    report.changed = len(result.changed)
    changed_files = len(changes.added) + len(result.changed) + len(changes.removed)
    total = max(len(found.stamps), len(files), 1)
    if changed_files > rebuild_fraction * total and changed_files > 1:
        result.reason = f"{changed_files} of {total} files changed"
    return result


def chunked(patch: Plan, found: Scan, chunking: ChunkingConfig, warn: Callable[[str], None]) -> list[Prepared]:
    """The changed files, then the added ones, cut into chunks (the sources' warnings go to ``warn``)."""

    def cut(item: Prepared, data: bytes) -> Prepared:
        prepared, warnings = chunk_file(found.owners[item.key], item, data, chunking)
        for warning in warnings:
            warn(warning)
        return prepared

    prepared = [cut(item, data) for item, data in patch.changed]
    added = (read_file(found.owners[key], found.stamps[key]) for key in patch.diff.added)
    return prepared + [cut(item, data) for item, data in added]


def update(
    mirror: Mirror,
    freshness: Freshness,
    reason: str,
    force_rebuild: bool,
    build: bool,
    full_scan: bool,
    tokenizer: Tokenizer,
    tell: Progress,
    parts: Parts | None = None,
) -> RefreshReport:
    """Find what changed (a scan, or the watcher's paths) and bring the index up to date (its lock held).

    Args:
        reason: why the stored index must be rebuilt anyway (a changed profile, a request; "": none).
        force_rebuild: rebuild even when nothing changed.
        build: False when a rebuild must not run here (``IndexNotBuilt`` is raised before any work).
        full_scan: scan every file even when a watcher says what changed.
        parts: build in parts (None: at once); see ``_write``.
    """
    if parts is not None and parts.scan is not None:
        found, changes = parts.scan, diff(mirror.files, parts.scan)
    else:
        found, changes = freshness.changes(mirror.files, mirror.generation, full_scan or force_rebuild)
        if parts is not None:
            parts.scan = found
    if not reason and changes.empty:
        freshness.settled(mirror.generation)
        return RefreshReport()
    if reason and not build:
        raise IndexNotBuilt(reason)
    try:
        report = write(mirror, found, force_rebuild, build, tokenizer, tell, changes, parts)
    except IndexCorrupt as error:
        mirror.recover(error)
        report = write(mirror, found, True, build, tokenizer, tell)
    freshness.settled(mirror.generation)
    return report


def write(
    mirror: Mirror,
    found: Scan,
    force_rebuild: bool,
    build: bool,
    tokenizer: Tokenizer,
    tell: Progress,
    changes: Diff | None = None,
    parts: Parts | None = None,
) -> RefreshReport:
    """Update the index to ``found``; when the files on disk turn out unusable, in memory instead.

    Args:
        mirror: the index (its lock held).
        found: the scan of its sources.
        force_rebuild: rebuild even when nothing changed.
        build: False when a rebuild must not run here (``IndexNotBuilt`` is raised instead).
        tokenizer: counts the terms of a patch's chunks.
        tell: the progress of a rebuild.
        changes: how ``found`` differs from the manifest, when the caller knows (a watcher's paths).
        parts: build in parts (None: at once); see ``_write``.

    Raises:
        IndexFull: the disk filled up: the update was rolled back, and the index is the committed one again.
    """
    try:
        return _write(mirror, found, force_rebuild, build, tokenizer, tell, changes, parts)
    except IndexUnwritable as error:
        mirror.move_to_memory(error)
        return _write(mirror, found, True, build, tokenizer, tell)
    except IndexFull as error:
        if not mirror.files:  # nothing committed to answer from: build it in memory
            mirror.move_to_memory(error)
            return _write(mirror, found, True, build, tokenizer, tell)
        mirror.generation = -1  # the update was rolled back: read the committed index again
        mirror.sync()
        raise


def writer_lock(mirror: Mirror) -> contextlib.AbstractContextManager[None]:
    """The cross-process update lock; an in-memory index has no other process to wait for."""
    if not mirror.storage.on_disk:
        return contextlib.nullcontext()
    return exclusive(mirror.config.lock_path, mirror.config.lock_timeout_s)


def _write(
    mirror: Mirror,
    found: Scan,
    force_rebuild: bool,
    build: bool,
    tokenizer: Tokenizer,
    tell: Progress,
    changes: Diff | None = None,
    parts: Parts | None = None,
) -> RefreshReport:
    """The update under the cross-process lock. A build in ``parts`` (a server's background build) first
    rebuilds from the ``parts.batch`` files that answer most questions (``build_order``) and marks the index
    partial; each later call adds the next ``batch`` files as a patch, which ranks as a rebuild would, so a
    search between two parts answers from what is there. A request (``build`` False) leaves a partial index
    to the build that is completing it; a build at once (the command line) rebuilds it whole."""
    config = mirror.config
    with writer_lock(mirror):
        before = mirror.generation
        mirror.sync()  # another process may have done (part of) the work meanwhile
        if mirror.generation != before:
            changes = None  # compared with rows that are no longer the manifest's
        meta = mirror.store().meta()
        reason = "rebuild requested" if force_rebuild else stale_reason(meta, config)
        if not reason and partial_of(meta) is not None:
            if not build:
                return RefreshReport()
            if parts is not None:
                return _next_part(mirror, found, parts, tokenizer)
            reason = unfinished(meta)
        todo = plan(found, mirror.files, reason, config.rebuild_fraction, changes)
        if todo is None:
            return RefreshReport()
        if todo.reason:
            if not build:
                raise IndexNotBuilt(todo.reason)
            if parts is not None and len(found.stamps) > parts.batch:
                first = _restricted(found, build_order(list(found.stamps.values()))[: parts.batch])
                whole = len(found.stamps)
                _rebuild(mirror, first, todo.reason, todo.report, tokenizer, lambda n, _, phase: tell(n, whole, phase))
                _mark_partial(mirror, len(first.stamps), len(found.stamps))
                return todo.report
            _rebuild(mirror, found, todo.reason, todo.report, tokenizer, tell)
            return todo.report
        prepared = chunked(todo, found, config.chunking, mirror.notes.warn)
        _patch(mirror, found, [counted_terms(tokenizer, p) for p in prepared], todo)
        todo.report.rechunked_files = len(prepared)
        return todo.report


def partial_of(meta: Mapping[str, str]) -> tuple[int, int] | None:
    """(files indexed, files found) of an index whose first build is still adding parts; None when whole."""
    done, _, total = meta.get(_PARTIAL, "").partition(" ")
    if not (done.isdigit() and total.isdigit()):
        return None
    return int(done), int(total)


def unfinished(meta: Mapping[str, str]) -> str:
    """Why an index built in parts is not whole yet ("" when it is)."""
    partial = partial_of(meta)
    if partial is None:
        return ""
    return f"the first build is not finished: {partial[0]:,} of {partial[1]:,} files indexed"


def _mark_partial(mirror: Mirror, done: int, total: int) -> None:
    """Keep in the header how far the first build has come ("" once every file is in)."""
    mirror.store().set_meta({_PARTIAL: f"{done} {total}" if done < total else ""})


def _restricted(found: Scan, keys: Iterable[str]) -> Scan:
    """``found`` as if it held only ``keys``."""
    kept = sorted(keys)
    stamps = {key: found.stamps[key] for key in kept}
    return Scan(stamps, {key: found.owners[key] for key in kept}, found.skipped, found.selections)


def _next_part(mirror: Mirror, found: Scan, parts: Parts, tokenizer: Tokenizer) -> RefreshReport:
    """Add the next ``parts.batch`` files to a partial index, with the changes to the files it holds, as a
    patch (the added files read on the pool's workers)."""
    missing = [stamp for key, stamp in found.stamps.items() if key not in mirror.files]
    adding = build_order(missing)[: parts.batch]
    part = _restricted(found, [key for key in found.stamps if key in mirror.files] + adding)
    todo = plan(part, mirror.files, "", rebuild_fraction=1.0)
    report = RefreshReport()
    if todo is not None:
        warn, chunking = mirror.notes.warn, mirror.config.chunking
        edited = [
            counted_terms(tokenizer, chunk_file(part.owners[i.key], i, data, chunking)[0]) for i, data in todo.changed
        ]
        jobs = [(part.owners[key], part.stamps[key], chunking) for key in todo.diff.added]
        counted = edited + parts.pool.prepare(jobs, tokenizer, warn)
        _patch(mirror, part, counted, todo)
        todo.report.rechunked_files = len(counted)
        report = todo.report
    _mark_partial(mirror, len(part.stamps), len(found.stamps))
    return report


def _rebuild(
    mirror: Mirror, found: Scan, reason: str, report: RefreshReport, tokenizer: Tokenizer, tell: Progress
) -> None:
    store = mirror.store()
    report.rebuilt, report.reason = True, reason
    log.info("rebuilding the %s index: %s", mirror.config.name, reason)
    keys = sorted(found.stamps)
    jobs = [(found.owners[key], found.stamps[key], mirror.config.chunking) for key in keys]
    prepared = prepare_all(jobs, tokenizer, mirror.notes.warn)
    lexical = lexical_index(mirror.config, mirror.store, mirror.notes)
    files, chunks = rebuild(store, mirror.config, found, prepared, tell, lexical)
    mirror.lexical = lexical
    mirror.committed(store, files)
    report.rechunked_files = len(keys)
    report.chunks_added = chunks


def _patch(mirror: Mirror, found: Scan, counted: list[tuple[Prepared, list[Counted]]], todo: Plan) -> None:
    """Drop the chunks of changed and removed files, add the new chunks (``counted``: with their terms)."""
    store = mirror.store()
    removed = todo.diff.removed
    old_keys = [p.key for p, _ in counted if p.key in mirror.files] + removed
    try:
        patched = patch(store, mirror.config, found, mirror.lexical, counted, old_keys, removed, todo.touched)
    except BaseException:
        mirror.generation = -1  # the in-memory index may hold part of the rolled-back update
        raise
    for key in removed:
        mirror.files.pop(key, None)
    mirror.files.update(patched.files)  # in place: a copy of every row per commit costs ms at 50k files
    mirror.committed(store, mirror.files, patched.new_slots, patched.old_slots, patched.attributes)
    todo.report.chunks_added = len(patched.new_slots)
    if mirror.vectors is not None:
        mirror.vectors.drop(patched.old_slots)


__all__ = [
    "Parts",
    "Plan",
    "RefreshReport",
    "chunked",
    "partial_of",
    "plan",
    "unfinished",
    "update",
    "write",
    "writer_lock",
]
