"""This machine's index key: made once under the user's state folder, readable by its owner only, the same
for every process, never taken through a link."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

from agentty_rag.state.machine_key import KEY_BYTES, key_path, machine_key

_PRINT_KEY = (
    "import sys; from pathlib import Path; from agentty_rag.state.machine_key import machine_key; "
    "sys.stdout.write(machine_key(Path(sys.argv[1])).hex())"
)


def test_processes_making_the_key_at_once_agree_on_one_kept_for_its_owner_only(tmp_path: Path) -> None:
    state = tmp_path / "state"
    makers = [
        subprocess.Popen([sys.executable, "-c", _PRINT_KEY, str(state)], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    keys = {maker.communicate(timeout=60)[0] for maker in makers}
    assert len(keys) == 1 and len(bytes.fromhex(keys.pop())) == KEY_BYTES
    path = key_path(state)
    assert path is not None and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [entry.name for entry in path.parent.iterdir()] == ["index.key"]  # no temporary file left
    assert machine_key(state) == path.read_bytes()


def test_a_key_file_that_is_a_link_or_not_a_key_is_not_used_and_left_alone(tmp_path: Path) -> None:
    linked, short = tmp_path / "linked", tmp_path / "short"
    for state in (linked, short):
        (state / "agentty-rag").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"k" * KEY_BYTES)
    (linked / "agentty-rag" / "index.key").symlink_to(elsewhere)
    (short / "agentty-rag" / "index.key").write_bytes(b"too short")
    for state in (linked, short):
        key = machine_key(state)
        assert len(key) == KEY_BYTES and key != b"k" * KEY_BYTES  # a key of this process alone
    assert elsewhere.read_bytes() == b"k" * KEY_BYTES
    assert (short / "agentty-rag" / "index.key").read_bytes() == b"too short"


def test_without_a_state_folder_the_process_has_a_key_of_its_own() -> None:
    assert key_path(None) is None and machine_key(None) == machine_key(None) and len(machine_key(None)) == KEY_BYTES
