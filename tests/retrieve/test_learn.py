"""The learned prior: feedback rows lift the files the agent opened, for similar queries only, a capped
amount that decays with the rows' age; skills and memory are never lifted."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.render import render_explanation
from agentty_rag.retrieve.parsed import parse_query
from agentty_rag.retrieve.pipeline import Filters, Plan, Retrieved, search
from agentty_rag.retrieve.ranking import Stage
from agentty_rag.retrieve.stages import build_stages
from agentty_rag.retrieve.stages.fuse import Fuse
from agentty_rag.retrieve.stages.learn import DAY_S, LIFT, Learn, decay, priors, similarity
from agentty_rag.retrieve.stages.rerank import Rerank
from agentty_rag.retrieve.stages.stitch import Stitch
from agentty_rag.state import feedback
from agentty_rag.state.feedback import Row
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write

NOW = 1_800_000_000.0
QUERY = "load the settings file"
FILES = {
    "src/yaml_settings.py": 'def load_yaml(path):\n    """Load the settings file as YAML."""\n    return yaml(path)\n',
    "src/toml_settings.py": 'def load_toml(path):\n    """Load the settings file as TOML."""\n    return toml(path)\n',
    "src/cache.py": 'def settings_cache():\n    """A cache of loaded values."""\n    return {}\n',
}


def terms(text: str) -> frozenset[str]:
    return frozenset(text.lower().split())


def test_a_row_counts_fully_today_and_half_after_one_half_life() -> None:
    assert decay(0, 14.0) == 1.0
    assert decay(14, 14.0) == 0.5
    assert decay(28, 14.0) == 0.25
    assert decay(-3, 14.0) == 1.0  # a clock set back never makes a row count more


def test_the_prior_sums_similar_rows_and_is_capped_at_one() -> None:
    rows = [Row(NOW, NOW, "code", "a.py", 1, "load the settings file") for _ in range(50)]
    rows.append(Row(NOW, NOW, "code", "b.py", 2, "draw a chart"))
    prior = priors(terms(QUERY), rows, terms, NOW, 14.0)
    assert prior == {"a.py": 1.0}  # fifty reads never count for more than one; an unrelated query for nothing
    old = [Row(NOW - 28 * DAY_S, NOW, "code", "a.py", 1, QUERY)]
    assert priors(terms(QUERY), old, terms, NOW, 14.0) == {"a.py": 0.25}
    forgotten = [Row(NOW - 5 * 14 * DAY_S, NOW, "code", "a.py", 1, QUERY)] * 40
    assert priors(terms(QUERY), forgotten, terms, NOW, 14.0) == {}  # five half-lives: gone, however many
    assert similarity(terms("load settings"), terms("load the settings file")) == pytest.approx(2 / 8**0.5)


def _ranked(root: Path, stage: Learn | None, query: str = QUERY) -> Retrieved:
    workspace = Workspace(root, load_settings(LEXICAL))
    index = workspace.index("code")
    index.refresh()
    stages: tuple[Stage, ...] = (Fuse(), Rerank(files=True), *([stage] if stage else []), Stitch())
    try:
        return search(index, parse_query(query, index.tokenizer), 5, Filters(), Plan(stages))
    finally:
        workspace.close()


def _opened(root: Path, ref: str, query: str, count: int = 1, age_days: int = 0) -> None:
    at = NOW - age_days * DAY_S
    feedback.append_rows(root / ".agentty", [Row(at, at, "code", ref, 2, query)] * count)


def _refs(retrieved: Retrieved) -> list[str]:
    return [hit.chunk.ref for hit in retrieved.hits]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path, FILES)
    return tmp_path


def test_a_file_opened_after_a_similar_query_rises_above_a_close_rival(project: Path) -> None:
    before = _ranked(project, Learn(clock=lambda: NOW))
    first, second = _refs(before)[:2]
    assert [stage for stage, _ in before.funnel.stages][-3:] == ["learned", "dedup/stitch", "returned"]
    _opened(project, second, "load a settings file")
    after = _ranked(project, Learn(clock=lambda: NOW))
    assert _refs(after)[:2] == [second, first]
    assert dict(after.funnel.stages)["learned"] == 1
    explained = render_explanation(after.explanations)
    assert "learned +" in explained.splitlines()[2]  # the lifted passage, now first, says why
    assert _refs(_ranked(project, Learn(clock=lambda: NOW))) == _refs(after)  # the same rows, the same ranking


def test_a_dissimilar_query_or_long_decayed_rows_leave_the_ranking_alone(project: Path) -> None:
    plain = _refs(_ranked(project, None))
    _opened(project, plain[1], "draw a bar chart of the results", count=20)
    assert _refs(_ranked(project, Learn(clock=lambda: NOW))) == plain
    _opened(project, plain[1], QUERY, count=20, age_days=5 * 14)  # five half-lives ago
    assert _refs(_ranked(project, Learn(clock=lambda: NOW))) == plain


def test_the_lift_is_capped_at_a_share_of_the_score_range(project: Path) -> None:
    plain = _ranked(project, None)
    last = plain.hits[-1].chunk.ref
    _opened(project, last, QUERY, count=200)
    after = _ranked(project, Learn(clock=lambda: NOW))
    scores = [hit.score for hit in plain.hits]
    span = max(scores) - min(scores)
    old = {hit.chunk.ref: hit.score for hit in plain.hits}
    new = {hit.chunk.ref: hit.score for hit in after.hits}
    assert new[last] - old[last] == pytest.approx(LIFT * span)
    assert all(new[ref] == old[ref] for ref in old if ref != last)


def test_learning_is_off_by_default_and_its_switch_adds_the_stage_after_the_reranker() -> None:
    assert not any(isinstance(stage, Learn) for stage in build_stages(load_settings({})))
    stages = build_stages(load_settings({"AGENTTY_RAG_LEARN": "1", "AGENTTY_RAG_LEARN_HALF_LIFE_DAYS": "7"}))
    assert [type(stage).__name__ for stage in stages] == ["Fuse", "Rerank", "Learn", "Stitch"]
    assert isinstance(stages[2], Learn) and stages[2].half_life_days == 7.0


def test_skills_and_memory_are_never_lifted(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "docs/guide.md": "# Deploy\n\nDeploy the service with the release script.\n",
            ".agentty/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: deploy the service\n---\nDeploy.\n",
        },
    )
    feedback.append_rows(tmp_path / ".agentty", [Row(NOW, NOW, "docs", "deploy", 1, "deploy the service")] * 9)
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    index = workspace.index("docs")
    index.refresh()
    stages = (Fuse(), Rerank(), Learn(clock=lambda: NOW), Stitch())
    retrieved = search(index, parse_query("deploy the service", index.tokenizer), 5, Filters(), Plan(stages))
    workspace.close()
    assert any(hit.chunk.source == "skill" and hit.chunk.ref == "deploy" for hit in retrieved.hits)
    assert dict(retrieved.funnel.stages)["learned"] == 0
