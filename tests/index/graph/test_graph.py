"""The index's graph (GraphRAG): links read from real files, its bounds, its freshness after an edit, and what
happens when its file is missing, damaged or cannot be written."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.graph.links import Refs, doc_targets, imports
from agentty_rag.index.graph.model import MAX_LINKS, MAX_SIMILAR, Graph
from agentty_rag.index.graph.store import Loaded, forget, graph_of, graph_path, read
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, write

_OPEN: list[Workspace] = []


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget()
    yield
    forget()
    while _OPEN:
        _OPEN.pop().close()


def _index(root: Path, name: str, **env: str) -> CorpusIndex:
    workspace = Workspace(root, load_settings({**LEXICAL, **env}))
    _OPEN.append(workspace)
    index = workspace.index(name)
    index.refresh()
    return index


def _graph(index: CorpusIndex, max_chunks: int = 100_000) -> Loaded:
    with index.reading():
        return graph_of(index, max_chunks)


def _graph_of(index: CorpusIndex) -> Graph:
    graph = _graph(index).graph
    assert graph is not None
    return graph


def _docs(tmp_path: Path) -> CorpusIndex:
    shutil.copytree(FIXTURES / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns(".agentty"))
    return _index(tmp_path, "docs", AGENTTY_DOCS_DIR="docs", AGENTTY_RAG_SKILLS="0", AGENTTY_RAG_MEMORY="0")


# -- links read from text ------------------------------------------------------------------------------------


def test_link_targets_of_markdown_and_restructuredtext_leave_web_addresses_out() -> None:
    text = (
        "See [the guide](guide/a.md#top) and [site](https://example.com).\n[ref]: ../b.md\n"
        ":doc:`install` and `Title <other.rst>`_\n.. include:: part.rst\n[anchor](#here)\n"
    )
    assert doc_targets(text) == ["guide/a.md#top", "../b.md", "other.rst", "install", "part.rst"]


def test_python_imports_resolve_absolute_relative_and_parenthesised_forms() -> None:
    refs = Refs(["pkg/__init__.py", "pkg/a.py", "pkg/sub/b.py", "pkg/sub/c.py", "lib/util.py", "other/util.py"])
    text = "import pkg.a\nfrom .c import (\n    x,\n    y)\nfrom ..a import z\nfrom util import w\nimport json\n"
    # ``util`` names two files: it links neither
    assert imports("pkg/sub/b.py", text, refs) == ["pkg/sub/c.py", "pkg/a.py", "pkg/a.py"]


def test_a_script_import_resolves_by_its_relative_path() -> None:
    refs = Refs(["web/src/api/client.ts", "web/src/app.ts", "web/src/ui/index.tsx"])
    text = "import { get } from './api/client';\nconst ui = require('./ui')\nimport x from 'react'\n"
    assert imports("web/src/app.ts", text, refs) == ["web/src/api/client.ts", "web/src/ui/index.tsx"]


# -- the graph of real fixture files -------------------------------------------------------------------------


def test_the_fixture_docs_link_where_their_markdown_links_point(tmp_path: Path) -> None:
    graph = _graph_of(_docs(tmp_path))
    # docs/getting-started/install.md: "the [Docker image](docker.md) is the fastest", and README links to it;
    # every path is read from the workspace root
    assert ("docs/getting-started/docker.md", "link", 1.0) in graph.links["docs/getting-started/install.md"]
    # and backwards, at half weight
    assert ("docs/getting-started/install.md", "linked from", 0.5) in graph.links["docs/getting-started/docker.md"]
    assert graph.community["docs/getting-started/install.md"] == graph.community["docs/getting-started/docker.md"]


def test_the_fixture_code_links_a_python_import_both_ways(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "code", tmp_path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".agentty"))
    graph = _graph_of(_index(tmp_path, "code"))
    # server/main.py: "from server.config import load_config"
    assert ("server/config.py", "import", 1.0) in graph.links["server/main.py"]
    assert ("server/main.py", "imported by", 0.5) in graph.links["server/config.py"]
    # server/api/handlers.py: "from server.auth.tokens import TokenError, TokenExpired, TokenStore"
    assert ("server/auth/tokens.py", "import", 1.0) in graph.links["server/api/handlers.py"]
    assert not any(target.startswith("docs/") for found in graph.links.values() for target, _, _ in found)


def test_every_file_and_passage_keeps_at_most_its_cap_of_edges(tmp_path: Path) -> None:
    # forty modules that each import all the others, and share their vocabulary
    names = [f"mod{i:02d}" for i in range(40)]
    files = {
        f"pkg/{name}.py": "".join(f"from pkg.{other} import thing\n" for other in names if other != name)
        + f"def {name}_handler(request):\n    return render_widget(request, 'gizmo sprocket flange')\n"
        for name in names
    }
    write(tmp_path, files)
    loaded = _graph(_index(tmp_path, "code"))
    graph = loaded.graph
    assert graph is not None
    assert loaded.done.startswith("built in ")
    assert len(graph.links) == 40
    assert all(len(found) <= MAX_LINKS for found in graph.links.values())
    assert all(len(found) <= MAX_SIMILAR for found in graph.similar.values())
    # the strongest first, ties by path: mod00's first eight others
    assert [target for target, _, _ in graph.links["pkg/mod00.py"]] == [f"pkg/mod{i:02d}.py" for i in range(1, 9)]


def test_an_index_over_the_size_cap_gets_no_graph(tmp_path: Path) -> None:
    index = _docs(tmp_path)
    loaded = _graph(index, max_chunks=10)
    assert loaded.graph is None and loaded.too_large.endswith(" passages, over the cap of 10")
    assert not graph_path(index).exists()


# -- persistence and freshness -------------------------------------------------------------------------------

MODULES = {
    "app/main.py": "from app.store import save\nfrom app.views import show\n\ndef main():\n    save(show())\n",
    "app/store.py": "def save(value):\n    return value\n",
    "app/views.py": "def show():\n    return 'page'\n",
    "app/cache.py": "def remember(key):\n    return key\n",
    "app/jobs.py": "from app.store import save\n\ndef run():\n    save(1)\n",
}


def test_the_graph_is_kept_beside_the_index_and_read_back_by_the_next_process(tmp_path: Path) -> None:
    write(tmp_path, MODULES)
    index = _index(tmp_path, "code")
    built = _graph(index)
    assert built.done.startswith("built in ")
    assert graph_path(index).is_file()
    forget()  # a new process: nothing in memory
    again = _graph(index)
    assert again.done == ""  # read from its file, not built
    assert again.graph is not None and built.graph is not None
    assert again.graph.links == built.graph.links and again.graph.similar == built.graph.similar


def test_an_edited_file_gets_new_edges_and_the_others_keep_theirs(tmp_path: Path) -> None:
    write(tmp_path, MODULES)
    index = _index(tmp_path, "code")
    before = _graph_of(index)
    assert [t for t, _, _ in before.links["app/main.py"]] == ["app/store.py", "app/views.py"]
    write(tmp_path, {"app/main.py": "from app.cache import remember\n\ndef main():\n    remember(1)\n"})
    index.refresh()
    loaded = _graph(index)
    after = loaded.graph
    assert after is not None
    assert loaded.done.endswith("; the index changed)")
    assert after.fingerprint != before.fingerprint
    assert [t for t, _, _ in after.links["app/main.py"]] == ["app/cache.py"]
    assert after.links["app/cache.py"] == (("app/main.py", "imported by", 0.5),)
    assert "app/views.py" not in after.links  # its only link was the edited file's import
    assert after.links["app/jobs.py"] == before.links["app/jobs.py"]  # untouched: kept
    stored, problem = read(graph_path(index), index.config.seal_key)
    assert problem == "" and stored is not None and stored.fingerprint == after.fingerprint


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (b"0123\n{not json", "the stored graph was damaged"),
        (b"", "the stored graph was damaged"),
    ],
)
def test_a_damaged_graph_file_is_rebuilt_and_rewritten(tmp_path: Path, damage: bytes, reason: str) -> None:
    write(tmp_path, MODULES)
    index = _index(tmp_path, "code")
    first = _graph_of(index)
    graph_path(index).write_bytes(damage)
    forget()
    loaded = _graph(index)
    assert loaded.done.endswith(f"; {reason})")
    assert loaded.graph is not None and loaded.graph.links == first.links
    assert read(graph_path(index), index.config.seal_key)[0] is not None  # rewritten whole


def test_a_graph_file_that_cannot_be_written_leaves_the_graph_in_memory(tmp_path: Path) -> None:
    write(tmp_path, MODULES)
    index = _index(tmp_path, "code")
    graph_path(index).mkdir()  # a folder where the file belongs
    loaded = _graph(index)
    assert "kept in memory" in loaded.done and "is a folder" in loaded.done
    assert loaded.graph is not None and ("app/store.py", "import", 1.0) in loaded.graph.links["app/main.py"]
    assert _graph(index).done == ""  # then used from memory, not built again


def test_a_graph_is_a_value_of_the_index_state(tmp_path: Path) -> None:
    write(tmp_path, MODULES)
    first = _graph_of(_index(tmp_path, "code"))
    shutil.rmtree(tmp_path / ".agentty")
    forget()
    second = _graph_of(_index(tmp_path, "code"))
    assert isinstance(second, Graph)
    assert (second.links, second.similar, second.community) == (first.links, first.similar, first.community)


def test_a_state_folder_linking_out_of_the_workspace_never_gets_a_graph_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"rag_code.ragdb": "not ours"})
    root = tmp_path / "repo"
    write(root, MODULES)
    (root / ".agentty").symlink_to(outside, target_is_directory=True)
    outcome = Workspace(root, load_settings({**LEXICAL, "AGENTTY_RAG_GRAPH": "1"}))
    _OPEN.append(outcome)
    found = outcome.search_code("save the value", k=3)
    assert found.structured["results"]
    assert sorted(p.name for p in outside.iterdir()) == ["rag_code.ragdb"]
