"""Which secrets are redacted where (``sources.secrets``): high-confidence formats everywhere, keyword-only
matches in prose kept when they are plainly a tutorial's example, code unchanged."""

from __future__ import annotations

import pytest

from agentty_rag.sources.secrets import redact

# Made up, each in its format: none is a real credential (assembled so that no literal token sits here).
GHP = "ghp_" + "Zq8Rt2Lm9Vx4Kp7Wn3Hc6Jd1Fs5Gb0Ty8UeA"
AKIA = "AKIA" + "QZ7" * 5 + "X"
KEY_BODY = "\n".join("MIIEow" + "Q" * 58 for _ in range(3))
PRIVATE_KEY = f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----"
TUTORIAL_KEY = "09d25e094faa6ca2556c818166b7a9563b93f7099f6f0f4caa6cf63b88e8d3e7"
# The keyword-only secrets of the hardening tests (tests/test_hostile_repository.py).
PASSWORD = "hunter2-Wobble-77"
AWS_SECRET = "Qw7/Er9+Ty2Ui4Op6As8Df0Gh1Jk3Lz5Xc7Vb9Nm"
URL_PASSWORD = "Pg-Adm1n-S3cret"

PROSE_KINDS = ("docs", "skill", "memory", "mcp")


def _fenced(language: str, body: str) -> str:
    return f"# Tutorial\n\nCreate the settings:\n\n```{language}\n{body}\n```\n\nThen run it.\n"


@pytest.mark.parametrize("kind", PROSE_KINDS)
@pytest.mark.parametrize(
    "line",
    [
        '"hashed_password": "fakehashedsecret"',
        '"hashed_password": "fakehashedsecret2"',
        'password = "test-password-1"',
        'api_token = "demo_token_123"',
    ],
)
def test_a_short_example_value_in_prose_is_kept(kind: str, line: str) -> None:
    assert (
        redact(f"Send the user's data, like {line}.\n", kind, "markdown").text
        == f"Send the user's data, like {line}.\n"
    )


@pytest.mark.parametrize("line", ['"hashed_password": "fakehashedsecret2"', 'password = "test-password-1"'])
def test_the_same_example_value_in_code_is_still_redacted(line: str) -> None:
    assert "[redacted Secret Keyword]" in redact(f"{line}\n", "code").text
    assert "[redacted Secret Keyword]" in redact(f"{line}\n").text  # code is what a caller gets by default


def test_an_example_value_of_24_characters_or_more_is_redacted_even_in_prose() -> None:
    assert "[redacted" in redact('password = "fake-but-l0ng-en0ugh-to-be-real"\n', "docs", "markdown").text


@pytest.mark.parametrize("language", ["python", "Python", "py", "js", "typescript", "go", "{.python}"])
def test_a_tutorial_key_in_a_fenced_program_of_a_markdown_doc_is_shown(language: str) -> None:
    text = _fenced(language, f'SECRET_KEY = "{TUTORIAL_KEY}"\nALGORITHM = "HS256"')
    assert redact(text, "docs", "markdown").text == text
    assert redact(text, "skill", "markdown").text == text


@pytest.mark.parametrize(
    "language", ["", "bash", "sh", "console", "env", "dotenv", "yaml", "toml", "ini", "json", "text", "properties"]
)
def test_a_keyword_secret_in_a_shell_or_configuration_block_is_redacted(language: str) -> None:
    """Where real secrets get pasted into docs: an environment, a shell session, a configuration file."""
    text = _fenced(language, f'SECRET_KEY = "{TUTORIAL_KEY}"')
    assert TUTORIAL_KEY not in redact(text, "docs", "markdown").text


@pytest.mark.parametrize("kind", ["memory", "mcp"])
def test_a_fenced_block_keeps_nothing_in_memory_facts_or_mcp_resources(kind: str) -> None:
    """An agent's memory or another server's resource is not a tutorial someone wrote for readers."""
    text = _fenced("python", f'SECRET_KEY = "{TUTORIAL_KEY}"')
    assert TUTORIAL_KEY not in redact(text, kind, "markdown").text


def test_a_fence_counts_only_in_markdown_and_only_when_it_closes() -> None:
    fenced = _fenced("python", f'SECRET_KEY = "{TUTORIAL_KEY}"')
    assert TUTORIAL_KEY not in redact(fenced, "docs", "text").text  # a plain-text or RST doc has no fences
    unclosed = f'# Setup\n\n```python\nSECRET_KEY = "{TUTORIAL_KEY}"\n'  # an open fence would cover the rest
    assert TUTORIAL_KEY not in redact(unclosed, "docs", "markdown").text
    after = fenced + f'\nSECRET_KEY = "{TUTORIAL_KEY}"\n'  # the prose after a closed block
    assert redact(after, "docs", "markdown").text.count(TUTORIAL_KEY) == 1
    shorter = f'````python\nx = 1\n```\nSECRET_KEY = "{TUTORIAL_KEY}"\n'  # ``` does not close ````
    assert TUTORIAL_KEY not in redact(shorter, "docs", "markdown").text


def test_a_fenced_python_block_in_code_is_still_redacted() -> None:
    docstring = f'"""Example:\n\n```python\nSECRET_KEY = "{TUTORIAL_KEY}"\n```\n"""\n'
    assert TUTORIAL_KEY not in redact(docstring, "code").text


@pytest.mark.parametrize("secret", [GHP, AKIA, PRIVATE_KEY])
@pytest.mark.parametrize("kind", PROSE_KINDS)
def test_a_high_confidence_format_is_redacted_in_prose_even_inside_a_fenced_program(kind: str, secret: str) -> None:
    for text in (
        _fenced("python", f'TOKEN = """{secret}"""'),
        _fenced("python", f'example_fake_token = "{secret}"'),
        f"Use {secret} for the demo.\n",
    ):
        redacted = redact(text, kind, "markdown").text
        assert all(line not in redacted for line in secret.splitlines()), redacted


@pytest.mark.parametrize("kind", PROSE_KINDS)
def test_the_hardening_tests_keyword_secrets_stay_redacted_in_prose_outside_program_blocks(kind: str) -> None:
    text = (
        f'The admin password = "{PASSWORD}".\n\n'
        f'```yaml\nAWS_SECRET: "{AWS_SECRET}"\n```\n\n'
        f"Connect to postgres://admin:{URL_PASSWORD}@db.internal:5432/app.\n\n"
        f"```python\nDATABASE_URL = 'postgres://admin:{URL_PASSWORD}@db.internal:5432/app'\n```\n"
    )
    redacted = redact(text, kind, "markdown")
    for value in (PASSWORD, AWS_SECRET, URL_PASSWORD):
        assert value not in redacted.text
    assert redacted.found == {"Secret Keyword": 2, "Basic Auth Credentials": 2}


def test_redaction_in_prose_keeps_every_line_number() -> None:
    text = _fenced("bash", f"export TOKEN='{TUTORIAL_KEY}'") + PRIVATE_KEY + "\nlast line\n"
    assert redact(text, "docs", "markdown").text.count("\n") == text.count("\n")
