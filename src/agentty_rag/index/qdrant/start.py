"""A code index that starts from the shared index: seeded once per process (when the collection holds a
version it was not seeded from), then refreshed from the working tree as always; a server that does not
answer, or a collection with nothing published, leaves the index built from the files, and says so once."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from agentty_rag.errors import BackendUnavailable, BackendUnreachable, NotPublished
from agentty_rag.index.qdrant.collection import reach_of
from agentty_rag.index.qdrant.origin import overlay, published_hashes, seeded_from
from agentty_rag.index.qdrant.publish import Published, publish
from agentty_rag.index.qdrant.seed import Seeded, seed
from agentty_rag.index.qdrant.shared import Provenance, SharedCollection
from agentty_rag.index.qdrant.target import QdrantTarget
from agentty_rag.index.storage.definition import Progress
from agentty_rag.index.storage.mirror import Mirror
from agentty_rag.index.storage.notes import Notes


class SharedStart:
    """The shared index of one code index, and whether this process has started from it."""

    def __init__(self, target: QdrantTarget, notes: Notes) -> None:
        self.target = target
        self._notes = notes
        self._closed = False
        self._lock = threading.Lock()
        self.done: Seeded | None = None  # the check that succeeded (None: not yet)
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
            raise BackendUnavailable(
                "the shared index needs the Qdrant extra: pip install 'agentty-rag[qdrant]'"
            ) from None
        try:
            yield collection
        finally:
            collection.close()

    def start(self, mirror: Mirror, tell: Progress) -> None:
        """Seed ``mirror`` from the collection unless this process already did (or learnt it cannot)."""
        with self._lock:
            # Asked already, or the server rests after a failure this process has already said.
            if self.checked or self._closed or reach_of(self.target).resting():
                return
            try:
                with self.opened() as collection:
                    self.done = seed(mirror, collection, tell)
                self.checked, self.problem = True, ""
            except BackendUnreachable as error:  # asked again after the server's rest
                self.problem = f"qdrant unreachable ({error})"
                self._notes.note(f"{self.problem}: answered from the local index")
            except (NotPublished, BackendUnavailable) as error:
                self.checked, self.problem = True, str(error)
                self._notes.note(f"{error}: answered from the local index")

    def publish(self, mirror: Mirror, provenance: Provenance) -> Published:
        with self._lock:
            with self.opened() as collection:
                report = publish(mirror, collection, provenance)
            # This index holds what was just published: the next start records it as its seed.
            self.done, self.checked = None, False
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
        """No start or publish after this one (a start-up build still running asks nothing more)."""
        with self._lock:
            self._closed = True


__all__ = ["SharedStart"]
