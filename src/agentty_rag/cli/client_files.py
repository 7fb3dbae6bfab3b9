"""A client's files before and after ``init``'s edits: each edit merged into the file's text so that only
agentty-rag's own entry changes, the changes shown as a diff, then written atomically.

Nothing is written until every edit has been merged: an unreadable file, invalid JSON or TOML, or an entry
that differs (without ``--force``) stops ``init`` with a ``ClientError`` first.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentty_rag import jsonc
from agentty_rag.cli import clients
from agentty_rag.cli.clients import BLOCK_END, BLOCK_START, Edit, Kind
from agentty_rag.errors import ClientError, Conflict, Unwritable
from agentty_rag.fsguard import UnsafeFile, is_inside, read_regular, write_private

# The largest client file init reads (they are a few kB).
_MAX_BYTES = 4 << 20


@dataclass(frozen=True)
class Change:
    """A file before and after the edits (``None``: the file does not exist, or is deleted)."""

    path: Path
    before: str | None
    after: str | None
    kept: tuple[str, ...] = ()  # uninstall: the entries left because a user changed them (``user_changes``)

    @property
    def changed(self) -> bool:
        return self.before != self.after


def _is_our_hook(item: object) -> bool:
    if not isinstance(item, dict) or not isinstance(item.get("hooks"), list):
        return False
    commands = [h.get("command", "") for h in item["hooks"] if isinstance(h, dict)]
    return any(
        isinstance(c, str) and ("inject" in c or "feedback" in c) and ("agentty-rag" in c or "agentty_rag" in c)
        for c in commands
    )


def _json(edit: Edit, text: str, remove: bool, force: bool) -> str:
    if edit.kind == "json-item":
        current = jsonc.get(text, edit.keys) if text.strip() else None
        present = [item for item in current if _is_our_hook(item)] if isinstance(current, list) else []
        if remove:
            return jsonc.remove_items(text, edit.keys, _is_our_hook) if present else text
        if present == [edit.value]:
            return text
        if present and not force:
            raise Conflict(f"{edit.path}: the agentty-rag hook differs from what init writes")
        if present:
            text = jsonc.remove_items(text, edit.keys, _is_our_hook)
        return jsonc.insert_item(text, edit.keys, edit.value)
    if remove:
        return jsonc.remove_member(text, edit.keys, edit.key) if text.strip() else text
    current = jsonc.get(text, (*edit.keys, edit.key)) if text.strip() else None
    if current is not None and current != edit.value and not force:
        raise Conflict(f"{edit.path}: the {edit.key!r} entry differs from what init writes")
    return text if current == edit.value else jsonc.set_member(text, edit.keys, edit.key, edit.value)


def _toml(edit: Edit, text: str, remove: bool, force: bool) -> str:
    import tomlkit  # only init needs it: the hook and the server start without it
    import tomlkit.exceptions

    try:
        document = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as error:
        raise ClientError(f"{edit.path} is not valid TOML ({error}); fix it or move it aside") from None
    servers = document.get(edit.keys[0])
    current = servers.get(edit.key) if servers is not None else None
    if remove:
        if servers is None or current is None:
            return text
        del servers[edit.key]
        if not servers:
            del document[edit.keys[0]]
        out = tomlkit.dumps(document)
        return out.rstrip("\n") + "\n" if out.strip() else ""
    if current is not None and current.unwrap() == edit.value:
        return text
    if current is not None and not force:
        raise Conflict(f"{edit.path}: [{edit.keys[0]}.{edit.key}] differs from what init writes")
    table = tomlkit.table()
    assert isinstance(edit.value, dict)
    for name, item in edit.value.items():
        table.add(name, item)
    table.add(tomlkit.nl())
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        document.add(edit.keys[0], servers)
    if current is not None:
        del servers[edit.key]
    servers.add(edit.key, table)
    return tomlkit.dumps(document)


def _block(edit: Edit, text: str, remove: bool, force: bool) -> str:
    start, end = text.find(BLOCK_START), text.find(BLOCK_END)
    if start >= 0 and end > start:
        block_end = end + len(BLOCK_END) + (1 if text[end + len(BLOCK_END) :].startswith("\n") else 0)
        present = text[start:block_end]
        if not remove and present == edit.value:
            return text
        if not remove and not force:
            raise Conflict(f"{edit.path}: the agentty-rag block differs from what init writes")
        before = text[:start]
        if before.endswith("\n\n"):
            before = before[:-1]
        text = before + text[block_end:]
    if remove:
        return text
    assert isinstance(edit.value, str)
    if not text.strip():
        return edit.value
    return text + ("" if text.endswith("\n") else "\n") + "\n" + edit.value


def _empty(kind: Kind, text: str) -> bool:
    if kind in ("json-member", "json-item"):
        return jsonc.is_empty(text)
    return not text.strip()


_APPLY: dict[Kind, Callable[[Edit, str, bool, bool], str]] = {
    "json-member": _json,
    "json-item": _json,
    "toml-table": _toml,
    "text-block": _block,
}


def plan(edits: list[Edit], root: Path, *, remove: bool = False, force: bool = False) -> list[Change]:
    """Each touched file before and after its edits; raises ``ClientError`` before anything is written (also
    for a file of the workspace that is, or lies in a folder that is, a link out of it, or is not a regular
    file: a FIFO would block, a link out would be read and then written). Removing, a server entry a user
    changed stays (``Change.kept`` says what changed) unless ``force``."""
    texts: dict[Path, str | None] = {}
    kinds: dict[Path, Kind] = {}
    kept: dict[Path, list[str]] = {}
    for edit in edits:
        if edit.path not in texts:
            texts[edit.path] = _read(edit.path, root)
        kinds[edit.path] = edit.kind
        text = texts[edit.path] or ""
        if remove and texts[edit.path] is None:
            continue
        try:
            changed = _user_changes(edit, text) if remove and not force else []
            if changed:  # opencode's entry is looked for under both its shapes: said once
                noted = kept.setdefault(edit.path, [])
                noted += [] if ", ".join(changed) in noted else [", ".join(changed)]
                continue
            texts[edit.path] = _APPLY[edit.kind](edit, text, remove, force)
        except jsonc.JsoncError as error:
            raise ClientError(f"{edit.path} is not valid JSON ({error}); fix it or move it aside") from None
    changes = []
    for path, after in texts.items():
        before = _read(path, root)
        if remove and after is not None and before is not None and _empty(kinds[path], after):
            after = None
        changes.append(Change(path, before, after, tuple(kept.get(path, ()))))
    return changes


def _user_changes(edit: Edit, text: str) -> list[str]:
    """What a user changed in the server entry ``edit`` would remove ([]: none, or no such entry here)."""
    if edit.kind not in ("json-member", "toml-table") or not text.strip():
        return []
    if edit.kind == "json-member":
        found = jsonc.get(text, (*edit.keys, edit.key))
    else:
        import tomlkit  # as in _toml: only init needs it
        import tomlkit.exceptions

        try:
            servers = tomlkit.parse(text).get(edit.keys[0])
        except tomlkit.exceptions.ParseError:
            return []  # _toml says the file is not valid TOML
        entry = servers.get(edit.key) if servers is not None else None
        found = entry.unwrap() if entry is not None else None
    return [] if found is None else clients.user_changes(found, edit.value)


def holds(edit: Edit, root: Path) -> bool:
    """Whether ``edit``'s file holds its server entry now (a file that cannot be read or parsed holds none)."""
    try:
        text = _read(edit.path, root)
    except ClientError:
        return False
    if not text or not text.strip():
        return False
    if edit.kind == "toml-table":
        import tomllib

        try:
            table = tomllib.loads(text).get(edit.keys[0])
        except tomllib.TOMLDecodeError:
            return False
        return isinstance(table, dict) and edit.key in table
    try:
        return jsonc.get(text, (*edit.keys, edit.key)) is not None
    except jsonc.JsoncError:
        return False


def still_reading_instructions(client: str, root: Path, home: Path | None) -> list[str]:
    """The other clients that have agentty-rag installed here and read ``client``'s instructions file: its
    block stays while one of them does."""
    return [
        other
        for other in clients.sharing_instructions(client)
        if any(holds(entry, root) for entry in clients.server_entries(other, root, home))
    ]


def _target(path: Path, root: Path) -> Path:
    """Where ``path`` really is; ``ClientError`` for a file of the workspace that a link (the file itself, or
    a folder on its way: ``.claude`` -> ``~/.claude``) puts outside it. A file outside the workspace (the
    user's own, in the home folder) may be reached through the user's links."""
    real = Path(os.path.realpath(path))
    real_root = os.path.realpath(root)
    if is_inside(os.path.abspath(path), os.path.abspath(root)) and not is_inside(str(real), real_root):
        raise ClientError(
            f"{path} is, or lies in a folder that is, a link to {real}, outside the workspace; init writes only "
            "inside it — remove the link, or add agentty-rag to that file yourself"
        )
    return real


def _read(path: Path, root: Path) -> str | None:
    target = _target(path, root)
    try:
        data = read_regular(str(target), "", _MAX_BYTES)
    except FileNotFoundError:
        return None
    except UnsafeFile as error:
        raise ClientError(f"{path} is not a regular file ({error}); init edits regular files only") from None
    except OSError as error:
        raise ClientError(f"cannot read {path} ({error.strerror or error})") from None
    if len(data) > _MAX_BYTES:
        raise ClientError(f"{path} is larger than {_MAX_BYTES} bytes; init edits small configuration files only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ClientError(f"cannot read {path} ({error})") from None


def diff(change: Change, shown: str) -> str:
    """The change as a unified diff, with paths as the user knows them."""
    before = (change.before or "").splitlines(keepends=True)
    after = (change.after or "").splitlines(keepends=True)
    old = "/dev/null" if change.before is None else f"a/{shown}"
    new = "/dev/null" if change.after is None else f"b/{shown}"
    lines = difflib.unified_diff(before, after, old, new)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def write(changes: list[Change], stop_at: Path) -> None:
    """Write (or delete) each changed file atomically, where it really is (a link inside the workspace, as
    ``CLAUDE.md`` -> ``AGENTS.md``, keeps pointing at the file it names); folders left empty are removed up to
    ``stop_at`` (the workspace). Never through a link out of the workspace (``plan`` refused it).
    ``Unwritable`` when the system refuses one (immutable, read-only, full), naming the files written before."""
    written: list[Path] = []
    for change in changes:
        if not change.changed:
            continue
        try:
            _write_one(change, stop_at)
        except OSError as error:  # also UnsafeFile: a link swapped in after the plan
            raise Unwritable(change.path, error, written, removing=change.after is None) from None
        written.append(change.path)


def _write_one(change: Change, stop_at: Path) -> None:
    target = _target(change.path, stop_at)
    if change.after is None:
        target.unlink(missing_ok=True)
        _remove_empty_parents(change.path.parent, stop_at)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    _target(change.path, stop_at)  # the folders made are checked again: nothing swapped in meanwhile
    write_private(target, change.after.encode("utf-8"))


def _remove_empty_parents(folder: Path, stop_at: Path) -> None:
    while folder != stop_at and stop_at in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


__all__ = ["Change", "diff", "holds", "plan", "still_reading_instructions", "write"]
