"""The dense leg's self-check with the in-repo fake embedder (``AGENTTY_EMBED_BACKEND=fake``): which probes it
picks and what it hides, how a verdict is kept, read, applied and made again. What a real model says of a
corpus is in test_leg_check_dense.py.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agentty_rag.config import load_settings
from agentty_rag.index.vectors.base import embed_text
from agentty_rag.index.vectors.dense import Matrix, Role
from agentty_rag.retrieve.candidates import analyse_query
from agentty_rag.retrieve.fusion import DENSE_LED, HYBRID
from agentty_rag.retrieve.legs import LEXICAL, HiddenDocs, Verdict, probe_ranks
from agentty_rag.retrieve.parsed import parse_query
from agentty_rag.state.machine_key import machine_key
from agentty_rag.status.report import gather
from agentty_rag.workspace.discovery import Located
from agentty_rag.workspace.leg_check import (
    PROBE_LIMIT,
    Stored,
    _seal,
    load,
    pick_probes,
    probe_plan,
    save,
    verdict_path,
)
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, OPEN_WORKSPACES


def _key() -> bytes:
    """The session's machine key, which seals the verdicts its workspaces keep."""
    return machine_key(Path(os.environ["XDG_STATE_HOME"]))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The committed code fixtures (nine small services in six languages), in a workspace of their own."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "code", root)
    return root


def _ws(root: Path, **env: str) -> Workspace:
    machine = {"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}  # the machine that built the copied index
    workspace = Workspace(root, load_settings({**machine, "AGENTTY_EMBED_BACKEND": "fake", **env}))
    OPEN_WORKSPACES.append(workspace)
    return workspace


def _built(root: Path, **env: str) -> Workspace:
    workspace = _ws(root, **env)
    workspace.index("code").refresh()
    return workspace


def test_the_probes_are_documented_definitions_with_their_docs_hidden(corpus: Path) -> None:
    index = _built(corpus, AGENTTY_RAG_DENSE="0").index("code")
    probes = pick_probes(index, time.monotonic() + 60)
    assert len(probes) == PROBE_LIMIT
    for probe in probes:
        assert len(probe.query.split()) >= 4
        answer = index.chunks(sorted(probe.answer))
        assert any(slot in probe.masked for slot in answer)
        for slot, masked in probe.masked.items():
            original = index.chunks([slot])[slot]
            opening = " ".join(probe.query.split()[:3])  # the doc's first words: on one line of the comment
            assert opening in " ".join(original.text.split()) and opening not in " ".join(masked.text.split())
            assert (masked.ref, masked.symbol) == (original.ref, original.symbol)
    again = pick_probes(index, time.monotonic() + 60)
    assert [(p.query, p.answer) for p in again] == [(p.query, p.answer) for p in probes]


def test_a_chunk_outside_the_index_scores_as_it_would_inside(corpus: Path) -> None:
    index = _built(corpus, AGENTTY_RAG_DENSE="0").index("code")
    groups = index.file_groups()
    for query in ("rotate the signing keys before they expire", "retry with exponential backoff"):
        weights = analyse_query(index, parse_query(query, index.tokenizer), code=True).weights
        scores = index.lexical_scores(weights)
        for number in range(len(groups.refs)):
            for slot, chunk in index.chunks(groups.slots_of(number).tolist()).items():
                assert index.score_outside(chunk, weights) == pytest.approx(scores.of(slot), abs=1e-9)


def test_a_file_with_some_chunks_outside_the_index_scores_as_it_would_inside(corpus: Path) -> None:
    index = _built(corpus, AGENTTY_RAG_DENSE="0").index("code")
    groups = index.file_groups()
    for query in ("rotate the signing keys before they expire", "retry with exponential backoff"):
        weights = analyse_query(index, parse_query(query, index.tokenizer), code=True).weights
        files = index.lexical_scores(weights, files=True)
        for number in range(len(groups.refs)):
            chunks = index.chunks(groups.slots_of(number).tolist())
            first = dict(list(chunks.items())[:1])  # its first chunk given as it is stored: the same score
            assert index.score_file_outside(number, first, weights) == pytest.approx(files.of_file(number), abs=1e-9)
            emptied = {slot: replace(chunk, text="") for slot, chunk in chunks.items()}
            assert index.score_file_outside(number, emptied, weights) <= files.of_file(number) + 1e-9


def _verdict_made(indexed: Path) -> tuple[Path, Stored]:
    """The verdict `agentty-rag index` made for the corpus (``indexed_code``): where it is kept, and what."""
    path = verdict_path(_ws(indexed).index("code"))
    stored = load(path, _key())
    assert stored is not None
    return path, stored


def _wait_for_embedding(workspace: Workspace, name: str = "code") -> None:
    embedding = workspace.jobs.job(f"embed:{name}")
    assert embedding is not None and embedding.join(120)


def test_the_verdict_is_made_kept_shown_and_made_again_when_damaged(corpus: Path) -> None:
    workspace = _built(corpus)
    assert workspace.embed_all("code") > 0  # what `agentty-rag index` does: embeds, then checks
    path = verdict_path(workspace.index("code"))
    stored = load(path, _key())
    assert stored is not None and stored.verdict.probes == PROBE_LIMIT and stored.profile.startswith("fake")
    status = gather(workspace, Located(workspace.root, workspace.root, "--root")).indexes["code"].dense.leg_check
    assert status == stored.verdict.describe()
    mode = workspace.search_code("rotate the signing keys").result.mode
    modes = {LEXICAL: f"bm25 ({stored.verdict.describe()})", HYBRID: "hybrid", DENSE_LED: "hybrid (dense-led)"}
    assert mode == modes[stored.verdict.lead]

    path.write_text("{ not json", encoding="utf-8")
    assert load(path, _key()) is None
    server = _ws(corpus)
    server.background_embedding = True  # the server: the check runs in the embedding thread
    assert server.search_code("rotate the signing keys").result.mode == "hybrid"  # no verdict yet
    _wait_for_embedding(server)
    remade = load(path, _key())
    assert remade is not None and remade.held == stored.held  # the same probes
    # The same verdict; the MRRs may differ in the last digits: the first check ranked with the vectors as
    # embedded, the second with them as stored (float16).
    assert (remade.verdict.probes, remade.verdict.lead) == (stored.verdict.probes, stored.verdict.lead)
    assert remade.verdict.mrr_hybrid == pytest.approx(stored.verdict.mrr_hybrid, abs=0.01)


def test_a_kept_lexical_verdict_makes_the_searches_lexical_and_the_header_says_why(indexed_code: Path) -> None:
    path, stored = _verdict_made(indexed_code)
    lexical = replace(stored.verdict, lead=LEXICAL, mrr_lexical=0.46, mrr_hybrid=0.41, mrr_dense=0.3)
    save(path, replace(stored, verdict=lexical), _key())
    later = _ws(indexed_code)
    outcome = later.search_code("rotate the signing keys")
    # Once the index is open, a lexical verdict leaves the next queries unembedded.
    asked: list[str] = []
    embed = later.dense.embedder.embed

    def recorded(texts: list[str], role: Role) -> Matrix:
        asked.extend(texts if role == "query" else [])
        return embed(texts, role)

    later.dense.embedder.embed = recorded  # type: ignore[method-assign]
    assert later.search_code("where are the signing keys kept").result.mode == outcome.result.mode
    assert asked == []
    expected = (
        "bm25 (dense leg not used for this corpus: self-check MRR lexical 0.46, hybrid 0.41, dense-led 0.30 "
        "(48 probes))"
    )
    assert outcome.result.mode == expected
    assert outcome.text.startswith("search_code · bm25 · funnel ")  # the reason is in the structured content
    assert outcome.structured["mode"] == expected
    lexical_only = _ws(indexed_code, AGENTTY_RAG_DENSE="0").search_code("rotate the signing keys")
    assert [h.chunk.chunk_id for h in outcome.result.hits] == [h.chunk.chunk_id for h in lexical_only.result.hits]
    # Weights the user set decide, whatever the verdict; the check can be switched off.
    assert (
        _ws(indexed_code, AGENTTY_RAG_DENSE_WEIGHT="1").search_code("rotate the signing keys").result.mode == "hybrid"
    )
    assert _ws(indexed_code, AGENTTY_RAG_LEG_CHECK="0").search_code("rotate the signing keys").result.mode == "hybrid"


def test_a_verdict_for_another_model_or_fusion_or_a_changed_index_is_stale(indexed_code: Path) -> None:
    path, stored = _verdict_made(indexed_code)
    save(path, replace(stored, verdict=replace(stored.verdict, lead=LEXICAL)), _key())
    assert (
        _ws(indexed_code)
        .search_code("retry with exponential backoff")
        .result.mode.startswith("bm25 (dense leg not used")
    )
    for stale in (
        replace(stored, profile="another-model|384||"),
        replace(stored, fusion="Fuse(bm25_weight=1.0, dense_weight=2.0)"),
        replace(stored, chunks=stored.chunks * 2),
        replace(stored, held=tuple((slot, "changed") for slot, _ in stored.held)),
    ):
        save(path, replace(stale, verdict=replace(stored.verdict, lead=LEXICAL)), _key())
        later = _ws(indexed_code)
        assert later.search_code("retry with exponential backoff").result.mode == "hybrid"
        assert "stale" in str(later.dense_status("code")["leg_check"])


def test_a_verdict_file_of_another_shape_is_no_verdict(tmp_path: Path) -> None:
    path = tmp_path / "rag_code.legcheck.json"
    assert load(path, _key()) is None
    for text in ("", "[]", '{"version": 2}', '{"version": 99, "verdict": {}}', '{"version": 2, "verdict": {"x": 1}}'):
        path.write_text(text, encoding="utf-8")
        assert load(path, _key()) is None
    verdict_dict = {"probes": 20, "mrr_lexical": 0.5, "mrr_hybrid": 0.4, "mrr_dense": 0.3, "stderr": 0.02}
    record = {"version": 2, "verdict": {**verdict_dict, "lead": "lexical"}, "profile": "p", "fusion": "f", "chunks": 9}
    content = {**record, "held": [[1, "h"]]}
    path.write_text(json.dumps(content), encoding="utf-8")
    assert load(path, _key()) is None  # not sealed: written elsewhere
    path.write_text(json.dumps({**content, "seal": _seal(content, _key())}), encoding="utf-8")
    loaded = load(path, _key())
    assert isinstance(loaded, Stored) and loaded.held == ((1, "h"),) and loaded.verdict.lexical
    # A verdict of the first version (two ways of searching, no dense-led one) is made again.
    old = {"probes": 20, "mrr_lexical": 0.5, "mrr_hybrid": 0.4, "stderr": 0.02, "lexical": True}
    first = {**record, "version": 1, "verdict": old, "held": []}
    path.write_text(json.dumps({**first, "seal": _seal(first, _key())}), encoding="utf-8")
    assert load(path, _key()) is None


def test_a_link_planted_at_the_verdict_or_a_temporary_name_is_replaced_never_followed(tmp_path: Path) -> None:
    state = tmp_path / ".agentty"
    state.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched", encoding="utf-8")
    path = state / "rag_code.legcheck.json"
    guesses = [path.with_name(path.name + suffix) for suffix in (".tmp", f".tmp-{os.getpid()}", ".part")]
    guesses.append(path.with_suffix(".tmp"))
    for link in (path, *guesses):
        link.symlink_to(victim)
    verdict = Verdict(20, 0.5, 0.4, 0.3, 0.02, LEXICAL)
    save(path, Stored(verdict, "p", "f", 9, ((1, "h"),)), _key())
    assert victim.read_text(encoding="utf-8") == "untouched"
    assert not path.is_symlink() and path.is_file()
    assert all(link.is_symlink() for link in guesses)  # the guessable names are not used
    loaded = load(path, _key())
    assert loaded is not None and loaded.verdict == verdict and loaded.held == ((1, "h"),)


def test_the_masked_text_is_what_the_dense_leg_embeds_in_place_of_the_stored_one(corpus: Path) -> None:
    index = _built(corpus, AGENTTY_RAG_DENSE="0").index("code")
    probe = pick_probes(index, time.monotonic() + 60)[0]
    for slot, masked in probe.masked.items():
        original = index.chunks([slot])[slot]
        assert embed_text(masked) != embed_text(original)
        assert embed_text(masked).split("\n", 1)[0] == embed_text(original).split("\n", 1)[0]  # path and symbol stay


def test_a_verdict_that_cannot_be_kept_leaves_the_searches_hybrid_and_is_not_retried(corpus: Path) -> None:
    workspace = _built(corpus)
    path = verdict_path(workspace.index("code"))
    path.mkdir(parents=True)  # where the verdict goes is a folder: it cannot be written
    assert workspace.embed_all("code") > 0
    assert load(path, _key()) is None
    assert not workspace.dense.checks.due(workspace.index("code"), "any profile")
    assert workspace.search_code("rotate the signing keys").result.mode == "hybrid"


def test_a_probe_is_searched_with_its_doc_text_hidden_everywhere_a_search_reads_it(corpus: Path) -> None:
    workspace = _built(corpus)
    workspace.embed_all("code")
    index = workspace.index("code")
    workspace.dense.use_profile(index)
    probe = pick_probes(index, time.monotonic() + 60)[0]
    embedder = workspace.dense.embedder
    vectors = {slot: embedder.embed([embed_text(chunk)], "document")[0] for slot, chunk in probe.masked.items()}
    view = HiddenDocs(index, probe.masked, vectors)
    weights = analyse_query(index, parse_query(probe.query, index.tokenizer), code=True).weights
    query = embedder.embed([probe.query], "query")[0]
    slots = sorted(probe.masked)
    groups = index.file_groups()
    seen = view.lexical_scores(weights, files=True)
    similarities = view.dense_scores(query)
    stored = index.dense_scores(query)
    assert similarities is not None and stored is not None
    for slot in slots:
        masked = probe.masked[slot]
        assert view.chunks([slot])[slot] == masked and index.chunks([slot])[slot] != masked  # the index is unchanged
        assert view.chunk_term_ids([slot])[slot] < index.chunk_term_ids([slot])[slot]  # the doc's own words are gone
        assert seen.of(slot) == pytest.approx(index.score_outside(masked, weights))
        file = int(groups.of_slot[slot])
        hidden = {s: c for s, c in probe.masked.items() if int(groups.of_slot[s]) == file}
        assert seen.of_file(file) == pytest.approx(index.score_file_outside(file, hidden, weights))
        assert float(similarities[slot]) == pytest.approx(
            float(np.asarray(vectors[slot]) @ np.asarray(query)), abs=1e-6
        )
    others = [s for s in range(index.n_chunks) if s not in probe.masked and not np.isnan(stored[s])]
    assert np.allclose(similarities[others], stored[others])
    ranks = probe_ranks(index, probe, query, vectors, probe_plan(workspace.settings))
    assert all(rank in (0.0, *(1 / p for p in range(1, 11))) for rank in ranks)


def test_a_dense_led_verdict_leans_the_searches_on_the_dense_leg_and_the_header_says_so(indexed_code: Path) -> None:
    path, stored = _verdict_made(indexed_code)
    query = "rotate the signing keys before they expire"
    hybrid = _ws(indexed_code).search_code(query, k=5)
    save(path, replace(stored, verdict=replace(stored.verdict, lead=DENSE_LED)), _key())
    led = _ws(indexed_code).search_code(query, k=5)
    assert hybrid.result.mode in ("hybrid", "bm25 (" + stored.verdict.describe() + ")", "hybrid (dense-led)")
    assert led.result.mode == "hybrid (dense-led)"
    for explained in led.explanations:
        parts = dict(explained.contributions)
        assert all(parts.get(name, 0.0) == 0.0 for name in ("coverage", "name", "context", "file file_bm25"))
        assert parts.get("dense", 0.0) >= 0.0
    assert any(dict(e.contributions).get("dense", 0.0) > 0 for e in led.explanations)
    assert "dense leg leads for this corpus" in str(_ws(indexed_code).dense_status("code")["leg_check"])
