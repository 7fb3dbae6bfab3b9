"""The ranking stages after candidate generation, in the order they run, and how the settings build them.

Each stage module holds its stage and a ``KIND``: how the settings build it (or switch it off) and the
rag-bench ladder rungs that measure it. ``bench.ladder`` builds its ladder from ``KINDS``: a new stage is a
module here, one line below, and the setting that switches it; it appears on the ladder by itself.
"""

from __future__ import annotations

from agentty_rag.config import Settings
from agentty_rag.retrieve.ranking import Stage
from agentty_rag.retrieve.stages import correct, expand, fuse, graph, hyde, learn, mmr, prf, rerank, stitch
from agentty_rag.retrieve.stages.kind import Rung, StageKind

KINDS: tuple[StageKind, ...] = (
    prf.KIND,
    fuse.KIND,
    expand.KIND,
    hyde.KIND,
    graph.KIND,
    rerank.KIND,
    learn.KIND,
    mmr.KIND,
    correct.KIND,
    stitch.KIND,
)


def build_stages(settings: Settings) -> tuple[Stage, ...]:
    """The stages the settings switch on, in the order they run."""
    return tuple(stage for kind in KINDS if (stage := kind.build(settings)) is not None)


def rungs() -> tuple[Rung, ...]:
    """Every stage's ladder rungs, in pipeline order."""
    return tuple(rung for kind in KINDS for rung in kind.rungs)


__all__ = ["KINDS", "Rung", "StageKind", "build_stages", "rungs"]
