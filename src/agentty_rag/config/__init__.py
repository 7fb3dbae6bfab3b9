"""Settings: the one place that reads the environment.

Every ``AGENTTY_*`` variable is declared once, on a field of its stage's settings class in ``stages.py``, with
its type, default, bounds and a one-line description; ``VARIABLES`` is derived from those fields, and so is
the README's table (``table.py``). ``load_settings(environ)`` parses them into a frozen ``Settings``; a
malformed or out-of-range value never raises: it becomes a warning that names the variable, the bad value and
the value used instead.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentty_rag.config.stages import (
    GROUPS,
    BackendSettings,
    BudgetSettings,
    ChunkingSettings,
    DenseSettings,
    FreshnessSettings,
    GenerationSettings,
    GraphSettings,
    IndexSettings,
    McpSettings,
    ProactiveSettings,
    ProcessSettings,
    RankingSettings,
    SourcesSettings,
)
from agentty_rag.config.variables import Variable, declared, parse_variable


@dataclass(frozen=True)
class Settings(
    ProcessSettings,
    ProactiveSettings,
    BudgetSettings,
    GraphSettings,
    GenerationSettings,
    RankingSettings,
    DenseSettings,
    FreshnessSettings,
    BackendSettings,
    IndexSettings,
    ChunkingSettings,
    McpSettings,
    SourcesSettings,
):
    """Every tunable of the package, parsed once. Build it with ``load_settings``.

    Each stage's group is a base (listed last stage first, so that the fields come in pipeline order): a
    stage can be given the whole ``Settings`` where it asks for its group.
    """

    home: Path | None = None
    # The user's state folder (``$XDG_STATE_HOME``, else ``~/.local/state``; None without a home folder): where
    # this machine's index key is kept (``state.machine_key``).
    state_home: Path | None = None
    # Where Claude Code and Codex keep the user's settings (their own variables; None: under the home folder):
    # read for the approvals of a project's MCP servers.
    claude_config_dir: Path | None = None
    codex_home: Path | None = None
    # The user asked for the dense leg (any of ``DENSE_CONFIGURED_BY`` set): when it is unavailable, results
    # say why; otherwise its absence is not news.
    dense_configured: bool = False
    # The OpenAI-compatible embedding server's API key: the value of the variable ``AGENTTY_OPENAI_API_KEY_ENV``
    # names (None: unset or empty). Never shown (``repr`` leaves it out).
    openai_api_key: str | None = field(default=None, repr=False)
    # The user set a leg's weight (any of ``WEIGHTS_SET_BY``): the weights decide, not the leg check.
    weights_configured: bool = False
    warnings: tuple[str, ...] = field(default=(), compare=False)


VARIABLES: tuple[Variable, ...] = tuple(v for group in GROUPS for v in declared(group))
DENSE_CONFIGURED_BY = (
    "AGENTTY_RAG_DENSE",
    "AGENTTY_EMBED_BACKEND",
    "AGENTTY_OLLAMA_HOST",
    "AGENTTY_EMBED_MODEL",
    "AGENTTY_OPENAI_BASE_URL",
)
WEIGHTS_SET_BY = ("AGENTTY_RAG_BM25_WEIGHT", "AGENTTY_RAG_DENSE_WEIGHT")
_BY_NAME = {v.name: v for v in VARIABLES}


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Build ``Settings`` from an environment mapping (``os.environ`` when None).

    Args:
        environ: the variables to read; tests pass a plain dict.

    Returns:
        The frozen settings; ``settings.warnings`` lists every value that was malformed or clamped.
    """
    env = os.environ if environ is None else environ
    warnings: list[str] = []
    values: dict[str, object] = {}
    for var in VARIABLES:
        raw = env.get(var.name)
        if raw is None:
            continue
        values[var.attr] = parse_variable(var, raw, warnings)
    home_raw = env.get("HOME") or env.get("USERPROFILE")
    home = Path(home_raw) if home_raw else None
    values["home"] = home
    values["state_home"] = _state_home(env, home)
    for attr, name in (("claude_config_dir", "CLAUDE_CONFIG_DIR"), ("codex_home", "CODEX_HOME")):
        raw = env.get(name, "").strip()
        values[attr] = Path(raw).expanduser() if raw else None
    values["dense_configured"] = any(name in env for name in DENSE_CONFIGURED_BY)
    key_env = str(values.get("openai_api_key_env", variable("AGENTTY_OPENAI_API_KEY_ENV").default))
    values["openai_api_key"] = env.get(key_env, "").strip() or None
    values["weights_configured"] = any(name in env for name in WEIGHTS_SET_BY)
    unknown = sorted(k for k in env if k.startswith("AGENTTY_") and k not in _BY_NAME and k != key_env)
    for name in unknown:
        warnings.append(f"{name} is not a known agentty-rag variable; ignored (see the README's table)")
    settings = Settings(**values, warnings=tuple(warnings))  # type: ignore[arg-type]
    if settings.chunk_overlap >= settings.chunk_chars // 2:
        overlap = settings.chunk_chars // 4
        warnings.append(
            f"AGENTTY_RAG_CHUNK_OVERLAP={settings.chunk_overlap} must be under half of "
            f"AGENTTY_RAG_CHUNK_CHARS={settings.chunk_chars}; using {overlap}"
        )
        settings = Settings(**{**values, "chunk_overlap": overlap}, warnings=tuple(warnings))  # type: ignore[arg-type]
    return settings


def _state_home(env: Mapping[str, str], home: Path | None) -> Path | None:
    """``$XDG_STATE_HOME`` when it is an absolute path (the XDG rule: a relative one is ignored), else
    ``~/.local/state``."""
    raw = env.get("XDG_STATE_HOME", "").strip()
    if raw and Path(raw).is_absolute():
        return Path(raw)
    return home / ".local" / "state" if home is not None else None


def agentty_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``AGENTTY_*`` variables (and ``HOME``, ``XDG_STATE_HOME``) of the environment, for tools that derive
    settings variants."""
    env = os.environ if environ is None else environ
    kept = ("HOME", "USERPROFILE", "XDG_STATE_HOME")
    return {k: v for k, v in env.items() if k.startswith("AGENTTY_") or k in kept}


def environment_without_agentty(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment minus every ``AGENTTY_*`` variable: the base for a child process given its own."""
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if not k.startswith("AGENTTY_")}


def effective_values(settings: Settings) -> dict[str, str]:
    """Every variable's effective value, as text (for reports that must say which configuration ran)."""
    out: dict[str, str] = {}
    for var in VARIABLES:
        value = getattr(settings, var.attr)
        if value is None:
            out[var.name] = ""
        elif var.secret:
            out[var.name] = "(set)"
        elif isinstance(value, bool):
            out[var.name] = "1" if value else "0"
        elif isinstance(value, tuple):
            out[var.name] = (os.pathsep if var.kind == "paths" else ",").join(str(v) for v in value)
        else:
            out[var.name] = str(value)
    return out


def variable(name: str) -> Variable:
    """The declaration of one variable (KeyError for an unknown name)."""
    return _BY_NAME[name]


__all__ = [
    "DENSE_CONFIGURED_BY",
    "GROUPS",
    "VARIABLES",
    "WEIGHTS_SET_BY",
    "BudgetSettings",
    "ChunkingSettings",
    "DenseSettings",
    "FreshnessSettings",
    "GenerationSettings",
    "GraphSettings",
    "IndexSettings",
    "McpSettings",
    "ProactiveSettings",
    "ProcessSettings",
    "RankingSettings",
    "Settings",
    "SourcesSettings",
    "Variable",
    "agentty_environment",
    "effective_values",
    "environment_without_agentty",
    "load_settings",
    "parse_variable",
    "variable",
]
