"""After a patch, the views a search reads (which file each chunk is in, the files' statistics) are exactly
those a fresh process reads from the database: updated in place for an edit, worked out again otherwise."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agentty_rag.config import load_settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write

FILES = {
    f"src/mod_{i}.py": "\n\n".join(f"def handler_{i}_{j}(request):\n    return request.value + {j}\n" for j in range(4))
    for i in range(6)
}


def _index(root: Path) -> CorpusIndex:
    return Workspace(root, load_settings({**LEXICAL, "AGENTTY_RAG_REBUILD_FRACTION": "1"})).index("code")


def _groups(index: CorpusIndex) -> dict[str, list[int]]:
    groups = index.file_groups()
    return {ref: sorted(groups.slots_of(i).tolist()) for i, ref in enumerate(groups.refs)}


def _same_as_a_fresh_process(index: CorpusIndex, root: Path) -> None:
    store = index._mirror.store()
    assert int(store.meta()["vocab_size"]) == store.vocab_size()  # the header's count, kept by each patch
    fresh = _index(root)
    fresh.refresh()
    assert _groups(index) == _groups(fresh)
    terms = {"handler": 1.0, "request": 1.0, "value": 1.0}
    mine, theirs = index.lexical_scores(terms, files=True), fresh.lexical_scores(terms, files=True)
    slots, files = np.arange(len(index._mirror.lexical.alive)), range(len(mine.groups.refs))
    assert np.array_equal(mine.at(slots), theirs.at(slots))
    assert [mine.of_file(f) for f in files] == [theirs.of_file(f) for f in files]


def test_an_edit_a_new_file_and_a_removal_each_leave_the_views_a_fresh_process_reads(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    index = _index(tmp_path)
    index.refresh()
    _groups(index)  # the views are in use
    write(tmp_path, {"src/mod_2.py": "def renamed_handler(request):\n    return request.other\n"})
    index.refresh()
    _same_as_a_fresh_process(index, tmp_path)
    write(tmp_path, {"src/mod_9.py": "def brand_new(request):\n    return 1\n"})
    index.refresh()
    _same_as_a_fresh_process(index, tmp_path)
    (tmp_path / "src" / "mod_4.py").unlink()
    index.refresh()
    _same_as_a_fresh_process(index, tmp_path)
    write(tmp_path, {"src/mod_1.py": ""})  # an edit that leaves a file with no chunk
    index.refresh()
    _same_as_a_fresh_process(index, tmp_path)
