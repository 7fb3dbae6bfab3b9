"""search_docs on a repository laid out as real ones are, over stdio with the official client: documents found
wherever they are, one language at a time, and every cite opens from the workspace root."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import fenced_passages, write
from tests.conftest import stdio_server as _server
from tests.server.test_server_stdio import _text

pytestmark = pytest.mark.anyio

_PAGES = {
    "tutorial/dependencies.md": (
        "# Dependencies\n\nFastWeb resolves every dependency of a path operation before calling it.\n\n"
        "## Where dependencies are resolved\n\nThe solver walks the dependency graph of the request and caches "
        "each resolved value for the request, so a dependency used twice runs once.\n"
    ),
    "tutorial/openapi.md": (
        "# OpenAPI\n\nThe OpenAPI schema is generated from the routes. Extend the schema with a callback.\n\n"
        "## Custom OpenAPI schema\n\nOverride the generator to add a logo or change the schema title.\n"
    ),
    "index.md": "# FastWeb\n\nA small web framework with dependency injection and OpenAPI.\n",
}
_GERMAN = {
    "tutorial/dependencies.md": (
        "# Abhängigkeiten\n\nFastWeb löst jede Abhängigkeit einer Pfadoperation auf, bevor sie aufgerufen wird.\n\n"
        "## Wo Abhängigkeiten aufgelöst werden\n\nDer Löser durchläuft den Abhängigkeitsgraphen der Anfrage und "
        "speichert jede aufgelöste Abhängigkeit (dependency) für die Anfrage.\n"
    ),
    "tutorial/openapi.md": "# OpenAPI\n\nDas OpenAPI-Schema (schema) wird aus den Routen erzeugt.\n",
    "index.md": "# FastWeb\n\nEin kleines Web-Framework mit Dependency Injection und OpenAPI.\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose docs live in a README, a crate's docs folder and a translated docs tree."""
    root = tmp_path / "repo"
    files: dict[str, str] = {f"docs/en/docs/{page}": text for page, text in _PAGES.items()}
    for lang in ("de", "ja", "tr"):
        files.update({f"docs/{lang}/docs/{page}": text for page, text in _GERMAN.items()})
    write(
        root,
        {
            **files,
            "README.md": "# FastWeb\n\nInstall it with pip. See the docs for dependency injection.\n",
            "crates/web/src/docs/middleware.md": (
                "# Applying middleware\n\nAdd middleware to a whole router with `Router::layer`, or to one route "
                "with `route_layer`. Middleware runs in the order it is added.\n"
            ),
            "crates/web/src/lib.rs": "pub fn router() {}\n",
            "tests/data/sample.md": "# Applying middleware in a sample\n\nTest data, not documentation.\n",
            "node_modules/dep/README.md": "# Applying middleware from a dependency\n",
        },
    )
    return root


def _passages(text: str) -> list[tuple[str, int, int, str]]:
    """Each passage of an answer: (path, first line, last line, its text)."""
    found = []
    for block in fenced_passages(text)[0]:
        head, _, body = block.partition("\n")
        match = re.match(r"\[\d+\] docs:(\S+?):(\d+)-(\d+)", head)
        assert match is not None, head
        found.append((match.group(1), int(match.group(2)), int(match.group(3)), body.strip()))
    return found


def _opens(root: Path, passages: list[tuple[str, int, int, str]]) -> None:
    """Every cited span opens from the workspace root and holds the passage's lines, in order."""
    for path, start, end, body in passages:
        lines = (root / path).read_text(encoding="utf-8").splitlines()[start - 1 : end]
        assert lines, f"{path}:{start}-{end} is not in the file"
        at = 0
        for line in (line for line in body.splitlines() if line.strip() and line.strip() != "…"):
            while at < len(lines) and line.strip() not in lines[at]:
                at += 1
            assert at < len(lines), f"{line!r} is not in {path}:{start}-{end}"


async def _ask(client: Client, query: str, **arguments: Any) -> str:
    result = await client.call_tool("search_docs", {"query": query, **arguments})
    assert not result.is_error, _text(result)
    return _text(result)


async def test_every_cite_opens_from_the_root_in_one_language_with_no_copies(repo: Path) -> None:
    async with Client(_server(repo)) as client:
        english = await _ask(client, "where are dependencies resolved for a request")
        openapi = await _ask(client, "customize the OpenAPI schema")
        middleware = await _ask(client, "how do I add middleware to a router")
        readme = await _ask(client, "how do I install it")
    for answer in (english, openapi, middleware, readme):
        passages = _passages(answer)
        assert passages, answer
        _opens(repo, passages)
        assert all(not re.match(r"docs/(de|ja|tr)/", path) for path, *_ in passages), answer
        sections = [re.sub(r"^docs/[a-z]{2}/", "", path) for path, *_ in passages]
        assert len({(s, p[1]) for s, p in zip(sections, passages, strict=True)}) == len(passages)
    assert _passages(english)[0][0] == "docs/en/docs/tutorial/dependencies.md"
    assert _passages(middleware)[0][0] == "crates/web/src/docs/middleware.md"
    assert not any(p[0].startswith(("tests/", "node_modules/")) for p in _passages(middleware))
    assert _passages(readme)[0][0] == "README.md"


async def test_a_question_in_german_is_answered_from_the_german_docs(repo: Path) -> None:
    async with Client(_server(repo)) as client:
        german = await _ask(client, "Wo werden die Abhängigkeiten einer Anfrage aufgelöst?")
        scoped = await _ask(client, "OpenAPI schema", scope="docs/de")
        english = await _ask(client, "where are dependencies resolved for a request")
    passages = _passages(german)
    assert passages and all(path.startswith("docs/de/") for path, *_ in passages), german
    _opens(repo, passages)
    assert json.loads((repo / ".agentty" / "languages.json").read_text()) == {"asked": ["de"]}
    assert all(path.startswith("docs/de/") for path, *_ in _passages(scoped)), scoped
    assert all(not path.startswith("docs/de/") for path, *_ in _passages(english)), english


def test_status_says_where_the_documents_were_found_and_which_translations_were_left_out(repo: Path) -> None:
    script = Path(sys.executable).with_name("agentty-rag")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "agentty_rag"]
    shown = subprocess.run(
        [*command, "--root", str(repo), "status"], capture_output=True, text=True, check=True, timeout=600
    ).stdout
    assert "docs: every document under ./ — 5 files" in shown
    assert "found in: docs/ 3, ./ 1, crates/web/src/docs/ 1" in shown
    assert "translations not indexed: de 3, ja 3, tr 3" in shown
