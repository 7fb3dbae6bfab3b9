"""The naive reference every report is compared against: whole-file BM25 with bm25s defaults.

One document per file (per skill, per memory fact), ``bm25s.tokenize`` with its defaults (lowercase, English
stop words, no stemming, words of two or more characters) and ``bm25s.BM25()`` with its defaults (Lucene
variant, k1=1.5, b=0.75). A hit is the whole file.
"""

from __future__ import annotations

import bm25s

from agentty_rag.index.engine import CorpusIndex
from agentty_rag.types import Chunk, Hit


class WholeFileBaseline:
    """bm25s over the documents the index's sources produce, unchunked."""

    def __init__(self, index: CorpusIndex) -> None:
        self.documents: list[Chunk] = []
        for source in index.config.sources:
            for stamp in source.scan().files:
                with open(stamp.path, "rb") as handle:
                    loaded = source.parse(stamp, handle.read())
                for document in loaded.documents:
                    lines = document.text.count("\n") + 1
                    self.documents.append(
                        Chunk(
                            document.source,
                            document.ref,
                            document.first_line,
                            document.first_line + lines - 1,
                            document.text,
                            document.language,
                            "file",
                        )
                    )
        self.retriever = bm25s.BM25()
        if self.documents:
            corpus = bm25s.tokenize([d.text for d in self.documents], show_progress=False)
            self.retriever.index(corpus, show_progress=False)

    def search(self, query: str, k: int) -> list[Hit]:
        if not self.documents:
            return []
        tokens = bm25s.tokenize([query], return_ids=False, show_progress=False)
        vocabulary = self.retriever.vocab_dict
        known = [[t for t in tokens[0] if t in vocabulary]]
        if not known[0]:
            return []
        ids, scores = self.retriever.retrieve(known, k=min(k, len(self.documents)), show_progress=False)
        return [Hit(self.documents[int(i)], float(s)) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]


__all__ = ["WholeFileBaseline"]
