"""The final cut: passages with the same text collapse into the best one, then the best ``k`` are assembled,
with stitching merging the neighbours of a shown passage into it (``retrieve.stitch``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from agentty_rag.config import Settings
from agentty_rag.retrieve.ranking import Ranking
from agentty_rag.retrieve.stages.kind import Rung, StageKind
from agentty_rag.retrieve.stitch import assemble, deduplicate

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
        unique = deduplicate(list(ranking.hits))
        shown = assemble(unique, k, self.stitching, STITCH_REACH * k if ranking.files is not None else 0)
        funnel = ranking.funnel.then("dedup/stitch" if self.stitching else "dedup", len(unique))
        return replace(ranking, shown=tuple(shown), funnel=funnel)


def configured(settings: Settings) -> Stitch:
    return Stitch(settings.stitch)


KIND = StageKind(configured, (Rung("+stitch", "AGENTTY_RAG_STITCH"),))

__all__ = ["KIND", "STITCH_REACH", "Stitch"]
