"""The final cut: the head of a definition split into its members is joined to its body's start, passages with
the same text collapse into the best one, then the best ``k`` are assembled, with stitching merging the
neighbours of a shown passage into it (``retrieve.stitch``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

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
    index = ranking.request.index
    groups = None
    out = list(ranking.hits)
    for position, (hit, slot) in enumerate(zip(ranking.hits[:reach], ranking.slots[:reach], strict=False)):
        chunk = hit.chunk
        if not chunk.spec.code or not chunk.symbol or hit.parts:
            continue
        groups = groups or index.file_groups()
        if slot >= len(groups.of_slot) or groups.of_slot[slot] < 0:
            continue
        slots = groups.slots_of(int(groups.of_slot[slot])).tolist()
        after = slots.index(slot) + 1 if slot in slots else len(slots)
        if after >= len(slots):
            continue
        following = index.chunks([slots[after]]).get(slots[after])
        if following is not None and opens_members(chunk, following):
            out[position] = stitch(hit, Hit(following, hit.score))
    return out


def configured(settings: Settings) -> Stitch:
    return Stitch(settings.stitch)


KIND = StageKind(configured, (Rung("+stitch", "AGENTTY_RAG_STITCH"),))

__all__ = ["KIND", "STITCH_REACH", "Stitch", "with_bodies"]
