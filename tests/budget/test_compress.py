from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.budget.compress import GAP, LineSelection, _join_lines, code_lines, extract_prose, leading_lines
from agentty_rag.budget.tokens import utf8_len

PROSE = (
    "## Token expiry\n\n"
    "Tokens are issued by the API server. Each one carries scopes. "
    "A token expires after 24 hours unless it is refreshed. "
    "Dashboards show the remaining time. Audit logs record every use.\n\n"
    "Refreshing is done with the CLI. Old tokens stop working at once."
)


def _words(*words: str):  # evidence: how many of these words a piece of text holds
    return lambda text: float(sum(1 for w in words if w in text.lower()))


def test_prose_keeps_the_sentence_with_the_answer_in_order_with_gap_markers() -> None:
    excerpt = extract_prose(PROSE, 150, _words("expires", "refreshed"))
    assert excerpt.compressed
    assert "A token expires after 24 hours unless it is refreshed." in excerpt.text
    assert excerpt.text.startswith("## Token expiry")  # the heading says where it comes from
    assert GAP in excerpt.text and utf8_len(excerpt.text) <= 150
    positions = [PROSE.find(part.strip()) for part in excerpt.text.replace(GAP, "\n").split("\n") if part.strip()]
    assert positions == sorted(positions)  # original order


def test_exact_gap_markers() -> None:
    text = "First line about nothing.\nSecond mentions tokens here.\nThird about nothing at all.\nFourth too."
    excerpt = extract_prose(text, 40, _words("tokens"))
    assert excerpt.text == f"{GAP}\nSecond mentions tokens here.\n{GAP}"


def test_code_lines_hold_the_strongest_lines_whole_and_the_signature() -> None:
    body = [f"    step_{i} = compute({i})" for i in range(40)]
    body[25] = "    retry_delay = min(base * 2 ** attempt, cap)  # backoff"
    code = "def schedule_retry(attempt):\n" + "\n".join(body) + "\n    return retry_delay"
    excerpt = code_lines(code, 200, _words("backoff", "retry_delay"))
    lines = excerpt.text.split("\n")
    assert lines[0] == "def schedule_retry(attempt):" and lines[1] == GAP
    assert "    retry_delay = min(base * 2 ** attempt, cap)  # backoff" in lines
    assert all(line in code.split("\n") or line == GAP for line in lines)  # whole lines only
    assert utf8_len(excerpt.text) <= 200
    assert excerpt.first_line <= 26 <= excerpt.last_line


def test_every_line_that_holds_the_querys_words_is_kept_when_the_room_holds_them_however_far_apart() -> None:
    body = [f"    step_{i} = compute({i})" for i in range(60)]
    body[3] = "    prefix = ctx.auto_envvar_prefix"
    body[50] = "    envvar = f'{prefix}_{self.name.upper()}'"
    code = "def resolve_envvar_value(self, ctx):\n" + "\n".join(body) + "\n    return os.environ.get(envvar)"
    excerpt = code_lines(code, 300, _words("envvar"))
    lines = excerpt.text.split("\n")
    assert body[3] in lines and body[50] in lines and lines[-1].endswith("os.environ.get(envvar)")
    assert lines[0] == "def resolve_envvar_value(self, ctx):" and GAP in lines and utf8_len(excerpt.text) <= 300
    # In the original order, each run of lines whole, a gap marked wherever lines were left out.
    positions = [code.split("\n").index(line) for line in lines if line != GAP]
    assert positions == sorted(positions)


def test_multibyte_text_is_never_corrupted() -> None:
    cjk = "令牌在二十四小时后过期。" * 40 + "\n" + "😀" * 300
    for allowance in (10, 50, 101, 333):
        for excerpt in (
            extract_prose(cjk, allowance, _words("令牌")),
            code_lines(cjk, allowance, _words("令牌")),
            leading_lines(cjk, allowance),
        ):
            assert utf8_len(excerpt.text) <= allowance
            assert "\ufffd" not in excerpt.text


@given(
    st.lists(st.text(alphabet=st.sampled_from("ab é😀"), max_size=12), min_size=1, max_size=30),
    st.lists(st.integers(0, 40), max_size=40),
)
def test_a_line_selection_knows_the_size_of_its_lines_joined_whatever_the_order_they_come_in(
    lines: list[str], order: list[int]
) -> None:
    chosen = LineSelection(lines)
    for index in order:
        fresh = index < len(lines) and index not in chosen.lines
        assert chosen.add_if_within(index, 10**9) == fresh
        assert chosen.size == utf8_len(_join_lines(lines, set(chosen.lines)))
    assert chosen.lines == sorted({i for i in order if i < len(lines)})
    # Nothing is added past the allowance, and what fits is added.
    tight = LineSelection(lines)
    for index in order:
        before = tight.size
        if tight.add_if_within(index, 20):
            assert tight.size <= 20
        else:
            assert tight.size == before
