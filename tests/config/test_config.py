from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from agentty_rag.budget import BudgetConfig
from agentty_rag.chunking import ChunkingConfig
from agentty_rag.config import GROUPS, VARIABLES, Settings, effective_values, load_settings, variable
from agentty_rag.retrieve.stages.fuse import Fuse
from agentty_rag.retrieve.stages.mmr import Diversify
from agentty_rag.retrieve.stages.stitch import Stitch
from agentty_rag.workspace.service import Workspace

CONFIGURATION = Path(__file__).resolve().parent.parent.parent / "docs" / "configuration.md"


def test_defaults_when_nothing_is_set() -> None:
    settings = load_settings({})
    assert settings == Settings(home=None)
    assert settings.warnings == ()
    assert settings.output_bytes == 12288
    assert settings.code_max_files == 4000
    assert settings.code_max_bytes == 512 * 1024
    assert settings.docs_dir is None and settings.skills_enabled and settings.memory_enabled


@pytest.mark.parametrize("var", [v for v in VARIABLES if v.kind in ("int", "float")], ids=lambda v: v.name)
def test_numbers_are_clamped_with_a_warning(var) -> None:
    assert var.low is not None and var.high is not None
    # The overlap is also bound by half the chunk size: give it the largest chunk size.
    extra = {"AGENTTY_RAG_CHUNK_CHARS": "8000"} if var.name == "AGENTTY_RAG_CHUNK_OVERLAP" else {}
    low = load_settings({var.name: str(var.low - 1), **extra})
    high = load_settings({var.name: str(var.high * 2 + 1), **extra})
    assert getattr(low, var.attr) == var.low
    assert getattr(high, var.attr) == var.high
    assert any(var.name in w and "minimum" in w for w in low.warnings)
    assert any(var.name in w and "maximum" in w for w in high.warnings)


@pytest.mark.parametrize("var", [v for v in VARIABLES if v.kind not in ("path", "paths", "str")], ids=lambda v: v.name)
def test_malformed_value_warns_naming_the_variable_and_uses_the_default(var) -> None:
    settings = load_settings({var.name: "abc!"})
    assert getattr(settings, var.attr) == var.default
    assert len(settings.warnings) == 1
    warning = settings.warnings[0]
    assert var.name in warning and "'abc!'" in warning and "default" in warning


def test_output_bytes_example_from_the_issue() -> None:
    settings = load_settings({"AGENTTY_RAG_OUTPUT_BYTES": "abc"})
    assert settings.output_bytes == 12288
    assert settings.warnings == ("AGENTTY_RAG_OUTPUT_BYTES='abc' is not an integer; using the default (12288)",)
    assert load_settings({"AGENTTY_RAG_OUTPUT_BYTES": "1000"}).output_bytes == 2048
    assert load_settings({"AGENTTY_RAG_OUTPUT_BYTES": "999999"}).output_bytes == 65536
    assert load_settings({"AGENTTY_RAG_OUTPUT_BYTES": " 4096 "}).output_bytes == 4096


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True),
        ("true", True),
        ("YES", True),
        ("on", True),
        ("0", False),
        ("false", False),
        ("No", False),
        ("off", False),
    ],
)
def test_booleans_accept_common_spellings(raw: str, expected: bool) -> None:
    assert load_settings({"AGENTTY_RAG_SKILLS": raw}).skills_enabled is expected


def test_paths_and_path_lists(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    settings = load_settings({"AGENTTY_DOCS_DIR": "manual", "AGENTTY_SKILLS_DIRS": f"{first}:{second}:"})
    assert settings.docs_dir == Path("manual")
    assert settings.skills_dirs == (first, second)


def test_unknown_agentty_variable_is_reported_not_fatal() -> None:
    settings = load_settings({"AGENTTY_RAG_OUTPUT_BYTE": "4096"})
    assert settings.output_bytes == 12288
    assert any("AGENTTY_RAG_OUTPUT_BYTE is not a known" in w for w in settings.warnings)


def test_overlap_must_stay_under_half_the_chunk_size() -> None:
    settings = load_settings({"AGENTTY_RAG_CHUNK_CHARS": "400", "AGENTTY_RAG_CHUNK_OVERLAP": "300"})
    assert settings.chunk_overlap == 100
    assert any("AGENTTY_RAG_CHUNK_OVERLAP" in w for w in settings.warnings)


def test_nan_is_malformed() -> None:
    settings = load_settings({"AGENTTY_RAG_REBUILD_FRACTION": "nan"})
    assert settings.rebuild_fraction == variable("AGENTTY_RAG_REBUILD_FRACTION").default
    assert settings.warnings


def test_every_variable_is_documented_on_the_configuration_page() -> None:
    page = CONFIGURATION.read_text(encoding="utf-8")
    missing = [v.name for v in VARIABLES if f"| `{v.name}` |" not in page]
    assert missing == []


def test_each_setting_is_declared_once_on_its_stage() -> None:
    names = [v.name for v in VARIABLES]
    attrs = [v.attr for v in VARIABLES]
    assert len(set(names)) == len(names) and len(set(attrs)) == len(attrs)
    staged = [f.name for group in GROUPS for f in fields(group)]
    assert staged == attrs  # every field of a stage is a variable, in the order the tables show
    others = {
        "home",
        "state_home",
        "claude_config_dir",
        "codex_home",
        "dense_configured",
        "openai_api_key",
        "weights_configured",
        "warnings",
    }
    assert {f.name for f in fields(Settings)} == {*attrs, *others}


def test_the_state_folder_is_xdg_state_home_when_absolute_else_under_the_home_folder() -> None:
    assert load_settings({"XDG_STATE_HOME": "/srv/state", "HOME": "/home/u"}).state_home == Path("/srv/state")
    assert load_settings({"XDG_STATE_HOME": "rel", "HOME": "/home/u"}).state_home == Path("/home/u/.local/state")
    assert load_settings({"HOME": "/home/u"}).state_home == Path("/home/u/.local/state")
    assert load_settings({}).state_home is None


def test_the_clients_own_folders_are_read_from_their_variables() -> None:
    settings = load_settings({"CLAUDE_CONFIG_DIR": "/srv/claude", "CODEX_HOME": "/srv/codex", "HOME": "/home/u"})
    assert (settings.claude_config_dir, settings.codex_home) == (Path("/srv/claude"), Path("/srv/codex"))
    assert load_settings({"CLAUDE_CONFIG_DIR": " "}).claude_config_dir is None
    approved = load_settings({"AGENTTY_RAG_MCP_APPROVED": " wiki, tracker ,wiki"})
    assert approved.mcp_approved == ("wiki", "tracker") and approved.warnings == ()


def test_each_stage_takes_its_values_from_the_settings(tmp_path: Path) -> None:
    changed = {
        "AGENTTY_RAG_CHUNK_CHARS": "3000",
        "AGENTTY_RAG_CHUNK_OVERLAP": "100",
        "AGENTTY_RAG_CODE_CHUNK_CHARS": "900",
        "AGENTTY_RAG_OUTPUT_BYTES": "4096",
        "AGENTTY_RAG_RELEVANCE_FLOOR": "0.1",
        "AGENTTY_RAG_BUDGET_GAMMA": "2",
        "AGENTTY_RAG_CONF_BUDGET_FLOOR": "0.9",
        "AGENTTY_RAG_EXTRACTIVE": "0",
        "AGENTTY_RAG_BM25_WEIGHT": "2",
        "AGENTTY_RAG_DENSE_WEIGHT": "3",
        "AGENTTY_RAG_RERANK": "0",
        "AGENTTY_RAG_FILES": "0",
        "AGENTTY_RAG_MMR": "1",
        "AGENTTY_RAG_MMR_LAMBDA": "0.5",
        "AGENTTY_RAG_STITCH": "0",
    }
    settings = load_settings(changed)
    assert settings.warnings == ()
    assert ChunkingConfig.from_settings(settings) == ChunkingConfig(3000, 100, 900)
    budget = BudgetConfig.from_settings(settings)
    assert (budget.total_bytes, budget.relevance_floor, budget.gamma, budget.confidence_floor, budget.extractive) == (
        4096,
        0.1,
        2.0,
        0.9,
        False,
    )
    plan = Workspace(tmp_path, settings).plan()
    assert plan.stages == (Fuse(bm25_weight=2.0, dense_weight=3.0), Diversify(lam=0.5), Stitch(stitching=False))
    assert plan.dense


def test_the_embedding_servers_key_comes_from_the_variable_named_and_is_never_shown() -> None:
    default = load_settings({"OPENAI_API_KEY": " sk-default "})
    named = load_settings({"AGENTTY_OPENAI_API_KEY_ENV": "AGENTTY_TEAM_KEY", "AGENTTY_TEAM_KEY": "sk-team"})
    assert default.openai_api_key == "sk-default" and load_settings({"OPENAI_API_KEY": ""}).openai_api_key is None
    assert named.openai_api_key == "sk-team" and named.warnings == ()  # the named variable is not an unknown one
    assert "sk-team" not in repr(named) and "sk-team" not in str(effective_values(named))
