from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.retrieve.stitch import assemble, opens_members
from agentty_rag.types import Chunk, Hit
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write

LINES = [f"line {n}" for n in range(1, 41)]


def stitch(hits: list[Hit]) -> list[Hit]:
    """Stitch with every hit inside the cut."""
    return assemble(hits, len(hits))


def _code(start: int, end: int, symbol: str = "", ref: str = "a.py") -> Chunk:
    return Chunk("code", ref, start, end, "\n".join(LINES[start - 1 : end]), "python", "function", "", symbol)


def _hit(chunk: Chunk, score: float) -> Hit:
    return Hit(chunk, score)


def test_overlapping_chunks_become_one_passage_with_exact_lines() -> None:
    (merged,) = stitch([_hit(_code(10, 20, "A.f"), 2.0), _hit(_code(15, 25, "A.g"), 1.0)])
    assert (merged.chunk.start_line, merged.chunk.end_line) == (10, 25)
    assert merged.chunk.text == "\n".join(LINES[9:25])
    assert [part.symbol for part in merged.parts] == ["A.f", "A.g"] and merged.score == 2.0
    assert merged.chunk.provenance == "code:a.py:10-25"


def test_adjacent_chunks_and_a_gap_of_one_line() -> None:
    (adjacent,) = stitch([_hit(_code(1, 5), 1.0), _hit(_code(6, 9), 0.5)])
    assert (adjacent.chunk.start_line, adjacent.chunk.end_line) == (1, 9)
    assert adjacent.chunk.text == "\n".join(LINES[0:9])
    (gap,) = stitch([_hit(_code(12, 14), 0.5), _hit(_code(1, 10), 1.0)])
    assert (gap.chunk.start_line, gap.chunk.end_line) == (1, 14)
    assert gap.chunk.text == "\n".join(LINES[0:10]) + "\n\n" + "\n".join(LINES[11:14])


def test_a_gap_of_two_lines_or_another_file_stays_apart() -> None:
    assert len(stitch([_hit(_code(1, 5), 1.0), _hit(_code(8, 9), 0.5)])) == 2
    assert len(stitch([_hit(_code(1, 5), 1.0), _hit(_code(6, 9, ref="b.py"), 0.5)])) == 2


def test_the_merged_passage_takes_the_better_rank_and_can_chain() -> None:
    hits = [
        _hit(_code(30, 31), 3.0),
        _hit(_code(1, 4), 2.0),
        _hit(_code(20, 22), 1.5),
        _hit(_code(5, 8), 1.0),
        _hit(_code(9, 12), 0.5),
    ]
    out = stitch(hits)
    assert [(h.chunk.start_line, h.chunk.end_line) for h in out] == [(30, 31), (1, 12), (20, 22)]
    # parts in the order they were joined: each joined passage after the one that starts earlier
    assert [(p.start_line, p.end_line) for p in out[1].parts] == [(1, 4), (5, 8), (9, 12)]
    assert out[0].parts == () and out[0].pieces == (out[0].chunk,)


def test_overlapping_prose_windows_join_without_repeating_the_overlap() -> None:
    first = Chunk("docs", "g.md", 1, 3, "alpha beta gamma\ndelta epsilon", "markdown", "section", "G")
    second = Chunk("docs", "g.md", 2, 4, "delta epsilon\nzeta eta", "markdown", "section", "G")
    (merged,) = stitch([_hit(first, 1.0), _hit(second, 0.9)])
    assert merged.chunk.text == "alpha beta gamma\ndelta epsilon\nzeta eta"
    assert [part.context for part in merged.pieces] == ["G", "G"]


def test_memory_facts_are_never_stitched() -> None:
    a = Chunk("memory", "facts", 1, 1, "one fact", "text", "fact")
    b = Chunk("memory", "facts", 2, 2, "another fact", "text", "fact")
    assert len(stitch([_hit(a, 1.0), _hit(b, 0.5)])) == 2


def test_near_duplicates_collapse_into_the_better_one() -> None:
    paragraph = "Rotate the signing key every ninety days and keep the previous key for verification only."
    a = Chunk("docs", "guide/keys.md", 3, 9, paragraph + " More words here.", "markdown", "section", "Keys")
    b = Chunk("docs", "ops/rotation.md", 1, 2, paragraph, "markdown", "section", "Rotation")
    c = Chunk("docs", "other.md", 1, 2, "Something else entirely about deployments.", "markdown")
    out = assemble([_hit(a, 1.0), _hit(b, 0.9), _hit(c, 0.5)], 3)
    assert [h.chunk.ref for h in out] == ["guide/keys.md", "other.md"]
    assert out[0].also == ("docs:ops/rotation.md:1-2",)


def test_only_hits_that_made_the_cut_are_stitched_and_free_slots_are_refilled() -> None:
    hits = [
        _hit(_code(1, 4, "A.a"), 4.0),
        _hit(_code(30, 31, "B.b"), 3.0),
        _hit(_code(5, 8, "A.c"), 2.0),
        _hit(_code(9, 12, "A.d"), 1.5),
        _hit(_code(20, 22, "C.e"), 1.0),
    ]
    out = assemble(hits, 3)
    # 1-4 and 5-8 both made the cut: stitched. 9-12 ranked 4th only neighbours a shown passage: left out.
    assert [(h.chunk.start_line, h.chunk.end_line) for h in out] == [(1, 8), (30, 31), (20, 22)]


def _defined(start: int, end: int, symbol: str, kind: str = "method") -> Chunk:
    return Chunk("code", "src/bar.py", start, end, f"# {symbol}", "python", kind, "", symbol)


def test_the_head_of_a_split_definition_opens_its_first_member_right_after_it() -> None:
    head = _defined(43, 43, "ProgressBar", "class")
    assert opens_members(head, _defined(44, 113, "ProgressBar.__init__"))
    assert opens_members(head, _defined(45, 113, "ProgressBar.__init__"))  # a blank line between
    assert not opens_members(head, _defined(47, 113, "ProgressBar.__init__"))  # too far: not its start
    assert not opens_members(head, _defined(44, 60, "render_progress", "function"))  # not a member
    assert not opens_members(head, replace(_defined(44, 113, "ProgressBar.__init__"), ref="src/other.py"))


PROGRESS = (
    "class ProgressBar(Generic[V]):\n"
    + "    def __init__(self, iterable, length=None, fill_char='#', empty_char=' '):\n"
    + "".join(f"        self.setting_{i} = compute_default({i})\n" for i in range(40))
    + "\n    def render_progress(self):\n"
    + "".join(f"        line_{i} = self.format_progress_line({i})\n" for i in range(40))
    + "\ndef unrelated_helper(value):\n    return value\n"
)


def test_a_search_never_shows_the_head_of_a_split_class_alone(tmp_path: Path) -> None:
    write(tmp_path, {"src/bar.py": PROGRESS, "src/other.py": "def other(x):\n    return x\n"})
    workspace = Workspace(tmp_path, load_settings({**LEXICAL, "AGENTTY_RAG_CODE_CHUNK_CHARS": "1200"}))
    index = workspace.index("code")
    index.refresh()
    chunks = index.all_chunks()
    assert any(c.symbol == "ProgressBar" and c.end_line == 1 for c in chunks)  # the class head is a chunk of its own
    first = workspace.search_code("ProgressBar", k=3).packed.passages[0]
    assert first.hit.chunk.symbol == "ProgressBar" and first.start_line == 1 and first.end_line >= 3
    assert "def __init__" in first.text  # its body's start comes with it
    alone = Workspace(tmp_path, load_settings({**LEXICAL, "AGENTTY_RAG_STITCH": "0"})).search_code("ProgressBar", k=3)
    assert alone.packed.passages[0].text.strip() == "class ProgressBar(Generic[V]):"  # what stitching spares
