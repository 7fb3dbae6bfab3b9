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


_EVIDENCE_SCRIPT = """
from types import SimpleNamespace
from agentty_rag.retrieve.features import QueryProfile
from agentty_rag.workspace.outcome import query_evidence
# weights whose float sum depends on the order they are added in: (0.1 + 0.2) + 0.3 != 0.1 + (0.2 + 0.3)
idf = {"alpha": 0.1, "beta": 0.2, "gamma": 0.3, "delta": 0.7, "epsilon": 1e-17, "zeta": 1e16}
profile = QueryProfile(text=" ".join(idf), terms=tuple(idf), idf=idf)
words = SimpleNamespace(tokenize=lambda text: text.split())
evidence = query_evidence(words, profile)  # type: ignore[arg-type]
print(repr([evidence(text) for text in ("alpha beta gamma", "gamma delta alpha beta", "zeta epsilon alpha")]))
"""


def test_the_sentence_evidence_of_extractive_compression_does_not_depend_on_the_hash_seed() -> None:
    outputs = set()
    for seed in ("1", "2", "3", "4", "5", "31337"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", _EVIDENCE_SCRIPT], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1, outputs
