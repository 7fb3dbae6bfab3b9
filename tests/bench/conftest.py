"""Running rag-bench the way a user does, for the suite's tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import run_main


def rag_bench(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """``rag-bench ARGS`` (its ``main``, in this process): no AGENTTY_* variable but ``env`` (lexical unless it
    says otherwise)."""
    return run_main("agentty_rag.bench.cli", None, args, env, cwd=cwd)
