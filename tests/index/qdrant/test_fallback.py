"""A served collection that stops answering: every question gets the local postings' answer (the SQLite
backend's), the next result is told once, the server rests for its cool-down and is then asked again; writes
it missed are caught up by the first question it answers."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentty_rag.config import load_settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.lexical.protocol import LexicalQuery
from agentty_rag.index.lexical.sqlite import SqliteLexical
from agentty_rag.index.qdrant.collection import ClientCollection, Reach, failure_reason
from agentty_rag.index.qdrant.fallback import ServedLexical
from agentty_rag.index.qdrant.lexical import QdrantLexical
from agentty_rag.index.storage.notes import Notes
from agentty_rag.index.storage.store import Store
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, OPEN_WORKSPACES

qdrant_client = pytest.importorskip("qdrant_client")
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse  # noqa: E402

NOTE = "qdrant unreachable (connection refused at q:6333): answered from the local index"


class Switch:
    """A qdrant-client in local mode that can be made to refuse every request, counting those that reached it."""

    def __init__(self) -> None:
        self.client = qdrant_client.QdrantClient(":memory:")
        self.down = False
        self.asked = 0

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.client, name)

        def request(*args: Any, **kwargs: Any) -> Any:
            self.asked += 1
            if self.down:
                raise ResponseHandlingException(ConnectionRefusedError("[Errno 111] Connection refused"))
            return real(*args, **kwargs)

        return request


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def index(tmp_path: Path) -> CorpusIndex:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "code", root, ignore=shutil.ignore_patterns(".agentty"))
    workspace = Workspace(root, load_settings({**LEXICAL, "HOME": str(tmp_path)}))
    OPEN_WORKSPACES.append(workspace)
    built = workspace.index("code")
    built.refresh()
    return built


@pytest.fixture
def store(index: CorpusIndex) -> Iterator[Store]:
    opened = Store(index.config.db_path)
    yield opened
    opened.close()


def _served(index: CorpusIndex, store: Store, switch: Switch, clock: Clock) -> tuple[ServedLexical, Notes]:
    reach = Reach(30.0, clock)
    collection = ClientCollection(switch, "agentty_code_test", reach, "http://q:6333", 5.0)  # type: ignore[arg-type]
    notes = Notes()
    remote = QdrantLexical(index.config, lambda: store, collection)
    return ServedLexical(index.config, lambda: store, reach, notes, remote), notes


def _query(index: CorpusIndex, store: Store, text: str, files: bool = False) -> LexicalQuery:
    sqlite = SqliteLexical(index.config.field_names, lambda: store)
    terms = dict.fromkeys(sqlite.term_ids(index.tokenize(text)).values(), 1.0)
    s, weights = index.config.scoring, {f.name: f.weight for f in index.config.fields}
    if files:
        return LexicalQuery(terms, {**weights, **s.file_weights}, s.file_k1, s.file_b)
    return LexicalQuery(terms, weights, s.k1, s.b)


def test_a_server_that_stops_answering_leaves_the_answer_to_the_local_postings_until_its_cool_down_ends(
    index: CorpusIndex, store: Store
) -> None:
    switch, clock = Switch(), Clock()
    served, notes = _served(index, store, switch, clock)
    sqlite = SqliteLexical(index.config.field_names, lambda: store)
    meta = store.meta()
    sqlite.load(store, meta)
    served.load(store, meta)
    assert served.reach.state == "answered" and served.describe() == "qdrant — answered"
    query = _query(index, store, "refresh an expired access token")
    want = sqlite.score(query)
    np.testing.assert_allclose(served.score(query), want, atol=1e-6 * want.max())

    switch.down = True
    np.testing.assert_array_equal(served.score(query), want)  # the local postings: SQLite's very answer
    assert notes.take() == (NOTE,)
    assert served.describe() == (
        "qdrant — unreachable (connection refused at q:6333); searches answer from the local index"
    )
    asked = switch.asked
    np.testing.assert_array_equal(served.score(query), want)
    files = _query(index, store, "refresh an expired access token", files=True)
    groups = index.file_groups()
    np.testing.assert_array_equal(served.score_files(files, groups), sqlite.score_files(files, groups))
    assert switch.asked == asked  # resting: nothing was sent
    assert notes.take() == (NOTE,)

    clock.now += 31
    switch.down = False
    np.testing.assert_allclose(served.score(query), want, atol=1e-6 * want.max())
    assert switch.asked > asked and served.reach.state == "answered" and notes.take() == ()


def test_a_collection_that_missed_its_writes_is_written_anew_by_the_first_question_it_answers(
    index: CorpusIndex, store: Store
) -> None:
    switch, clock = Switch(), Clock()
    served, notes = _served(index, store, switch, clock)
    switch.down = True
    served.load(store, store.meta())  # the collection is never written
    query = _query(index, store, "token")
    sqlite = SqliteLexical(index.config.field_names, lambda: store)
    sqlite.load(store, store.meta())
    want = sqlite.score(query)
    np.testing.assert_array_equal(served.score(query), want)
    assert notes.take() == (NOTE,)
    clock.now += 31
    switch.down = False
    np.testing.assert_allclose(served.score(query), want, atol=1e-6 * want.max())
    assert notes.take() == ()
    assert switch.client.count("agentty_code_test").count == served.n_live + len(index.file_groups().refs) + 1


def test_a_failure_is_told_in_a_few_words() -> None:
    refused = ResponseHandlingException(ConnectionRefusedError("[Errno 111] Connection refused"))
    assert failure_reason(refused, "http://127.0.0.1:6333", 5.0) == "connection refused at 127.0.0.1:6333"
    timed_out = ResponseHandlingException(TimeoutError("timed out"))
    assert failure_reason(timed_out, "http://q:6333", 2.0) == "no answer within 2 s at q:6333"
    error = UnexpectedResponse(503, "Service Unavailable", b"", None)  # type: ignore[arg-type]
    assert failure_reason(error, "https://q.example:6333", 2.0) == "HTTP 503 at q.example:6333"
