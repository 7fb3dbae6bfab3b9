"""What a local index knows of the shared index it started from: the version and provenance in its header,
and each file's checksum as published (``rag_code.published.json``), from which the overlay is told."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentty_rag.fsguard import UnsafeFile, read_regular, write_private
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.store import FileRow, Store

log = logging.getLogger(__name__)

# The meta keys of a local index seeded from a collection.
SEEDED_VERSION, SEEDED_FROM = "shared_version", "shared_from"
_PUBLISHED_MAX_BYTES = 256 << 20


def provenance_of(marker: Mapping[str, Any]) -> dict[str, object]:
    keys = ("commit", "branch", "repository", "published_at", "files", "chunks")
    return {k: marker.get(k) for k in keys}


def seeded_from(store: Store) -> dict[str, Any]:
    """What the local index was seeded from (``{}``: it was built from the files)."""
    meta = store.meta()
    if SEEDED_VERSION not in meta:
        return {}
    try:
        held = json.loads(meta.get(SEEDED_FROM, "{}"))
    except ValueError:
        held = {}
    return {"version": meta[SEEDED_VERSION], **(held if isinstance(held, dict) else {})}


def _published_path(config: IndexConfig) -> Path:
    return config.state_dir / f"rag_{config.name}.published.json"


def keep_published(config: IndexConfig, rows: Mapping[str, FileRow]) -> None:
    """Keep each file's checksum as published beside the index, to tell the overlay later."""
    if not config.persist:
        return
    text = json.dumps({key: row.hash for key, row in sorted(rows.items())}, separators=(",", ":"))
    try:
        write_private(_published_path(config), text.encode("utf-8"))
    except OSError as error:
        log.warning("%s could not be written (%s)", _published_path(config), error)


def published_hashes(config: IndexConfig) -> dict[str, str] | None:
    """Each file's checksum as the collection the index was seeded from holds it (None: not known)."""
    try:
        data = json.loads(read_regular(str(_published_path(config)), str(config.state_dir), _PUBLISHED_MAX_BYTES))
    except (OSError, UnsafeFile, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return {str(key): str(value) for key, value in data.items()}


def overlay(files: Mapping[str, FileRow], published: Mapping[str, str]) -> list[str]:
    """The files the working tree holds otherwise than the collection: edited, added, deleted."""
    changed = {key for key, row in files.items() if published.get(key) != row.hash}
    return sorted(changed | (set(published) - set(files)))


__all__ = [
    "SEEDED_FROM",
    "SEEDED_VERSION",
    "keep_published",
    "overlay",
    "provenance_of",
    "published_hashes",
    "seeded_from",
]
