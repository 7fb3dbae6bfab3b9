"""Running rag-bench the way a user does, for the suite's tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import LEXICAL


def rag_bench(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """``rag-bench ARGS`` in a new process: no AGENTTY_* variable but ``env`` (lexical unless it says otherwise)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")}
    environment.update({**LEXICAL, **env})
    command = [sys.executable, "-m", "agentty_rag.bench.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, env=environment, cwd=cwd, timeout=300)
