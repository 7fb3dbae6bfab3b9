"""The dense leg's self-check of one code index: on this corpus, with this model, is a search best made by the
lexical leg alone, by both legs (hybrid), or with the dense leg leading?

Up to ``PROBE_LIMIT`` of the index's own documented definitions, picked deterministically, become questions
(``retrieve.legs``: their first doc sentence, the docs hidden from the answer everywhere a search reads it),
each searched the three ways through the search's own default stages. When the lexical or the dense-led search
beats the hybrid one by more than its own noise, the index's searches take that way. The verdict is kept
beside the index (``rag_code.legcheck.json``) with what it depends on: the embedding profile, the ranking
settings, the number of chunks and the probed chunks' hashes. It is checked again when the profile or the
ranking settings changed, or when a quarter of the probed definitions changed or the index grew or shrank by a
quarter. A missing or damaged file is a verdict not made yet, and so is one made elsewhere: the file carries a
seal of its content with this machine's key (``database.checksum``). The check runs where embedding runs (the
server's background thread, ``agentty-rag index``, rag-bench's build), within ``BUDGET_S``; a search only reads
it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from agentty_rag.config import Settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.storage.database import checksum
from agentty_rag.index.vectors.base import embed_hash, embed_text
from agentty_rag.index.vectors.dense import Embedder, Vector
from agentty_rag.retrieve.fusion import HYBRID
from agentty_rag.retrieve.leg_probes import PROBE_LIMIT, pick_probes
from agentty_rag.retrieve.legs import Verdict, decide, probe_ranks
from agentty_rag.retrieve.pipeline import Plan
from agentty_rag.retrieve.stages import fuse, rerank, stitch
from agentty_rag.state.files import read_json, write_json

log = logging.getLogger(__name__)

VERSION = 2
# Seconds a check may take; the probes ranked by then decide (fewer than ``MIN_PROBES`` keep the hybrid).
BUDGET_S = 60.0
# The key of the file's seal.
_SEAL = "seal"
# The share of probed definitions changed (or of chunks gained or lost) that makes a verdict stale.
STALE_SHARE = 0.25
# A verdict holds a few hundred (slot, hash) pairs: a few kB.
_VERDICT_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Stored:
    """A verdict and what it was made for."""

    verdict: Verdict
    profile: str
    fusion: str
    chunks: int
    held: tuple[tuple[int, str], ...]
    seconds: float = 0.0


def verdict_path(index: CorpusIndex) -> Path:
    return index.config.state_dir / f"rag_{index.config.name}.legcheck.json"


def _seal(content: dict[str, object], key: bytes) -> str:
    return checksum(json.dumps(content, sort_keys=True), key=key)


def load(path: Path, key: bytes) -> Stored | None:
    """The stored verdict (None when there is none, it cannot be read, or another key sealed it: it is made
    again). Read as every state file is (``state.files``): never through a link, a FIFO or a device, bounded,
    any JSON."""
    data, _ = read_json(path, _VERDICT_MAX_BYTES)
    try:
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return None
        if data.pop(_SEAL, None) != _seal(data, key):
            return None
        verdict = Verdict(**data["verdict"])
        held = tuple((int(slot), str(digest)) for slot, digest in data["held"])
        stored = Stored(verdict, str(data["profile"]), str(data["fusion"]), int(data["chunks"]), held)
        return replace(stored, seconds=float(data.get("seconds", 0.0)))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def save(path: Path, stored: Stored, key: bytes) -> None:
    """Write the verdict atomically (a reader sees the old one or the new one), never through a link, into
    a ``.agentty/`` that stays inside the workspace.

    Raises:
        OSError: it cannot be kept there (``UnsafeFile`` for a link or a folder that links out).
    """
    content = json.loads(json.dumps({"version": VERSION, **asdict(stored)}))  # as it reads back: lists, not tuples
    write_json(path, {**content, _SEAL: _seal(content, key)})


def stale_reason(stored: Stored, index: CorpusIndex, profile: str, fusion: str) -> str:
    """Why a stored verdict no longer holds for the index as it is ("" when it holds)."""
    if stored.profile != profile:
        return "another embedding model"
    if stored.fusion != fusion:
        return "other ranking settings"
    if abs(index.n_chunks - stored.chunks) > STALE_SHARE * max(stored.chunks, 1):
        return "the index grew or shrank"
    if stored.held and changed(index, stored.held) > STALE_SHARE * len(stored.held):
        return "the probed definitions changed"
    return ""


def changed(index: CorpusIndex, held: tuple[tuple[int, str], ...]) -> int:
    """How many of the (slot, embed hash) chunks the index no longer holds as they were."""
    now = index.chunks([slot for slot, _ in held])
    return sum(1 for slot, digest in held if slot not in now or embed_hash(now[slot]) != digest)


# -- running it --------------------------------------------------------------------------------------------


def probe_plan(settings: Settings) -> Plan:
    """The plan the probes are searched with: the search's default stages (fusion, the reranker with the file
    order, the final cut) with the user's settings for them; the optional stages read other state (a graph,
    feedback, a generator) and are left out."""
    stages = tuple(
        stage
        for stage in Plan.from_settings(settings).stages
        if isinstance(stage, (fuse.Fuse, rerank.Rerank, stitch.Stitch))
    )
    return Plan(stages, dense=settings.dense_weight > 0, lexical=settings.bm25_weight > 0, hubness=settings.hubness)


def ranking_key(plan: Plan) -> str:
    """What a verdict depends on besides the corpus and the model: the probes' stages, and the share of each
    chunk's neighbourhood density the dense leg takes off."""
    return repr(plan.stages) + (f" hubness={plan.hubness:g}" if plan.hubness else "")


def run_check(
    index: CorpusIndex,
    embedder: Embedder,
    query_vector: Callable[[str], Vector | None],
    plan: Plan,
    profile: str,
    batch: int = 32,
) -> Stored | None:
    """Probe the index and return the verdict (None when the embedding backend failed: try again later).

    Raises:
        EmbeddingError: a masked text could not be embedded.
    """
    started = time.monotonic()
    deadline = started + BUDGET_S
    with index.reading():
        probes = pick_probes(index, started + BUDGET_S / 3)
        chunks = index.n_chunks
    texts = [(slot, embed_text(chunk)) for probe in probes for slot, chunk in probe.masked.items()]
    vectors: list[Vector] = []
    for first in range(0, len(texts), batch):
        vectors.extend(embedder.embed([text for _, text in texts[first : first + batch]], "document"))
    masked = iter(np.asarray(v, np.float32) for v in vectors)
    ranks: list[tuple[float, float, float]] = []
    held: list[tuple[int, str]] = []
    for probe in probes:
        own = {slot: next(masked) for slot in probe.masked}
        if time.monotonic() > deadline:
            break
        query = query_vector(probe.query)
        if query is None:
            return None
        with index.reading():
            if changed(index, probe.held):
                continue  # the index changed under the probe
            ranks.append(probe_ranks(index, probe, query, own, plan))
        held.extend(probe.held)
    return Stored(decide(ranks), profile, ranking_key(plan), chunks, tuple(held), round(time.monotonic() - started, 2))


class LegChecks:
    """The verdicts of one session's indexes: read from beside each index (again when the file changes),
    made when due, and applied to its searches."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.plan = probe_plan(settings)
        self.ranking = ranking_key(self.plan)
        self._guard = threading.Lock()
        self._read: dict[Path, tuple[int, Stored | None]] = {}  # path -> (mtime in ns, what it held)
        self._running: set[Path] = set()
        self._failed: set[Path] = set()  # a check that failed unexpectedly is not tried again this session

    def off_reason(self, index: CorpusIndex) -> str:
        """Why no check applies to the index ("" when one does)."""
        if index.config.name != "code":
            return "only code indexes are checked"
        if not self.settings.leg_check:
            return "off (AGENTTY_RAG_LEG_CHECK=0)"
        if self.settings.weights_configured:
            return "not applied: the legs' weights are set"
        return ""

    def stored(self, index: CorpusIndex) -> Stored | None:
        path = verdict_path(index)
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            return None
        with self._guard:
            known = self._read.get(path)
            if known is not None and known[0] == mtime:
                return known[1]
        stored = load(path, index.config.seal_key)
        with self._guard:
            self._read[path] = (mtime, stored)
        return stored

    def verdict(self, index: CorpusIndex, profile: str) -> Verdict | None:
        """The index's verdict, when there is one, it applies and it still holds."""
        if self.off_reason(index):
            return None
        stored = self.stored(index)
        if stored is None or stale_reason(stored, index, profile, self.ranking):
            return None
        return stored.verdict

    def lexical(self, index: CorpusIndex, profile: str) -> Verdict | None:
        """The verdict that keeps the index's searches lexical, when there is one and it still holds."""
        verdict = self.verdict(index, profile)
        return verdict if verdict is not None and verdict.lexical else None

    def lead(self, index: CorpusIndex, profile: str) -> str:
        """Which leg leads the index's hybrid searches: ``hybrid`` unless a verdict says ``dense-led``."""
        verdict = self.verdict(index, profile)
        return verdict.lead if verdict is not None and not verdict.lexical else HYBRID

    def due(self, index: CorpusIndex, profile: str) -> bool:
        """Whether the index needs a (new) verdict."""
        if self.off_reason(index) or verdict_path(index) in self._failed:
            return False
        stored = self.stored(index)
        with index.reading():
            return stored is None or bool(stale_reason(stored, index, profile, self.ranking))

    def run(
        self, index: CorpusIndex, embedder: Embedder, query_vector: Callable[[str], Vector | None], profile: str
    ) -> None:
        """Make and keep the index's verdict, when it is due and no other thread is making it.

        Raises:
            EmbeddingError: the backend failed (the verdict is made later).
        """
        path = verdict_path(index)
        with self._guard:
            if path in self._running:
                return
            self._running.add(path)
        try:
            if not self.due(index, profile):
                return
            stored = run_check(index, embedder, query_vector, self.plan, profile, self.settings.embed_batch)
            if stored is not None:
                save(path, stored, index.config.seal_key)
                log.info("leg check of the %s index: %s", index.config.name, stored.verdict.describe())
        except OSError as error:  # e.g. a read-only .agentty: checking again at every search would not help
            log.warning("the leg check's verdict could not be kept: %s; searches stay hybrid", error)
            self.failed(index)
        finally:
            with self._guard:
                self._running.discard(path)

    def failed(self, index: CorpusIndex) -> None:
        """The check of this index failed for a reason a retry would meet again: searches stay hybrid."""
        with self._guard:
            self._failed.add(verdict_path(index))

    def describe(self, index: CorpusIndex, profile: str) -> str:
        """What ``status`` says of the index's check."""
        off = self.off_reason(index)
        if off:
            return off
        stored = self.stored(index)
        if stored is None:
            return "not made yet (made once the vectors are complete)"
        reason = stale_reason(stored, index, profile, self.ranking)
        return stored.verdict.describe() + (f" — stale ({reason}), made again soon" if reason else "")


__all__ = [
    "BUDGET_S",
    "PROBE_LIMIT",
    "STALE_SHARE",
    "LegChecks",
    "Stored",
    "changed",
    "load",
    "pick_probes",
    "probe_plan",
    "run_check",
    "save",
    "stale_reason",
    "verdict_path",
]
