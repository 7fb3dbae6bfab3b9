"""A request never loses the chunk rows it is using, however many it asks for: the rows cache holds the 8,192
most recently used, and a pool around that size (ties widen the pool to every chunk) is answered whole."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentty_rag.config import load_settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.storage.views import ROW_CACHE
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL

FILES = ROW_CACHE + 1808  # 10,000 one-chunk files: more chunks than the cache holds


@pytest.fixture(scope="module")
def tied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """10,000 files that tie on every word but one: ``def generated_i(): return 'marmot{i} gizzard'``."""
    root = tmp_path_factory.mktemp("tied")
    for i in range(FILES):
        (root / f"g{i}.py").write_text(f"def generated_{i}(): return 'marmot{i} gizzard'\n", encoding="utf-8")
    workspace = Workspace(root, load_settings({**LEXICAL, "AGENTTY_RAG_CODE_MAX_FILES": "20000"}))
    workspace.index("code").refresh()
    yield workspace
    workspace.close()


def test_a_question_that_ties_every_chunk_finds_its_one_answer(tied: Workspace) -> None:
    outcome = tied.search_code("marmot7", k=1)
    assert outcome.structured["results"][0]["path"] == "g7.py"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.integers(ROW_CACHE - 40, ROW_CACHE + 40),
    st.integers(0, ROW_CACHE + 40),
    st.integers(0, 2**32 - 1),
)
def test_every_row_asked_for_is_answered_around_the_cache_size(
    tied: Workspace, pool: int, warm: int, seed: int
) -> None:
    index: CorpusIndex = tied.index("code")
    slots = list(range(index.n_chunks))
    shuffle = random.Random(seed)
    index.chunks(shuffle.sample(slots, min(warm, len(slots))))  # some of the pool is cached, some not
    asked = shuffle.sample(slots, pool)
    rows = index.chunks(asked)
    assert list(rows) == asked
    assert all(rows[slot].ref == f"g{_number(rows[slot].text)}.py" for slot in asked[:: max(1, pool // 50)])


def _number(text: str) -> int:
    return int(text.split("generated_", 1)[1].split("(", 1)[0])
