"""The proactive hook's merge of several indexes' rankings."""

from __future__ import annotations

from agentty_rag.retrieve.merge import merge_retrieved
from agentty_rag.retrieve.pipeline import Retrieved
from agentty_rag.types import Chunk, Funnel, Hit


def _hit(ref: str, score: float, source: str = "docs") -> Hit:
    return Hit(Chunk(source, ref, 1, 2, f"text of {ref}"), score)  # type: ignore[arg-type]


def test_hits_of_a_sure_result_lead_those_of_an_unsure_one() -> None:
    docs = Retrieved((_hit("a.md", 9.0), _hit("b.md", 5.0)), Funnel(), "bm25", confidence=0.4, weakest=1.0)
    code = Retrieved(
        (_hit("x.py", 2.0, "code"), _hit("y.py", 1.0, "code")), Funnel(), "hybrid", confidence=0.9, weakest=0.0
    )
    merged = merge_retrieved([docs, code], 3)
    assert [h.chunk.ref for h in merged.hits] == ["x.py", "y.py", "a.md"]
    assert [h.score for h in merged.hits] == [0.9, 0.45, 0.4]
    assert (merged.confidence, merged.weakest, merged.mode) == (0.9, 0.0, "hybrid")


def test_equal_scores_break_by_hit_id_and_a_stitched_hit_keeps_its_parts() -> None:
    parts = (Chunk("code", "s.py", 1, 2, "a", symbol="f"), Chunk("code", "s.py", 3, 4, "b", symbol="g"))
    stitched = Hit(Chunk("code", "s.py", 1, 4, "a\nb", symbol="f"), 1.0, parts=parts)
    one = Retrieved((stitched,), Funnel(), "bm25", confidence=0.5)
    other = Retrieved((_hit("n.md", 1.0),), Funnel(), "bm25", confidence=0.5)
    merged = merge_retrieved([one, other], 2)
    assert [h.key for h in merged.hits] == sorted([stitched.key, other.hits[0].key])
    assert next(h for h in merged.hits if h.chunk.ref == "s.py").parts == parts


def test_a_stitched_hit_keeps_the_id_its_joined_chunk_had() -> None:
    parts = (Chunk("code", "s.py", 1, 2, "a", symbol="A.f"), Chunk("code", "s.py", 3, 4, "b", symbol="A.g"))
    stitched = Hit(Chunk("code", "s.py", 1, 4, "a\nb", symbol="A.f"), 1.0, parts=parts)
    assert stitched.key == Chunk("code", "s.py", 1, 4, "a\nb", symbol="A.f, A.g").chunk_id
    assert Hit(parts[0], 1.0).key == parts[0].chunk_id


def test_nothing_to_merge_is_an_empty_result() -> None:
    merged = merge_retrieved([], 6)
    assert merged.hits == () and merged.confidence == 0.0


def test_the_merged_funnel_adds_up_each_stage_in_the_pipelines_order() -> None:
    # the docs index had nothing to rerank; the resources' index did
    docs = Retrieved(
        (),
        Funnel((("lexical", 2), ("fused", 2), ("dedup/stitch", 0), ("returned", 0))),
        "bm25",
    )
    resources = Retrieved(
        (_hit("note://a", 1.0, "mcp"),),
        Funnel((("lexical", 3), ("fused", 3), ("reranked", 3), ("dedup/stitch", 1), ("returned", 1))),
        "bm25",
        confidence=0.8,
    )
    merged = merge_retrieved([docs, resources], 5)
    assert merged.funnel.stages == (
        ("lexical", 5),
        ("fused", 5),
        ("reranked", 3),
        ("dedup/stitch", 1),
        ("returned", 1),
    )
