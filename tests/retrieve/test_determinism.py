"""Same corpus, query and settings: the same ranking, whatever the hash seed of the process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES


def test_results_do_not_depend_on_dict_or_set_iteration_order(tmp_path: Path) -> None:
    root = tmp_path / "code"
    shutil.copytree(FIXTURES / "code", root)
    outputs = []
    for seed in ("1", "2", "31337"):
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")} | {"AGENTTY_RAG_DENSE": "0"}
        env["PYTHONHASHSEED"] = seed
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "agentty_rag",
                "--root",
                str(root),
                "search-code",
                "retry with exponential backoff",
                "-k",
                "8",
                "--json",
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.append(result.stdout)
        shutil.rmtree(root / ".agentty")  # each run builds its own index under its own seed
    assert outputs[0] == outputs[1] == outputs[2]
