"""The ranking stages: built from the settings in pipeline order, run in that order by the pipeline, and a
stage of one's own runs like the others."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from agentty_rag.config import load_settings, variable
from agentty_rag.retrieve.parsed import parse_query
from agentty_rag.retrieve.pipeline import Filters, Plan, search
from agentty_rag.retrieve.ranking import Ranking
from agentty_rag.retrieve.stages import KINDS, build_stages, rungs
from agentty_rag.retrieve.stages.fuse import Fuse
from agentty_rag.retrieve.stages.mmr import Diversify
from agentty_rag.retrieve.stages.rerank import Rerank
from agentty_rag.retrieve.stages.stitch import Stitch
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write


def test_the_default_settings_run_fusion_rerank_with_files_and_the_stitching_cut() -> None:
    assert build_stages(load_settings({})) == (Fuse(1.0, 1.0), Rerank(files=True), Stitch(True))


def test_each_switch_takes_its_stage_out_or_changes_it() -> None:
    off = load_settings({"AGENTTY_RAG_RERANK": "0", "AGENTTY_RAG_STITCH": "0", "AGENTTY_RAG_BM25_WEIGHT": "2"})
    assert build_stages(off) == (Fuse(2.0, 1.0), Stitch(False))
    on = load_settings({"AGENTTY_RAG_MMR": "1", "AGENTTY_RAG_MMR_LAMBDA": "0.5", "AGENTTY_RAG_FILES": "0"})
    assert build_stages(on) == (Fuse(1.0, 1.0), Rerank(files=False), Diversify(0.5), Stitch(True))
    assert Plan.from_settings(load_settings({"AGENTTY_RAG_DENSE_WEIGHT": "0"})).dense is False


def test_only_the_file_order_asks_for_file_scores() -> None:
    assert [stage.scores_files for stage in build_stages(load_settings({}))] == [False, True, False]
    assert not Rerank(files=False).scores_files


def test_every_rung_switch_is_a_boolean_setting() -> None:
    assert [r.name for r in rungs()] == [
        *("+prf", "+dense", "+expand", "+hyde", "+graph", "+rerank"),
        *("+files", "+learn", "+mmr", "+correct", "+stitch"),
    ]
    assert all(variable(rung.switch).kind == "bool" for rung in rungs())
    # with its switches off, expansion, HyDE, the graph, rerank and MMR leave the list; fusion and the cut
    # always run
    built = [kind.build(load_settings({r.switch: "0" for r in kind.rungs})) for kind in KINDS]
    assert built == [None, Fuse(1.0, 1.0), None, None, None, None, None, None, None, Stitch(False)]


@dataclass(frozen=True)
class Reverse:
    """A stage of a test's own: the pool in reverse order."""

    @property
    def scores_files(self) -> bool:
        return False

    def run(self, ranking: Ranking) -> Ranking:
        return replace(ranking, hits=ranking.hits[::-1], slots=ranking.slots[::-1])


def test_the_pipeline_runs_the_stages_it_is_given_in_order(tmp_path: Path) -> None:
    write(tmp_path, {f"docs/n{i}.md": f"# Note {i}\n\nThe cache note number {i}" + " cache" * i for i in range(5)})
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    index = workspace.index("docs")
    index.refresh()
    plain = search(index, parse_query("cache", index.tokenizer), 5, Filters(), Plan((Fuse(), Stitch(False))))
    reverse = search(
        index, parse_query("cache", index.tokenizer), 5, Filters(), Plan((Fuse(), Reverse(), Stitch(False)))
    )
    assert [h.chunk.ref for h in reverse.hits] == [h.chunk.ref for h in plain.hits][::-1]
    assert [stage for stage, _ in reverse.funnel.stages] == ["lexical", "fused", "dedup", "returned"]
    workspace.close()
