from __future__ import annotations

from agentty_rag.index.lexical.keywords import keywords_for
from agentty_rag.index.lexical.tokenize import Tokenizer, path_words


def test_identifiers_are_kept_whole_and_split() -> None:
    tokens = Tokenizer()
    assert tokens.tokenize("getUserToken") == ["getusertoken", "get", "user", "token"]
    assert tokens.tokenize("parseHTTPResponse") == ["parsehttpresponse", "pars", "http", "respons"]
    assert tokens.tokenize("retry_backoff_max") == ["retry_backoff_max", "retri", "backoff", "max"]
    assert tokens.tokenize("auth.token_ttl") == ["auth.token_ttl", "token_ttl", "auth", "token", "ttl"]
    assert tokens.tokenize("Pool::submit") == ["pool::submit", "pool", "submit"]


def test_error_codes_and_file_names() -> None:
    tokens = Tokenizer()
    assert tokens.tokenize("SHP-4031") == ["shp-4031", "shp", "4031"]
    assert tokens.tokenize("E_LOCK_TIMEOUT") == ["e_lock_timeout", "lock", "timeout"]
    assert tokens.tokenize("src/auth/token_store.py")[:2] == ["src/auth/token_store.py", "token_store"]


def test_prose_is_lowercased_stemmed_and_stopped() -> None:
    assert Tokenizer().tokenize("The Tokens are refreshing every 15 minutes.") == [
        "token",
        "refresh",
        "everi",
        "15",
        "minut",
    ]


def test_query_and_document_agree_on_forms() -> None:
    tokens = Tokenizer()
    assert set(tokens.tokenize("refresh tokens")) <= set(tokens.tokenize("def refreshToken(token):"))


def test_standalone_keywords_are_dropped_but_kept_inside_identifiers() -> None:
    tokens = Tokenizer()
    python = keywords_for("python")
    assert tokens.tokenize("def refresh(self, token): return None", python) == ["refresh", "token"]
    assert tokens.tokenize("delete obj; has_delete_permission", keywords_for("javascript")) == [
        "obj",
        "has_delete_permission",
        "delet",
        "permiss",
    ]
    assert tokens.tokenize("def delete") == ["def", "delet"]  # queries keep every word


def test_non_ascii_words_are_not_split_by_case() -> None:
    assert Tokenizer().tokenize("héllo wörld naïve_approach") == [
        "héllo",
        "wörld",
        "naïve_approach",
        "naïv",
        "approach",
    ]


def test_path_words_drop_the_extension() -> None:
    assert path_words("src/auth/token_store.py") == "src auth token_store"
    assert path_words("Makefile") == "Makefile"
