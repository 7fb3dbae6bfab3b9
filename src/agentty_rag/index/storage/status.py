"""The state of one index as ``agentty-rag status`` shows it: files, chunks, freshness, skips, redactions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.manifest import Diff, Scan, meta_int
from agentty_rag.index.storage.store import FOREIGN_REPLACED, FileRow
from agentty_rag.sources.walker import REPORT_PATHS_PER_REASON, SkipReport


def indexed_files(files: Mapping[str, FileRow]) -> int:
    """Files with chunks in the index (a skipped file has a row, but no chunk)."""
    return sum(1 for row in files.values() if not row.skip)


def skipped(files: Mapping[str, FileRow], last_scan: Scan | None) -> SkipReport:
    """What the last scan and the loads left out."""
    report = SkipReport()
    if last_scan is not None:
        report.merge(last_scan.skipped)
    for key, row in sorted(files.items()):
        if row.skip:
            report.add(row.skip, key.split(":", 1)[1])
    return report


def redactions(files: Mapping[str, FileRow]) -> dict[str, object]:
    """How many secrets were replaced before indexing, in how many files (and the first of them)."""
    paths = sorted(key.split(":", 1)[1] for key, row in files.items() if row.redacted)
    secrets = sum(row.redacted for row in files.values())
    return {"secrets": secrets, "files": len(paths), "examples": paths[:REPORT_PATHS_PER_REASON]}


def files_by_source(files: Mapping[str, FileRow], last_scan: Scan | None) -> dict[str, int]:
    """Indexed files per source (``docs``, ``skill``, ``memory``, ``code``); before a first build, the
    files the last scan found."""
    keys: Iterable[str] = (key for key, row in files.items() if not row.skip)
    if not files and last_scan is not None:
        keys = last_scan.stamps
    counts = Counter(key.split(":", 1)[0] for key in keys)
    return dict(sorted(counts.items()))


def changes(found: Diff) -> str:
    """What changed on disk since the last update ("" when nothing did)."""
    if found.empty:
        return ""
    return f"{len(found.added)} added, {len(found.stamp_changed)} modified, {len(found.removed)} removed"


def status_of(
    config: IndexConfig,
    files: Mapping[str, FileRow],
    last_scan: Scan | None,
    chunks: int,
    storage: str,
    meta: Mapping[str, str],
    fresh: bool,
    stale_reason: str,
) -> dict[str, object]:
    """The status record of an index, from its manifest rows, header and last scan."""
    return {
        "index": config.name,
        "path": str(config.db_path),
        "files": indexed_files(files),
        "chunks": chunks,
        "updated_at": meta.get("updated_at", "never"),
        "generation": meta_int(meta, "generation"),
        "fresh": fresh,
        "stale_reason": stale_reason,
        "storage": storage,
        "redacted": redactions(files),
        "manifest": {**config.profile(), "roots": config.roots},
        "skipped": skipped(files, last_scan).to_json(),
        "by_source": files_by_source(files, last_scan),
        "selection": list(last_scan.selections) if last_scan is not None else [],
        "foreign_replaced_at": meta.get(FOREIGN_REPLACED, ""),
    }


__all__ = ["changes", "files_by_source", "indexed_files", "redactions", "skipped", "status_of"]
