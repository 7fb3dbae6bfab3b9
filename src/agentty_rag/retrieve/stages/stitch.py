"""The final cut: the head of a definition split into its members is joined to its body's start, passages with
the same text collapse into the best one, then the best ``k`` are assembled, with stitching merging the
neighbours of a shown passage into it (``retrieve.stitch``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from agentty_rag.config import Settings
from agentty_rag.retrieve.ranking import Ranking
from agentty_rag.retrieve.stages.kind import Rung, StageKind
from agentty_rag.retrieve.stitch import assemble, deduplicate, opens_members, stitch
from agentty_rag.types import Hit

# With the file order, stitching also merges in neighbours ranked up to this many times k (a method next to
# the one shown).
STITCH_REACH = 3


@dataclass(frozen=True)
class Stitch:
    """The cut (it always runs); ``stitching`` merges neighbouring passages and near-duplicates."""

    stitching: bool = True

    @property
    def scores_files(self) -> bool:
        return False

    def run(self, ranking: Ranking) -> Ranking:
        k = ranking.request.k
        hits = with_bodies(ranking, STITCH_REACH * k) if self.stitching else list(ranking.hits)
        unique = deduplicate(hits)
        shown = assemble(unique, k, self.stitching, STITCH_REACH * k if ranking.files is not None else 0)
        funnel = ranking.funnel.then("dedup/stitch" if self.stitching else "dedup", len(unique))
        return replace(ranking, shown=tuple(shown), funnel=funnel)


def with_bodies(ranking: Ranking, reach: int) -> list[Hit]:
    """The hits, each head of a split definition among the first ``reach`` joined to its first member
    (``stitch.opens_members``), whether or not that member ranked."""
    groups = ranking.request.index.file_groups()
    following: dict[int, int] = {}  # position of a hit -> the slot of the chunk after it in its file
    for position, (hit, slot) in enumerate(zip(ranking.hits[:reach], ranking.slots[:reach], strict=False)):
        if not hit.chunk.spec.code or not hit.chunk.symbol or hit.parts or slot >= len(groups.of_slot):
            continue
        file = int(groups.of_slot[slot])
        slots = groups.slots_of(file) if file >= 0 else None
        at = int(np.searchsorted(slots, slot)) if slots is not None else 0
        if slots is not None and at + 1 < len(slots) and slots[at] == slot:
            following[position] = int(slots[at + 1])
    chunks = ranking.request.index.chunks(list(following.values())) if following else {}
    out = list(ranking.hits)
    for position, slot in following.items():
        hit, after = out[position], chunks.get(slot)
        if after is not None and opens_members(hit.chunk, after):
            out[position] = stitch(hit, Hit(after, hit.score))
    return out


def configured(settings: Settings) -> Stitch:
    return Stitch(settings.stitch)


KIND = StageKind(configured, (Rung("+stitch", "AGENTTY_RAG_STITCH"),))

__all__ = ["KIND", "STITCH_REACH", "Stitch", "with_bodies"]
