"""A code index that starts from the shared index: seeded once per process (when the collection holds a
version it was not seeded from), then refreshed from the working tree as always. A server that does not
answer, a collection that cannot be used, or a local index that cannot be written from it leaves the index
as it was (built from the files when there was none), and the next result says why, once per failure."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from agentty_rag.errors import AgenttyError, BackendUnavailable, BackendUnreachable, NotPublished
from agentty_rag.index.qdrant.origin import overlay, published_hashes, seeded_from
from agentty_rag.index.qdrant.publish import Published, publish
from agentty_rag.index.qdrant.reach import reach_of
from agentty_rag.index.qdrant.seed import Download, fetch, install
from agentty_rag.index.qdrant.shared import INSTALL, Provenance, SharedCollection
from agentty_rag.index.qdrant.target import QdrantTarget
from agentty_rag.index.storage.definition import IndexConfig, Progress
from agentty_rag.index.storage.mirror import Mirror
from agentty_rag.index.storage.notes import Notes


class SharedStart:
    """The shared index of one code index, and whether this process has started from it."""

    def __init__(self, target: QdrantTarget, config: IndexConfig, notes: Notes) -> None:
        self.target = target
        self.config = config
        self._notes = notes
        self._closed = False
        self._lock = threading.Lock()
        self.checked = False  # seeded, or known not to be possible: not asked again in this process
        self.problem = ""  # why the index is not the shared one

    @contextlib.contextmanager
    def opened(self) -> Iterator[SharedCollection]:
        """The collection for one start or publish: the client is closed after it (qdrant-client's local mode
        lets one client at a time hold its folder)."""
        if self._closed:
            raise BackendUnavailable("the index is closed")
        try:
            collection = SharedCollection(self.target)
        except ImportError:
            raise BackendUnavailable(INSTALL) from None
        try:
            yield collection
        finally:
            collection.close()

    def fetch(self, seeded_version: str | None) -> Download | None:
        """Read the published version unless this process already started from the collection (or learnt it
        cannot), or the index was seeded from it (None). The network part: the caller holds no index lock."""
        with self._lock:
            # Asked already, or the server rests after a failure this process has already said.
            if self.checked or self._closed or reach_of(self.target).resting():
                return None
            try:
                with self.opened() as collection:
                    download = fetch(collection, self.config, seeded_version)
            except BackendUnreachable as error:  # asked again after the server's rest
                self._refused(f"qdrant unreachable ({error})", final=False)
                return None
            except (NotPublished, BackendUnavailable) as error:
                self._refused(str(error))
                return None
            if download is None:
                self.checked, self.problem = True, ""
            return download

    def install(self, mirror: Mirror, download: Download, tell: Progress) -> int:
        """Build the index from the working tree with a download's vectors (the caller holds the index lock);
        returns how many files were built (0: none). A local index that cannot be written that way is built
        from the files by the refresh, and the note says why."""
        with self._lock:
            try:
                built = install(mirror, download, tell)
                self.checked, self.problem = True, ""
                return built
            except AgenttyError as error:
                self._refused(
                    f"the index could not be written from the Qdrant collection {self.target.collection} ({error})"
                )
                return 0

    def _refused(self, problem: str, final: bool = True) -> None:
        self.checked, self.problem = final, problem
        self._notes.note(f"{problem}: answered from the local index")

    def publish(self, mirror: Mirror, provenance: Provenance) -> Published:
        with self._lock:
            with self.opened() as collection:
                report = publish(mirror, collection, provenance)
            # This index holds what was just published: the next start finds it seeded from it.
            self.checked = False
            return report

    def describe(self, mirror: Mirror) -> str:
        """The ``backend`` line of ``status``: the server and collection, what the index was seeded from, the
        overlay's size (or why the local index answers)."""
        where = f"qdrant shared index {self.target.collection} at {self.target.url}"
        if self.problem:
            return f"{where} — {self.problem}; searches answer from the local index"
        held = seeded_from(mirror.store()) if not mirror.storage.never_built() else {}
        if not held:
            return f"{where} — not started from it yet"
        commit = str(held.get("commit") or "")[:12] or "unknown"
        published = published_hashes(mirror.config)
        changed = "?" if published is None else str(len(overlay(mirror.files, published)))
        return f"{where} — commit {commit}, published {held.get('published_at') or '?'}; overlay: {changed} files"

    def close(self) -> None:
        """No start or publish after this one (a start-up build still running asks nothing more). Never waits
        for a request under way: closing a server must not wait out a silent Qdrant."""
        self._closed = True


__all__ = ["SharedStart"]
