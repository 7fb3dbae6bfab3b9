"""Our BM25 against the reference implementation (bm25s, method="lucene"), and its invariants."""

from __future__ import annotations

import random

import bm25s
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.index.lexical.bm25 import idf, tf_saturation
from agentty_rag.index.lexical.inverted import Postings

VOCAB = [f"w{i}" for i in range(40)]


def _corpus(seed: int, n_docs: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [[rng.choice(VOCAB[: rng.randint(5, 40)]) for _ in range(rng.randint(1, 30))] for _ in range(n_docs)]


def _ours(corpus: list[list[str]]) -> Postings:
    index = Postings(("body",))
    ids = {term: i for i, term in enumerate(VOCAB)}
    for slot, doc in enumerate(corpus):
        counts: dict[int, int] = {}
        for term in doc:
            counts[ids[term]] = counts.get(ids[term], 0) + 1
        terms = np.asarray(sorted(counts), np.int32)
        index.add(slot, {"body": (terms, np.asarray([counts[t] for t in terms.tolist()], np.int32))})
    return index


def test_scores_equal_bm25s_lucene_on_random_corpora() -> None:
    for seed in range(5):
        corpus = _corpus(seed, 60)
        reference = bm25s.BM25(method="lucene", k1=1.2, b=0.75, backend="numpy")
        reference.index(corpus, show_progress=False)
        ours = _ours(corpus)
        rng = random.Random(seed + 100)
        for _ in range(10):
            query = sorted(set(rng.sample(VOCAB, 3)))
            expected = reference.get_scores(query)
            got = ours.score({"body": [VOCAB.index(t) for t in query]}, {"body": 1.0})[: len(corpus)]
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@given(st.integers(1, 10_000), st.integers(1, 10_000))
def test_idf_is_positive_and_falls_as_documents_share_the_term(n_docs: int, df: int) -> None:
    df = min(df, n_docs)
    assert idf(df, n_docs) > 0
    if df < n_docs:
        assert idf(df, n_docs) > idf(df + 1, n_docs)


@given(st.floats(0.1, 50), st.floats(1, 500), st.floats(1, 500))
def test_tf_saturation_is_bounded_and_rises_with_frequency(tf: float, length: float, avg: float) -> None:
    low = tf_saturation(np.array([tf]), np.array([length]), avg)[0]
    high = tf_saturation(np.array([tf + 1]), np.array([length]), avg)[0]
    assert 0 < low < high < 1
