"""The dense leg against a real embedding model served over Ollama's HTTP API on loopback (no mocks).

Integration tests: the server is shared/tools/ollama_compat_server.py (all-MiniLM-L6-v2, int8 ONNX, 384-d),
from outside the repository; these tests skip with the reason when it or its model package is not installed.
The same bookkeeping is unit-tested with the in-repo fake embedder in test_dense_leg.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from agentty_rag.config import load_settings
from agentty_rag.retrieve.rerank import FEATURES, FILE_FEATURES, Reranked
from agentty_rag.workspace.dense_leg import LONG_QUERY_MODE, NAME_QUERY_MODE
from agentty_rag.workspace.service import Workspace
from tests.conftest import OPEN_WORKSPACES, CompatServer, free_port, write

pytestmark = pytest.mark.integration

DOCS = {
    "docs/vehicles.md": "# Vehicles\n\nChange the engine oil of an automobile every ten thousand kilometres and "
    "rotate the tyres at the same visit.\n",
    "docs/kitchen.md": "# Kitchen\n\nBake the bread dough at two hundred degrees for forty minutes until the crust "
    "is golden.\n",
    "docs/garden.md": "# Garden\n\nWater tomato seedlings every morning and stake them once they are knee high.\n",
    "docs/finance.md": "# Finance\n\nFile quarterly tax returns before the deadline to avoid late payment penalties.\n",
}
# No word of this question (after stop words and stemming) appears in the vehicles page.
PARAPHRASE = "how often should my car get serviced"


def _open(root: Path, env: dict[str, str]) -> Workspace:
    workspace = Workspace(root, load_settings(env))
    OPEN_WORKSPACES.append(workspace)
    return workspace


def _ws(root: Path, server: CompatServer | None, **env: str) -> Workspace:
    values = {"AGENTTY_EMBED_MODEL": "all-minilm", **env}
    if server is not None:
        values["AGENTTY_OLLAMA_HOST"] = server.host
    return _open(root, values)


def _embedded(root: Path, server: CompatServer) -> Workspace:
    """A workspace whose code index is built and embedded, the leg check off (the legs' own weights rule)."""
    workspace = _ws(root, server, AGENTTY_RAG_LEG_CHECK="0")
    workspace.index("code").refresh()
    workspace.embed_all("code")
    return workspace


def _paths(workspace: Workspace, query: str, k: int = 4) -> list[str]:
    return [r["path"] for r in workspace.search_docs(query, k=k).structured["results"]]


def test_a_paraphrase_with_no_shared_words_is_found_only_when_hybrid(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    lexical = _ws(tmp_path, None, AGENTTY_RAG_DENSE="0").search_docs(PARAPHRASE)
    assert lexical.result.mode == "bm25" and "vehicles.md" not in lexical.text
    server = compat_server()
    hybrid = _ws(tmp_path, server).search_docs(PARAPHRASE)
    assert hybrid.result.mode == "hybrid"
    assert hybrid.structured["results"][0]["path"] == "docs/vehicles.md"
    assert hybrid.text.startswith("search_docs · hybrid · funnel ") and "+" in hybrid.text.split("\n")[0]


@pytest.mark.parametrize("case", ["refused", "missing model", "slow"])
def test_a_failed_probe_leaves_the_session_lexical_within_the_bound(
    tmp_path: Path, compat_server: Callable[..., CompatServer], case: str
) -> None:
    write(tmp_path, DOCS)
    if case == "refused":
        host, model = f"127.0.0.1:{free_port()}", "all-minilm"
    elif case == "missing model":
        host, model = compat_server().host, "nomic-embed-text"
    else:
        host, model = compat_server("--delay-ms", "5000").host, "all-minilm"
    workspace = _open(tmp_path, {"AGENTTY_OLLAMA_HOST": host, "AGENTTY_EMBED_MODEL": model})
    started = time.monotonic()
    first = workspace.search_docs("engine oil")
    elapsed = time.monotonic() - started
    assert elapsed < 2.5, f"the probe took {elapsed:.2f} s"
    expected = {
        "refused": "connection refused",
        "missing model": "run `ollama pull nomic-embed-text`",
        "slow": "timeout",
    }[case]
    assert first.result.mode.startswith("bm25 (dense unavailable: ") and expected in first.result.mode
    assert first.structured["results"][0]["path"] == "docs/vehicles.md"
    started = time.monotonic()
    workspace.search_docs("tomato seedlings")
    # no later search pays a network timeout (2 s here, the server answering after 5 s); a loaded machine's
    # lexical search takes a fraction of that
    assert time.monotonic() - started < 1.5


def test_vectors_left_by_an_earlier_session_do_not_make_a_session_without_settings_report_the_leg_missing(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    """One session pointed at an embedding server and embedded the docs; a later one with no settings probes
    the default address, finds nothing there, and says nothing about it: plain ``bm25``, no note."""
    write(tmp_path, DOCS)
    earlier = _ws(tmp_path, compat_server())
    earlier.index("docs").refresh()
    assert earlier.embed_all("docs") == len(DOCS)
    earlier.close()
    later = _open(tmp_path, {})
    found, empty = later.search_docs("engine oil"), later.search_docs("zebra")
    assert later.dense.status.state == "unavailable"  # nothing answers at the default address
    assert found.result.mode == "bm25" and empty.result.mode == "bm25"
    assert found.structured["results"][0]["path"].endswith("vehicles.md")  # the ranking itself unchanged
    assert "dense" not in found.text + empty.text


def test_dense_weight_zero_gives_exactly_the_bm25_ranking(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server()
    lexical = _ws(tmp_path, None, AGENTTY_RAG_DENSE="0")
    weightless = _ws(tmp_path, server, AGENTTY_RAG_DENSE_WEIGHT="0")
    for query in (PARAPHRASE, "bread crust", "tax deadline penalties", "water"):
        a, b = lexical.search_docs(query).structured, weightless.search_docs(query).structured
        assert [(r["provenance"], r["score"]) for r in a["results"]] == [
            (r["provenance"], r["score"]) for r in b["results"]
        ]
        assert b["mode"] == "bm25 (dense weight 0)"


def test_the_embedding_server_dying_mid_session_degrades_truthfully_and_comes_back(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    port = free_port()
    server = compat_server(port=port)
    workspace = _ws(tmp_path, server, AGENTTY_RAG_DENSE_RETRY_S="1")
    assert workspace.search_docs(PARAPHRASE).result.mode == "hybrid"
    server.stop()
    modes = [workspace.search_docs(f"{PARAPHRASE} {i}").result.mode for i in range(5)]
    assert all(m.startswith("bm25 (degraded: dense — connection refused") for m in modes[:3])
    assert modes[3].startswith("bm25 (dense unavailable: connection refused") and "3 failures in a row" in modes[3]
    assert modes[4] == modes[3]  # switched off: no more requests
    compat_server(port=port)
    assert workspace.dense.wait_available(workspace.jobs.stop).state == "ready"  # probed after the cool-down
    assert workspace.search_docs(PARAPHRASE + " again").result.mode == "hybrid"


def test_vectors_missing_after_the_server_went_away_are_filled_in_later(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, {f"docs/page{i:02}.md": f"# Page {i}\n\nTopic number {i} about deployments.\n" for i in range(40)})
    port = free_port()
    workspace = _open(tmp_path, {"AGENTTY_OLLAMA_HOST": f"127.0.0.1:{port}", "AGENTTY_EMBED_MODEL": "all-minilm"})
    assert workspace.search_docs("deployments").result.mode.startswith("bm25 (dense unavailable")
    server = compat_server(port=port)
    fresh = _ws(tmp_path, server, AGENTTY_RAG_EMBED_BATCH="8")
    index = fresh.index("docs")
    index.refresh()
    fresh.dense.ensure()
    fresh.embed_all("docs")
    assert index.vector_coverage() == (40, 40)
    # Index-time failure half way: the server dies, BM25 keeps answering, the gap is filled later.
    write(tmp_path, {f"docs/more{i:02}.md": f"# More {i}\n\nAnother page {i} about rollbacks.\n" for i in range(40)})
    index.refresh()
    server.stop()
    assert fresh.embed_all("docs") == 0
    have, live = index.vector_coverage()
    assert (have, live) == (40, 80)
    degraded = fresh.search_docs("rollbacks")
    assert degraded.result.mode.startswith("bm25 (") and degraded.structured["results"]
    compat_server(port=port)
    again = _ws(tmp_path, server)
    again.dense.ensure()
    again.embed_all("docs")
    assert again.index("docs").vector_coverage() == (80, 80)


def test_a_new_embedding_model_re_embeds_but_keeps_the_chunks(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server(names="all-minilm,other-embedder")
    first = _ws(tmp_path, server)
    first.search_docs("engine oil")
    first.embed_all("docs")
    assert first.index("docs").vector_coverage() == (4, 4)
    second = _ws(tmp_path, server, AGENTTY_EMBED_MODEL="other-embedder")
    report = second.index("docs").refresh()
    assert not report.rebuilt and report.rechunked_files == 0  # chunks and BM25 stay
    second.dense.ensure()
    assert second.embed_all("docs") == 4  # vectors of the new profile
    assert second.search_docs(PARAPHRASE).result.mode == "hybrid"
    third = _ws(tmp_path, server)
    third.dense.ensure()
    assert third.embed_all("docs") == 0  # the first model's vectors were kept


def test_query_embeddings_are_cached_and_unit_length(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    server = compat_server()
    workspace = _ws(tmp_path, server)
    vector, reason = workspace.dense.query_vector("refresh tokens")
    assert reason == "" and vector is not None and vector.shape == (384,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
    server.stop()
    again, reason = workspace.dense.query_vector("refresh tokens")
    assert again is vector and reason == ""  # from the cache, no request


def test_an_edit_reverted_finds_its_old_vector_without_embedding_again(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    pages = {f"docs/page{i:02}.md": f"# Page {i}\n\nTopic number {i} about deployments.\n" for i in range(20)}
    write(tmp_path, pages)
    server = compat_server()
    workspace = _ws(tmp_path, server)
    index = workspace.index("docs")
    index.refresh()
    workspace.dense.ensure()
    workspace.embed_all("docs")
    assert index.vector_coverage() == (20, 20)
    write(tmp_path, {"docs/page03.md": "# Page 3\n\nNow about rollbacks instead.\n"})
    assert index.refresh().changed == 1
    assert index.vector_coverage() == (19, 20)  # the edited text has no vector yet
    write(tmp_path, {"docs/page03.md": pages["docs/page03.md"]})
    assert index.refresh().changed == 1
    assert index.vector_coverage() == (20, 20)  # the reverted text's vector was kept and is found by slot


CODE = {
    "core/loop.py": "def run_event_loop(handlers):\n    '''Run the event loop until it is stopped.'''\n"
    "    while handlers:\n        tick(handlers)\n\n\ndef tick(handlers):\n    '''One turn of the loop.'''\n"
    "    for handler in handlers:\n        handler()\n\n\ndef stop_loop(handlers):\n    handlers.clear()\n",
    "util/spin.py": "def spin_once(callback):\n    '''Call back once, like one turn of an event loop.'''\n"
    "    callback()\n",
    "util/text.py": "def shout(text):\n    return text.upper()\n",
}


def test_in_hybrid_mode_each_passage_and_file_carries_the_dense_legs_evidence_beside_its_bm25(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, CODE)
    query = "where does the event loop run"
    lexical = _ws(tmp_path, None, AGENTTY_RAG_DENSE="0").search_code(query, k=3)
    server = compat_server()
    workspace = _embedded(tmp_path, server)
    hybrid = workspace.search_code(query, k=3)
    assert lexical.result.mode == "bm25" and hybrid.result.mode == "hybrid"

    def parts(explanations: tuple[Reranked, ...], wanted: str) -> list[float]:
        return [value for r in explanations for name, value in r.contributions if name == wanted]

    full = FILE_FEATURES["file_bm25"][0]
    # Both modes: the file order's lead passage carries its file's lexical evidence in full ...
    assert max(parts(lexical.explanations, "file file_bm25")) == pytest.approx(full)
    assert max(parts(hybrid.explanations, "file file_bm25")) == pytest.approx(full)
    # ... and in hybrid mode the dense leg's too: the passage's similarity and its file's, on the query's scale.
    assert not any(parts(lexical.explanations, "dense")) and not any(parts(lexical.explanations, "file file_dense"))
    assert 0 < max(parts(hybrid.explanations, "dense")) <= FEATURES["dense"][0]
    assert 0 < max(parts(hybrid.explanations, "file file_dense")) <= FILE_FEATURES["file_dense"][0]
    assert hybrid.structured["results"][0]["path"] == "core/loop.py"
    # --explain says where each candidate stood in each leg: its rank and score, the similarity on its scale.
    top = hybrid.explanations[0].candidate.chunk.chunk_id
    lexical_part, dense_part = hybrid.legs[top]
    assert lexical_part.startswith("lexical ") and dense_part.startswith("dense ") and " → " in dense_part
    assert all(part.startswith("lexical ") for parts in lexical.legs.values() for part in parts)


# An issue: what broke, a traceback and the code around it (more than 30 distinct terms).
LONG_QUERY = (
    "The event loop never stops after stop_loop is called from a handler. Steps to reproduce: register two "
    "handlers, call stop_loop(handlers) inside the first one, then run_event_loop keeps spinning.\n"
    'Traceback (most recent call last):\n  File "core/loop.py", line 4, in run_event_loop\n    tick(handlers)\n'
    '  File "core/loop.py", line 10, in tick\n    handler()\nRuntimeError: list changed size during iteration\n'
    "Expected the loop to return once the handlers list is empty; observed an error on every platform we tried."
)


def test_a_long_code_query_is_searched_by_the_lexical_leg_alone_without_embedding_it(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, CODE)
    lexical = _ws(tmp_path, None, AGENTTY_RAG_DENSE="0").search_code(LONG_QUERY, k=3)
    server = compat_server()
    workspace = _embedded(tmp_path, server)
    assert workspace.search_code("where does the event loop run", k=3).result.mode == "hybrid"
    first = _ws(tmp_path, server, AGENTTY_RAG_LEG_CHECK="0").search_code(LONG_QUERY, k=3)
    assert first.result.mode == f"bm25 ({LONG_QUERY_MODE})"  # a session's first search says why, too
    dense_only = _ws(tmp_path, server, AGENTTY_RAG_LEG_CHECK="0", AGENTTY_RAG_BM25_WEIGHT="0")
    assert dense_only.search_code(LONG_QUERY, k=3).result.mode == "hybrid"  # the weights still rule the legs
    server.stop()  # the long query must not ask the server for its embedding
    long = workspace.search_code(LONG_QUERY, k=3)
    assert long.result.mode == f"bm25 ({LONG_QUERY_MODE})"
    assert long.structured["mode"] == f"bm25 ({LONG_QUERY_MODE})" and long.text.startswith("search_code · bm25 · ")
    assert [r["provenance"] for r in long.structured["results"]] == [
        r["provenance"] for r in lexical.structured["results"]
    ]
    assert long.structured["results"][0]["path"] == "core/loop.py"


def test_a_bare_name_is_searched_by_the_lexical_leg_alone_without_embedding_it(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, CODE)
    lexical = _ws(tmp_path, None, AGENTTY_RAG_DENSE="0").search_code("run_event_loop", k=3)
    server = compat_server()
    workspace = _embedded(tmp_path, server)
    assert workspace.search_code("where does the event loop run", k=3).result.mode == "hybrid"
    server.stop()  # the name must not ask the server for its embedding
    named = workspace.search_code("run_event_loop", k=3)
    assert named.result.mode == f"bm25 ({NAME_QUERY_MODE})"
    assert [r["provenance"] for r in named.structured["results"]] == [
        r["provenance"] for r in lexical.structured["results"]
    ]
    assert named.structured["results"][0]["symbol"] == "run_event_loop"


def test_a_long_query_on_an_index_still_being_embedded_says_it_was_searched_lexically_by_design(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    many = {f"pkg/m{i}.py": f"def handler_{i}(request):\n    return request + {i}\n" for i in range(80)}
    write(tmp_path, {**CODE, **many})
    server = compat_server()
    workspace = _ws(tmp_path, server, AGENTTY_RAG_LEG_CHECK="0")  # the command line: it embeds at most 64 itself
    short = workspace.search_code("where does the event loop run", k=3).result.mode
    assert short.startswith("bm25 (dense: 0% embedded")  # the missing vectors changed this result
    assert workspace.search_code(LONG_QUERY, k=3).result.mode == f"bm25 ({LONG_QUERY_MODE})"  # not this one


# Twelve near-copies (a hub: close to each other, so close to most queries) and one function unlike them.
HUBS = {
    f"notify/{channel}.py": f"def notify_{channel}(user, message):\n    '''Notify the user of a message by {channel}.'''\n"
    f"    return send_{channel}(user.{channel}_address, message)\n"
    for channel in ("sms", "push", "pager", "fax", "telegram", "slack", "teams", "whatsapp", "signal", "discord")
    + ("matrix", "irc")
}
MAIL = {
    "mail/outbox.py": "def deliver(envelope):\n    '''Hand the envelope to the SMTP relay so that it reaches the user's "
    "inbox.'''\n    relay.submit(envelope)\n",
    "util/text.py": "def shout(text):\n    return text.upper()\n",
}
DENSE_ALONE = {
    "AGENTTY_RAG_BM25_WEIGHT": "0",
    "AGENTTY_RAG_RERANK": "0",
    "AGENTTY_RAG_FILES": "0",
    "AGENTTY_RAG_STITCH": "0",
}


def test_a_function_among_near_copies_loses_its_lead_to_the_one_near_this_query_only(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, {**HUBS, **MAIL})
    server = compat_server()
    _embedded(tmp_path, server).close()
    query = "send an email to a user"

    def top(**env: str) -> str:
        results = _ws(tmp_path, server, AGENTTY_RAG_LEG_CHECK="0", **DENSE_ALONE, **env).search_code(query, k=3)
        assert results.result.mode == "hybrid"
        return str(results.structured["results"][0]["path"])

    # By cosine alone a near-copy is nearest; less a fifth of each chunk's neighbourhood density, the mail function.
    assert top(AGENTTY_RAG_HUBNESS="0").startswith("notify/")
    assert top() == "mail/outbox.py"
