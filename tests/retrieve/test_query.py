"""What a query says besides its words: term weights, asked names, identifiers, compounds, the words a file
may be named with."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.index.lexical.tokenize import STOPWORDS_EN
from agentty_rag.retrieve.query import (
    asked_names,
    compound_candidates,
    definition_match,
    lexical_lean,
    looks_like_identifier,
    named_file,
    named_with,
    opening_words,
    query_identifiers,
    query_phrases,
    question_words,
    term_weights,
)


def test_a_repeated_term_gains_weight_with_saturation() -> None:
    weights = term_weights(["parser", "parser", "parser", "parser", "cache"])
    assert weights["cache"] == 1.0
    assert 1.0 < weights["parser"] < 2.2  # four uses count for less than four times one


@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=30))
def test_weights_grow_with_the_count_and_stay_bounded(terms: list[str]) -> None:
    weights = term_weights(terms)
    for term, weight in weights.items():
        assert 1.0 <= weight < 2.2
        assert weight >= term_weights(terms[: terms.index(term) + 1])[term]


def test_the_opening_terms_count_more_only_when_asked() -> None:
    assert term_weights(["separ", "matrix"], ["separ"], 0.0) == {"separ": 1.0, "matrix": 1.0}
    boosted = term_weights(["separ", "matrix"], ["separ"], 1.0)
    assert boosted["separ"] == 2.0 and boosted["matrix"] == 1.0


def test_the_opening_words_are_the_first_ones() -> None:
    assert opening_words("Linting fails  if\nmodule contains a module", 3) == "Linting fails if"


def test_a_query_that_is_one_identifier_asks_for_its_definition() -> None:
    assert asked_names("Command") == (("Command",), True)
    assert asked_names("  basic_format_args  ") == (("basic_format_args",), True)
    assert asked_names("Rails::Engine") == (("Engine", "Rails::Engine"), True)
    assert asked_names("formatter") == (("formatter",), True)
    assert asked_names("`get_model()`") == (("get_model",), True)


def test_a_question_mentions_identifiers_and_capitalised_type_names() -> None:
    names, bare = asked_names("how Session.request builds a Request with get_adapter")
    assert not bare
    assert names == ("request", "Session.request", "Request", "get_adapter")
    assert asked_names("how are routes registered") == ((), False)


def test_definition_match_prefers_the_same_case_and_agreeing_qualifier() -> None:
    assert definition_match("Rails.Engine", ["Engine", "Rails::Engine"]) == 1.0
    assert definition_match("Other.Engine", ["Rails::Engine"]) == 0.75
    assert definition_match("session", ["Session"]) == 0.5
    assert definition_match("Session.request", ["Session"]) == 0.0
    assert definition_match("", ["Session"]) == 0.0


def test_a_file_named_after_the_asked_name() -> None:
    assert named_file("Sources/Vapor/Request/Request.swift", ["Request"]) == 1.0
    assert named_file("requests/sessions.py", ["Session"]) == 0.5
    assert named_file("lib/rails/engine.rb", ["Rails::Engine"]) == 0.5
    assert named_file("include/fmt/base-format.h", ["base_format"]) == 0.5
    assert named_file("src/router.ts", ["Request"]) == 0.0


def test_compound_candidates_join_adjacent_words_as_identifiers_would() -> None:
    found = compound_candidates("the type adapter factories for a JSON object", STOPWORDS_EN)
    assert "typeadapter" in found and "type_adapter" in found and "type-adapter" in found
    assert "typeadapterfactory" in found and "adapter_factories" in found
    assert "jsonobject" in found
    assert not any(c.startswith("the") or c.endswith("for") for c in found)


def test_identifiers_are_told_from_plain_words() -> None:
    words = ("get_model", "getModel", "SHP-4031", "auth.ttl", "Rails::Engine", "io/ascii", "simple", "HTTP", "ab")
    assert [looks_like_identifier(w) for w in words] == [True, True, True, True, True, True, False, True, False]
    # Without error codes and constants: what a question may ask the definition of.
    assert [looks_like_identifier(w, codes=False) for w in words] == [True, True, False, True, True, True] + [False] * 3


def test_a_question_asks_for_qualified_names_but_not_for_constants() -> None:
    assert asked_names("where is App\\Http\\Kernel booted")[0] == ("Kernel", "App\\Http\\Kernel")
    assert asked_names("what calls Foo#bar") == (("bar", "Foo#bar"), False)
    assert asked_names("why does the HTTP client retry") == ((), False)


def test_identifiers_and_phrases_the_reranker_looks_for() -> None:
    assert query_identifiers("why does `retry` call getUserToken twice?") == ("retry", "getusertoken")
    assert query_identifiers("where is SHP-4031 raised") == ("shp-4031",)
    assert query_phrases('where is "pool is shutting down" raised') == ("pool is shutting down",)


def test_backslashed_names_do_not_lean_a_query_lexical() -> None:
    # The fusion's lean counts identifiers and error codes; a backslash alone does not make one.
    assert lexical_lean("App\\Http\\Kernel") == 0.0
    assert lexical_lean("HTTP SHP-4031") == 1.0


def test_counts_can_be_ignored() -> None:
    assert term_weights(["a", "a", "b"], by_count=False) == {"a": 1.0, "b": 1.0}


def test_the_prose_words_a_file_may_be_named_with() -> None:
    assert question_words("how are the Shell completions requested?", STOPWORDS_EN) == (
        "shell",
        "completions",
        "requested",
    )
    # A name the question asks for is left out: a file named after it has its own evidence.
    assert question_words("how pandoc handles PandocMonad errors", STOPWORDS_EN, ("PandocMonad",)) == (
        "handles",
        "errors",
    )
    assert question_words("is it ok", STOPWORDS_EN) == ()


def test_a_file_named_with_the_questions_words() -> None:
    words = question_words("shell completion request handling", STOPWORDS_EN)
    assert named_with("completions.go", words) == 1.0  # a plural of one of its words
    assert named_with("bash_completions.go", words) == 0.0  # "bash" is not in the question
    assert named_with("application/routes_reloader.rb", ("application", "routes", "reloader")) == 1.0
    assert named_with("web/CompletionRequest.tsx", words) == 1.0  # camelCase stems are split too
    assert named_with("server/deploy/deployments.py", ("deploy", "form")) == 0.0  # a longer word is another
    assert named_with("src/fs-poll.c", ("poll",)) == 0.0  # every word of the stem must be in the question
    assert named_with("completions.go", ()) == 0.0


def _words(alphabet: str) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=3, max_size=8).filter(lambda w: w not in STOPWORDS_EN)


# Two alphabets without "s": no word of one is a word, a singular or a plural of the other's.
_FIRST, _SECOND = "abcdefghijklm", "nopqrtuvwxyz"


@given(st.lists(_words(_FIRST), min_size=1, max_size=4, unique=True), _words(_SECOND))
def test_a_stem_made_of_the_questions_words_in_any_order_is_named_with_them(stem: list[str], other: str) -> None:
    question = question_words(" ".join(reversed(stem)), STOPWORDS_EN)
    assert named_with("pkg/" + "_".join(stem) + ".py", question) == 1.0
    assert named_with("pkg/" + "_".join([*stem, other]) + ".py", question) == 0.0
