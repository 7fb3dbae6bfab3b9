"""The ladder: the server's own pipeline measured one stage at a time, on one corpus with labeled queries.

``rag-bench docs|code`` runs it on a private copy of a workspace, ``rag-bench suite`` on each workspace of a
manifest; both build the index first (``build``), then run the rungs (``run_rungs``) and, when asked, the
token-economy levers (``levers.measure_levers``).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentty_rag.bench.baseline import WholeFileBaseline
from agentty_rag.bench.console import UsageError
from agentty_rag.bench.datasets import Query
from agentty_rag.bench.run import Reading, RungResult, Searched, Searcher, evaluate
from agentty_rag.config import Settings, load_settings, variable
from agentty_rag.index.engine import CorpusIndex, RefreshReport
from agentty_rag.render import passage_ends
from agentty_rag.retrieve.generator import generator_for
from agentty_rag.retrieve.stages import Rung as StageRung
from agentty_rag.retrieve.stages import expand, hyde
from agentty_rag.retrieve.stages import rungs as stage_rungs
from agentty_rag.types import Chunk
from agentty_rag.workspace.outcome import Outcome
from agentty_rag.workspace.request import ranking_request
from agentty_rag.workspace.service import Workspace

Progress = Callable[[str], None]

# The rung that is the default configuration (every stage at its default, through the output path), marked
# as such in every table and JSON row.
DEFAULT_RUNG = "+budget"
# The rung of the dense leg alone, the default stages over it, and the switch that turns the dense leg on.
DENSE_ONLY = "dense-only"
DENSE_STAGES = "dense+stages"
DENSE_SWITCH = "AGENTTY_RAG_DENSE"


def ladder(steps: Sequence[StageRung]) -> dict[str, dict[str, str]]:
    """Each rung's variables, from the stages' rungs (``steps``, in pipeline order).

    ``bm25`` has every switch off and ``dense-only`` is the dense leg's ranking with nothing else (the lexical
    leg weighted 0): the two legs alone. Each rung whose switch is on by default adds it to the rung before, up to
    the default configuration; ``+budget`` is that configuration measured through the output path (the
    relevance floor may drop passages); ``dense+stages`` is the same with the lexical leg weighted 0, so the
    ladder shows what the stages do to the dense leg alone; then each opt-in rung on top of the defaults.
    ``baseline`` is plain whole-file BM25 (bm25s defaults).
    """
    alone = {rung.switch: "0" for rung in steps}
    rungs: dict[str, dict[str, str]] = {"baseline": {}, "bm25": alone}
    # The other leg alone, as bare as ``bm25``: the dense leg's ranking with the lexical leg weighted 0.
    rungs[DENSE_ONLY] = {**alone, DENSE_SWITCH: "1", "AGENTTY_RAG_BM25_WEIGHT": "0"}
    current = rungs["bm25"]
    opt_in = []
    for rung in steps:
        if variable(rung.switch).default is True:
            current = {**current, rung.switch: "1"}
            rungs[rung.name] = current
        else:
            opt_in.append(rung)
    rungs[DEFAULT_RUNG] = current
    rungs[DENSE_STAGES] = {**current, "AGENTTY_RAG_BM25_WEIGHT": "0"}
    rungs.update({rung.name: {**current, rung.switch: "1"} for rung in opt_in})
    return rungs


# The ladder of the stages in ``retrieve.stages``, and the rungs whose hits are what the output path shows,
# not the ranking alone: ``+budget`` and every rung after it.
RUNGS = ladder(stage_rungs())
# The rungs whose stages ask the generator (``retrieve.generator``).
GENERATION_RUNGS = frozenset(rung.name for kind in (expand.KIND, hyde.KIND) for rung in kind.rungs)
OUTPUT_RUNGS = {*list(RUNGS)[list(RUNGS).index(DEFAULT_RUNG) :], "current"}


@dataclass(frozen=True)
class Target:
    """A corpus to measure: the files under ``root`` are read, and its indexes are written under ``state_dir``.

    ``state_dir`` None keeps the indexes in the root's own ``.agentty/`` (a private copy's); a folder elsewhere
    lets a workspace be measured where it is without anything being written to it.
    """

    root: Path
    env: Mapping[str, str]
    state_dir: Path | None = None

    def workspace(self, overrides: Mapping[str, str] | None = None) -> Workspace:
        workspace = Workspace(self.root, load_settings({**self.env, **(overrides or {})}))
        if self.state_dir is not None:
            workspace.state_dir = self.state_dir  # read before any index exists: only the indexes move
        return workspace


@dataclass
class Built:
    """A target's index after a full build, with the dense leg's state."""

    workspace: Workspace
    index: CorpusIndex
    report: RefreshReport
    seconds: float
    chunks: list[Chunk]
    dense: dict[str, Any]


def build(target: Target, corpus: str, own_db: Path, progress: Progress) -> Built:
    """Build ``corpus``'s index from scratch; when the dense leg answers, embed it, reusing ``own_db``'s vectors."""
    workspace = target.workspace()
    workspace.dense.patient = True  # a benchmark: a busy embedding server is waited for, not run without
    index = workspace.index(corpus)
    started = time.perf_counter()
    report = index.refresh(
        force_rebuild=True, progress=lambda done, total, phase: progress(f"indexing: {phase} {done}/{total} files")
    )
    seconds = time.perf_counter() - started
    dense: dict[str, Any] = {"state": workspace.dense.ensure().state, "description": workspace.dense.describe()}
    if dense["state"] == "ready":
        dense["reused"] = _reuse_vectors(index, own_db)
        started = time.perf_counter()
        embedded = workspace.dense.embed_all(index, lambda done, total, _: progress(f"embedding {done}/{total}"), False)
        spent = time.perf_counter() - started
        dense.update(embedded=embedded, seconds=spent, chunks_per_s=embedded / spent if spent else 0.0)
        workspace.embed_all(corpus)  # nothing left to embed: the leg check, as `agentty-rag index` makes it
        dense.update(
            leg_check=workspace.dense_status(corpus)["leg_check"], leg_check_s=time.perf_counter() - started - spent
        )
    return Built(workspace, index, report, seconds, index.all_chunks(), dense)


def _reuse_vectors(index: CorpusIndex, own_db: Path) -> int:
    """Import the vectors a workspace's own index holds (same model, same text) from a copy of its database:
    opening the database itself would create its write-ahead files in the workspace."""
    if not own_db.exists():
        return 0
    copy = index.config.state_dir / "vectors-to-reuse.ragdb"
    try:
        shutil.copyfile(own_db, copy)
        wal = own_db.with_name(own_db.name + "-wal")
        if wal.exists():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        return index.import_vectors(copy)
    finally:
        for leftover in (copy, *(copy.with_name(copy.name + s) for s in ("-wal", "-shm", "-journal"))):
            leftover.unlink(missing_ok=True)


def parse_rungs(spec: str | None) -> list[str]:
    """The rungs a comma-separated ``--rungs`` names (all of them when None)."""
    names = list(RUNGS) if not spec else [r.strip() for r in spec.split(",") if r.strip()]
    unknown = [r for r in names if r not in RUNGS]
    if unknown:
        raise UsageError(f"unknown rung(s) {', '.join(unknown)}; known: {', '.join(RUNGS)}")
    return names


def check_k(k: int) -> None:
    if not 1 <= k <= 50:
        raise UsageError("-k must be from 1 to 50")


def plan(
    rung_names: Sequence[str], config: str, dense: Mapping[str, Any], settings: Settings | None = None
) -> tuple[list[str], list[str]]:
    """The rungs to run (all of ``rung_names``, or ``current`` alone) and a line for each one skipped: the
    dense rung when the dense leg is not ready, the generation rungs when the generator of ``settings`` does
    not answer its probe (their figures would be the rung below's)."""
    ladder = ["current"] if config == "current" else list(rung_names)
    skipped: list[str] = []
    if dense["state"] != "ready":
        for name in (DENSE_ONLY, "+dense", DENSE_STAGES):
            if name in ladder:
                ladder = [r for r in ladder if r != name]
                skipped.append(f"{name} skipped: the dense leg is {dense['description']}")
    generating = [r for r in ladder if r in GENERATION_RUNGS]
    why = generator_for(settings).unavailable() if settings is not None and generating else ""
    if why:
        ladder = [r for r in ladder if r not in GENERATION_RUNGS]
        skipped.extend(f"{rung} skipped: the generator is unavailable: {why}" for rung in generating)
    return ladder, skipped


def reading(outcome: Outcome) -> Reading:
    """The passages an answer's text shows, and where each one's block ends in that text."""
    return Reading([p.hit for p in outcome.packed.passages], passage_ends(outcome.result, outcome.packed))


def baseline_searcher(index: CorpusIndex) -> Searcher:
    """Whole files ranked by plain BM25: no text an agent would read, so no token figures."""
    baseline = WholeFileBaseline(index)
    return lambda query, k: Searched(baseline.search(query, k))


def ranking_searcher(workspace: Workspace, corpus: str) -> Searcher:
    """The ranked hits alone; the ranking is put through the output path only to count what an agent reads."""

    def search(query: str, k: int) -> Searched:
        outcome = workspace.search(ranking_request(corpus, query, k))
        return Searched(outcome.result.hits, lambda: reading(outcome))

    return search


def output_searcher(workspace: Workspace, corpus: str) -> Searcher:
    """The passages the output path shows (stitched, above the relevance floor, within the budget)."""

    def search(query: str, k: int) -> Searched:
        shown = reading(workspace.search(ranking_request(corpus, query, k)))
        return Searched(shown.hits, lambda: shown)

    return search


@dataclass
class Rung:
    """One rung's scores, and the retrieval mode it ran in (None for the baseline)."""

    result: RungResult
    mode: str | None = None

    def row(self, categories: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Every figure, and each query's rank (with its category when ``categories`` gives one)."""
        row: dict[str, Any] = {"rung": self.result.name, "default": self.result.name == DEFAULT_RUNG}
        row.update(self.result.summary())
        if self.mode is not None:
            row["mode"] = self.mode
        per_query = []
        for score in self.result.scores:
            entry: dict[str, Any] = {"id": score.id, "first_rank": score.first_rank, "rr": score.rr}
            entry["ndcg@10"] = score.ndcg10
            if score.tokens_measured:
                entry["tokens_to_hit"] = score.tokens_to_hit
            if categories and categories.get(score.id):
                entry["category"] = categories[score.id]
            per_query.append(entry)
        row["per_query"] = per_query
        return row


def run_rungs(
    target: Target,
    built: Built,
    corpus: str,
    queries: Sequence[Query],
    level: str,
    k: int,
    ladder: Sequence[str],
    progress: Progress,
) -> list[Rung]:
    """Each rung of ``ladder`` on the built index, in order."""
    rungs: list[Rung] = []
    for name in ladder:
        progress(f"rung {name}")
        if name == "baseline":
            rungs.append(Rung(evaluate(name, baseline_searcher(built.index), queries, level, k)))
            continue
        workspace = target.workspace({} if name == "current" else RUNGS[name])
        workspace.dense.patient = built.dense["state"] == "ready"  # waited for once; never when it did not answer
        workspace.index(corpus).refresh()
        shown = output_searcher if name in OUTPUT_RUNGS else ranking_searcher
        result = evaluate(name, shown(workspace, corpus), queries, level, k)
        rungs.append(Rung(result, workspace.search(ranking_request(corpus, queries[0].text, 1)).result.mode))
        workspace.close()
    return rungs


def measured_configuration(
    built: Built, corpus: str, queries: Sequence[Query], level: str, k: int, rows: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The figures of the configuration the environment selects (what the levers ran on): its rung when the
    ladder ran it, else measured now."""
    measured = next((dict(r) for r in rows if r["rung"] in (DEFAULT_RUNG, "current")), {})
    if not measured:
        shown = output_searcher(built.workspace, corpus)
        measured = {"rung": "current", **evaluate("current", shown, queries, level, k).summary()}
    measured["mode"] = built.workspace.search(ranking_request(corpus, queries[0].text, 1)).result.mode
    return measured


__all__ = [
    "DEFAULT_RUNG",
    "DENSE_ONLY",
    "DENSE_STAGES",
    "DENSE_SWITCH",
    "OUTPUT_RUNGS",
    "RUNGS",
    "Built",
    "Rung",
    "Target",
    "build",
    "check_k",
    "ladder",
    "measured_configuration",
    "parse_rungs",
    "plan",
    "run_rungs",
]
