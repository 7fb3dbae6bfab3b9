"""The file order: files scored as a whole, names the query asks for, and the merge with the passage order.

Unit tests on hand-built candidates for the math; end-to-end tests on real files through the workspace (real
tree-sitter chunking, the real index) for each behaviour a user sees.
"""

from __future__ import annotations

from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.retrieve.candidates import analyse_query
from agentty_rag.retrieve.features import Candidate, QueryProfile
from agentty_rag.retrieve.parsed import parse_query
from agentty_rag.retrieve.rerank import FEATURES, FILE_FEATURES, LEXICAL_EVIDENCE, rank_files, rerank
from agentty_rag.retrieve.stages.rerank import standings
from agentty_rag.types import Chunk
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write


def _profile(terms: tuple[str, ...]) -> QueryProfile:
    return QueryProfile(" ".join(terms), terms, dict.fromkeys(terms, 2.0))


def _chunk(ref: str, start: int, symbol: str) -> Chunk:
    return Chunk("code", ref, start, start + 5, f"def {symbol}(): ...", "python", "function", "", symbol)


def _central_file_and_lone_passage() -> tuple[list[Candidate], Candidate]:
    """Two passages of a file with strong evidence, and a stronger passage of a file with none."""
    central = [
        Candidate(_chunk("core.py", 1, "run"), 0.8, frozenset({"loop"}), frozenset(), frozenset(), file_score=1.0),
        Candidate(_chunk("core.py", 20, "tick"), 0.5, frozenset({"loop"}), frozenset(), frozenset(), file_score=1.0),
    ]
    lone = Candidate(_chunk("misc.py", 1, "loop_once"), 1.0, frozenset({"event", "loop"}), frozenset(), frozenset())
    return central, lone


def test_a_file_with_strong_evidence_leads_and_its_next_passage_must_stand_on_its_own() -> None:
    profile = _profile(("event", "loop"))
    central, lone = _central_file_and_lone_passage()
    passages = rerank([*central, lone], profile)
    assert passages[0].candidate is lone  # the passage order: the strongest passage alone
    by_file = rank_files(passages, profile)
    assert by_file[0].candidate is central[0]  # the file order: the central file leads
    parts = dict(by_file[0].contributions)
    assert parts["file file_bm25"] == FILE_FEATURES["file_bm25"][0] * (passages[1].score / passages[0].score)
    # Its second passage gets half of the file's evidence, scaled by its own passage score.
    second = next(r for r in by_file if r.candidate is central[1])
    share = passages[2].score / passages[0].score * 0.5
    assert abs(dict(second.contributions)["file file_bm25"] - FILE_FEATURES["file_bm25"][0] * share) < 1e-12


def _as_close_as(ref: str, symbol: str, closeness: float) -> Candidate:
    """A passage of middling lexical evidence whose file the dense leg finds ``closeness`` close (0 to 1)."""
    return Candidate(
        _chunk(ref, 1, symbol),
        0.8,
        frozenset({"loop"}),
        frozenset(),
        frozenset(),
        file_score=0.5,
        dense=closeness,
        file_dense=closeness,
        file_dense_sum=closeness,
    )


def test_in_hybrid_mode_a_files_dense_evidence_counts_beside_its_lexical_evidence() -> None:
    # Two files with the same lexical evidence; the dense leg finds one of them far closer to the question.
    lexical = _profile(("event", "loop"))
    hybrid = QueryProfile(lexical.text, lexical.terms, lexical.idf, dense_share=2 / 3)
    near, far = _as_close_as("near.py", "run", 1.0), _as_close_as("far.py", "tick", 0.1)
    # Without the dense leg (its share 0) the two tie and the chunk id decides; with it, the near file leads.
    assert {r.candidate.chunk.ref for r in rank_files(rerank([near, far], lexical), lexical)} == {"near.py", "far.py"}
    ranked = rank_files(rerank([far, near], hybrid), hybrid)
    assert [r.candidate.chunk.ref for r in ranked] == ["near.py", "far.py"]
    passage = dict(rerank([near], hybrid)[0].contributions)
    assert abs(passage["dense"] - FEATURES["dense"][0] * 2 / 3) < 1e-12  # the passage's own similarity
    parts = dict(ranked[0].contributions)
    assert abs(parts["file file_dense"] - FILE_FEATURES["file_dense"][0] * 2 / 3) < 1e-12
    assert abs(parts["file file_dense_sum"] - FILE_FEATURES["file_dense_sum"][0] * 2 / 3) < 1e-12
    without = dict(rank_files(rerank([near], lexical), lexical)[0].contributions)
    assert without.get("dense", 0.0) == without.get("file file_dense", 0.0) == 0.0


def test_where_the_dense_leg_leads_the_features_that_count_the_querys_words_are_left_out() -> None:
    profile = _profile(("event", "loop"))
    led = QueryProfile(profile.text, profile.terms, profile.idf, dense_share=0.9, lexical_evidence=0.0)
    central, lone = _central_file_and_lone_passage()
    named = Candidate(_chunk("loop.py", 1, "loop"), 0.5, frozenset(), frozenset(), frozenset(), defines_asked=1.0)
    for reranked in rank_files(rerank([*central, lone, named], led), led):
        names = {name.removeprefix("file ") for name, value in reranked.contributions if value}
        assert not names & LEXICAL_EVIDENCE
    # The names a query asks for still count: the lexical leg catches exact names where the dense leg leads.
    top = rank_files(rerank([*central, lone, named], led), led)[0]
    assert top.candidate is named


def test_standings_fall_with_the_merged_rank() -> None:
    profile = _profile(("cache",))
    a = Candidate(_chunk("a.py", 1, "a"), 1.0, frozenset({"cache"}), frozenset(), frozenset(), file_score=1.0)
    b = Candidate(_chunk("b.py", 1, "b"), 0.9, frozenset({"cache"}), frozenset(), frozenset())
    c = Candidate(_chunk("c.py", 1, "c"), 0.2, frozenset(), frozenset(), frozenset())
    by_passage = rerank([a, b, c], profile)
    by_file = rank_files(by_passage, profile)
    merged = [by_passage[2], by_file[0], by_passage[1]]  # an order that puts a weak hit first
    scores = standings(merged, by_file, by_passage)
    assert scores == sorted(scores, reverse=True)
    assert scores[0] < 1.0  # the weak hit stands low, and nothing after it stands higher


def _filler(count: int) -> dict[str, str]:
    """Unrelated files, so that the relevance floor has a weakest candidate to measure against."""
    return {f"misc/util_{i}.py": f"def helper_{i}(value):\n    return value + {i}\n" for i in range(count)}


def _search(root: Path, query: str, k: int = 5, **env: str) -> list[str]:
    """The files of the ranked hits, in order (the ranking itself: the output budget may show fewer)."""
    workspace = Workspace(root, load_settings({**LEXICAL, **env}))
    workspace.index("code").refresh()
    return list(dict.fromkeys(hit.chunk.ref for hit in workspace.ranked("code", query, k).hits))


def test_the_main_module_of_a_subsystem_beats_a_file_with_one_strong_passage(tmp_path: Path) -> None:
    # The question is about the scheduler as a whole: scheduler.py holds many passages about it, while a
    # helper holds one passage with the most matching words.
    scheduler = "\n\n".join(
        f"def {name}(queue, job):\n    '''{doc}'''\n    return queue.{name}(job)\n"
        for name, doc in (
            ("enqueue", "Put a job on the queue for the scheduler."),
            ("dequeue", "Take the next job the scheduler runs."),
            ("reschedule", "Move a failed job back on the queue with a delay."),
            ("cancel", "Remove a queued job before the scheduler starts it."),
            ("drain", "Run every queued job until the queue is empty."),
        )
    )
    write(
        tmp_path,
        {
            "jobs/scheduler.py": scheduler,
            "jobs/helpers.py": "def queue_jobs_label(jobs):\n    '''Label the jobs of a queue, for the log: how jobs run.'''\n"
            "    return [f'queue {job} runs' for job in jobs]\n",
            **_filler(8),
        },
    )
    query = "how does the scheduler run jobs from the queue"
    assert _search(tmp_path, query)[0] == "jobs/scheduler.py"
    # Without the file order, the one strong passage of the helper comes first.
    assert _search(tmp_path, query, AGENTTY_RAG_FILES="0")[0] == "jobs/helpers.py"


def test_a_bare_name_finds_the_file_that_defines_it_before_the_files_that_use_it(tmp_path: Path) -> None:
    uses = "from .session import Session\n\n" + "\n".join(
        f"def use_{i}():\n    s = Session()\n    s.close()\n    return Session.default()\n" for i in range(6)
    )
    write(
        tmp_path,
        {
            "net/client.py": uses,
            "net/session.py": "import socket\n\n\nclass Session:\n    '''A connection that is reused.'''\n\n"
            "    def close(self):\n        self.sock.close()\n",
            "net/other.py": "def session():\n    return None\n",
        },
    )
    assert _search(tmp_path, "Session")[0] == "net/session.py"


def test_a_question_that_spells_out_an_identifier_finds_it(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            **_filler(8),
            "core/runner.py": "def event_loop(handlers):\n    while True:\n        step(handlers)\n",
            "core/notes.py": "def describe():\n    '''An event is queued; the loop picks it up later. Each event in\n"
            "    turn, the loop wakes a listener for the event.'''\n    return None\n",
        },
    )
    assert _search(tmp_path, "where is the event loop")[0] == "core/runner.py"


def test_filters_hold_for_the_file_order_and_the_definitions_it_adds(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            **_filler(8),
            "go/retry.go": "package retry\n\nfunc Retry(n int) error {\n\treturn nil\n}\n",
            "py/retry.py": "class Retry:\n    '''Retry a call.'''\n    pass\n",
        },
    )
    assert set(_search(tmp_path, "Retry")[:2]) == {"go/retry.go", "py/retry.py"}
    outcome = Workspace(tmp_path, load_settings(LEXICAL)).search_code("Retry", k=5, language="go")
    assert {r["path"] for r in outcome.structured["results"]} == {"go/retry.go"}


def test_a_long_issue_starts_with_the_best_passage(tmp_path: Path) -> None:
    # A big module matches many words of the issue by chance; the one function the issue is about holds
    # its specific words. A long query leads with the passage order.
    big = "\n\n".join(
        f"def handler_{i}(request, response, config, logger):\n    logger.info(request, response, config)\n"
        for i in range(30)
    )
    write(
        tmp_path,
        {
            "app/handlers.py": big,
            "app/encoding.py": "def decode_unicode(content, charset):\n    '''Decode the body with its charset.'''\n"
            "    return content.decode(charset)\n",
        },
    )
    issue = (
        "decode_unicode returns bytes instead of text. When I send a request and read the response with a "
        "config that sets a charset, the logger shows that the request, response and config are fine, but "
        "decode_unicode gives bytes. Steps: make a request, get the response, log the response with the "
        "logger, read the config, call the handler, check the response again, compare with the request."
    )
    assert _search(tmp_path, issue)[0] == "app/encoding.py"


def test_the_query_analysis_reads_names_identifiers_and_length_against_the_real_index(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "core/runner.py": "def event_loop(handlers):\n    while True:\n        step(handlers)\n",
            "core/notes.py": "def describe():\n    return 'an event in the loop'\n",
        },
    )
    index = Workspace(tmp_path, load_settings(LEXICAL)).index("code")
    index.refresh()
    question = parse_query("where is the event loop", index.tokenizer)
    short = analyse_query(index, question, code=True)
    assert "event_loop" in short.weights and not short.long  # an identifier the index holds, spelled out
    assert "event-loop" not in short.weights  # candidates the index does not hold are dropped
    assert analyse_query(index, question, code=False).weights.keys() == {"event", "loop"}
    issue = " ".join(f"word{i}" for i in range(40)) + " Session.update fails"
    long = analyse_query(index, parse_query(issue, index.tokenizer), code=True)
    assert long.long and "Session.update" in long.names and not long.bare_name
    bare = analyse_query(index, parse_query("Rails::Engine", index.tokenizer), code=True)
    assert bare.bare_name and bare.names == ("Engine", "Rails::Engine")


def test_the_name_field_finds_exactly_the_definitions_of_a_name(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "net/session.py": "class Session:\n    def close(self):\n        pass\n\n    def session_id(self):\n"
            "        return 1\n",
            "net/other.py": "def session():\n    return None\n\n\ndef use_session():\n    return session()\n",
        },
    )
    index = Workspace(tmp_path, load_settings(LEXICAL)).index("code")
    index.refresh()
    found = index.chunks(index.defined_as(["session"]))
    assert sorted(c.symbol for c in found.values()) == ["Session", "session"]
    assert index.defined_as(["nothing_like_it"]) == []


def test_a_file_named_with_the_questions_words_leads_a_close_race() -> None:
    profile = _profile(("shell", "completion", "request"))

    def candidate(ref: str, score: float, named_with: float = 0.0) -> Candidate:
        terms = frozenset(profile.terms)
        chunk = _chunk(ref, 1, "handle")
        return Candidate(chunk, score, terms, frozenset(), frozenset(), file_score=score, named_with=named_with)

    bigger = candidate("cli/bash_completions.go", 1.0)
    named = candidate("cli/completions.go", 0.95, named_with=1.0)
    by_file = rank_files(rerank([bigger, named], profile), profile)
    assert by_file[0].candidate is named
    assert dict(by_file[0].contributions)["file named_with_words"] > 0
    # Without the name, the bigger file's evidence leads.
    plain = candidate("cli/completions.go", 0.95)
    assert rank_files(rerank([bigger, plain], profile), profile)[0].candidate is bigger


def test_the_files_named_with_a_questions_words_are_found_on_a_real_index(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            **_filler(8),
            "cli/bash_completions.go": "package cli\n\n// writeBash writes the bash shell completion script.\n"
            "func writeBash(buf []byte) {\n\tbuf = append(buf, 'x')\n}\n",
            "cli/completions.go": "package cli\n\n// handle answers the completion request of a shell.\n"
            "func handle(args []string) []string {\n\treturn args\n}\n",
        },
    )
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    workspace.index("code").refresh()

    def named_parts(query: str) -> dict[str, float]:
        found = workspace.ranked("code", query, 5).explanations
        return {r.candidate.chunk.ref: dict(r.contributions).get("file named_with_words", 0.0) for r in found}

    parts = named_parts("shell completion request handling")
    assert parts["cli/completions.go"] > 0 and parts["cli/bash_completions.go"] == 0
    # A bare name is matched by name (``named_file``), not by words.
    assert named_parts("completions")["cli/completions.go"] == 0


def test_the_definition_of_a_bare_name_leads_its_file(tmp_path: Path) -> None:
    helper = "\n\ndef session():\n    '''Return a Session: Session(), Session.default() or a new Session.'''\n" + (
        "    return Session() or Session.default() or Session.new()\n"
    )
    write(
        tmp_path,
        {
            **_filler(8),
            "net/sessions.py": "class Session:\n    '''A reused connection.'''\n\n    def close(self):\n"
            "        self.sock.close()\n" + helper,
        },
    )
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    workspace.index("code").refresh()
    assert workspace.ranked("code", "Session", 5).hits[0].chunk.symbol == "Session"
    # In a question, the passage order stands: the helper says more about sessions.
    assert workspace.ranked("code", "what returns the default Session", 5).hits[0].chunk.symbol == "session"


def test_a_question_names_its_subject_first(tmp_path: Path) -> None:
    def primitive(name: str) -> str:
        return (
            f"package sync\n\n// {name} guards coroutine synchronization.\nclass {name} {{\n"
            "    fun lock() { state.acquire() }\n    fun unlock() { state.release() }\n}\n"
        )

    write(tmp_path, {**_filler(8), "sync/Mutex.kt": primitive("Mutex"), "sync/Semaphore.kt": primitive("Semaphore")})
    assert _search(tmp_path, "Mutex and Semaphore for coroutine synchronization")[0] == "sync/Mutex.kt"
    assert _search(tmp_path, "Semaphore and Mutex for coroutine synchronization")[0] == "sync/Semaphore.kt"


def test_a_questions_first_name_counts_in_full_and_the_later_ones_half() -> None:
    from agentty_rag.retrieve.candidates import LATER_NAME_SHARE, mention_shares

    assert mention_shares(("Mutex", "Semaphore"), bare_name=False) == (1.0, LATER_NAME_SHARE)
    # Both forms of the first mention (``Engine``, ``Rails::Engine``) are the first name.
    assert mention_shares(("Engine", "Rails::Engine", "Railtie"), bare_name=False) == (1.0, 1.0, LATER_NAME_SHARE)
    assert mention_shares(("Engine", "Rails::Engine"), bare_name=True) == (1.0, 1.0)
    assert mention_shares((), bare_name=False) == ()


def test_a_test_or_an_example_leads_only_when_the_question_asks_for_it(tmp_path: Path) -> None:
    # The test file and the example say the question's words more often than the code that answers it.
    write(
        tmp_path,
        {
            "src/envvars.py": "def resolve_envvar_value(option, environ):\n"
            "    '''The value of an option's environment variable.'''\n"
            "    return environ.get(option.envvar)\n",
            "tests/test_envvars.py": "".join(
                f"def test_option_environment_variable_{i}(environ):\n"
                f"    '''An option reads its environment variable ({i}).'''\n"
                f"    assert resolve_envvar_value(option, environ) == environ['OPTION_{i}']\n"
                for i in range(6)
            ),
            "examples/env_demo.py": "def show_option_environment_variables(environ):\n"
            "    '''Print every option's environment variable.'''\n"
            "    print(environ)\n",
            **_filler(8),
        },
    )
    query = "how does an option read its environment variable"
    files = _search(tmp_path, query, k=4)
    assert files[0] == "src/envvars.py"
    assert files.index("tests/test_envvars.py") > 1 if "tests/test_envvars.py" in files else True
    assert _search(tmp_path, "tests of how an option reads its environment variable", k=4)[0] == "tests/test_envvars.py"
    assert _search(tmp_path, "example that shows option environment variables", k=4)[0] == "examples/env_demo.py"
