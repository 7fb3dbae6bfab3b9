"""What defines one index: its name and place, its sources, fields and chunking, and how it is kept."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentty_rag.chunking import ChunkingConfig
from agentty_rag.index.lexical.fields import DOCS_SCORING, FIELDS_VERSION, FieldSpec, Scoring
from agentty_rag.index.lexical.tokenize import TOKENIZER_VERSION
from agentty_rag.index.qdrant.target import QdrantTarget
from agentty_rag.index.storage.store import SCHEMA_VERSION
from agentty_rag.sources.base import Source

# (done, total, phase): phase is "scanning", "parsing", "writing" or "embedding".
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class IndexConfig:
    """Everything that defines one index.

    Args:
        name: ``docs`` or ``code``; names the files ``rag_<name>.ragdb`` and ``.meta.json``.
        state_dir: the workspace's ``.agentty`` folder.
        sources: where the files come from.
        fields: indexed fields and their weights.
        chunking: chunk sizes (part of the manifest: a change rebuilds).
        rebuild_fraction: share of changed files above which an update is a rebuild
            (``AGENTTY_RAG_REBUILD_FRACTION``: the settings hold its default).
        lock_timeout_s: how long to wait for another process's update (``AGENTTY_RAG_LOCK_TIMEOUT_MS``).
        roots: folders recorded in the manifest (workspace root, docs root ...).
        persist: False keeps the index in memory only (nothing under ``.agentty/``): for sources that must
            never be written to disk, such as other MCP servers' resources.
        scoring: BM25 parameters of its chunks and files (query time only: a change needs no rebuild).
        vector_store: where its embeddings are kept (a name in ``vectors.stores.VECTOR_STORES``).
        lexical: the backend of its lexical index (a name in ``lexical.backends.BACKENDS``).
        qdrant: where the ``qdrant`` backend keeps its collection (None: the index does not use it).
        shared: the shared index on a Qdrant server this index starts from (None: it is built from its files).
        seal_key: this machine's key (``state.machine_key``): every checksum the index's files carry is sealed
            with it, so an index written elsewhere is known and rebuilt (b"": unsealed, for tests and tools).
    """

    name: str
    state_dir: Path
    sources: tuple[Source, ...]
    fields: tuple[FieldSpec, ...]
    chunking: ChunkingConfig
    rebuild_fraction: float
    lock_timeout_s: float
    roots: dict[str, str] = field(default_factory=dict)
    persist: bool = True
    scoring: Scoring = DOCS_SCORING
    vector_store: str = "sqlite"
    lexical: str = "sqlite"
    qdrant: QdrantTarget | None = None
    shared: QdrantTarget | None = None
    seal_key: bytes = field(default=b"", repr=False)

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def db_path(self) -> Path:
        return self.state_dir / f"rag_{self.name}.ragdb"

    @property
    def manifest_path(self) -> Path:
        return self.state_dir / f"rag_{self.name}.ragdb.meta.json"

    @property
    def lock_path(self) -> Path:
        return self.state_dir / f"rag_{self.name}.lock"

    def profile(self) -> dict[str, object]:
        """What the stored index must match to be reused as is (a lexical backend other than SQLite too: the
        database of one holds no postings for the other)."""
        profile: dict[str, object] = {
            "schema_version": SCHEMA_VERSION,
            "tokenizer_version": TOKENIZER_VERSION,
            "chunking": self.chunking.fingerprint(),
            "fields": [f.name for f in self.fields],
            "fields_version": FIELDS_VERSION,
        }
        if self.lexical != "sqlite":
            profile["lexical"] = self.lexical
        return profile


__all__ = ["IndexConfig", "Progress"]
