"""The settings of the server's watcher: whether it watches the workspace, and how often it reconciles.

Declared like every other stage (see ``stages.py``); a module of its own only to keep ``stages.py`` short.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.config.variables import flag, integer, text


@dataclass(frozen=True)
class FreshnessSettings:
    """Freshness: how the server learns that files changed (the command line scans before every search)."""

    watch: bool = flag(
        "AGENTTY_RAG_WATCH",
        True,
        "`serve` watches the workspace and re-reads only the files that changed; a search then scans "
        "nothing. Off, or where the watcher cannot start (no file notifications, too many folders to watch), "
        "every search scans the tree first, and `status` says so.",
    )
    reconcile_s: int = integer(
        "AGENTTY_RAG_RECONCILE_S",
        30,
        "While `serve` watches, seconds between background scans of the whole tree, for changes a file "
        "system never reported (network and container mounts).",
        low=1,
        high=3600,
    )
    job_faults: str = text(
        "AGENTTY_RAG_JOB_FAULTS",
        "",
        "For tests of the server's restart path: `KEY=N,…` makes the background job KEY (`build:code`, "
        "`embed:docs`, `watch`, `warm-up`…) raise at its start N times; `status` then shows it failed and run "
        "again. Empty: no fault.",
    )


__all__ = ["FreshnessSettings"]
