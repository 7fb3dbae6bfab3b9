"""Where an index lives: its database under ``.agentty/``, or memory when the files there cannot be used.

A database whose last writer died mid-update is checked before use, and one found corrupt is emptied in
place under the update lock (after checking again) and rebuilt. When the folder or a file in it cannot be
used safely (a link out, read-only, a folder in the way), the index is kept in memory for the rest of the
process, and the next search says so.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from agentty_rag.errors import IndexCorrupt, IndexUnwritable
from agentty_rag.fsguard import UnsafeFile
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.lock import exclusive, unfinished_update
from agentty_rag.index.storage.manifest import manifest_problem
from agentty_rag.index.storage.notes import Notes
from agentty_rag.index.storage.store import FOREIGN_REPLACED, Store
from agentty_rag.state.folder import make as make_state_dir


class Storage:
    """The open database of one index, on disk or in memory."""

    def __init__(self, config: IndexConfig, notes: Notes) -> None:
        self.config = config
        self._notes = notes
        self._store: Store | None = None
        self.on_disk = config.persist  # False once the files under .agentty/ turned out unusable
        self.problem = ""  # why the index lives in memory although it should be on disk

    def open(self) -> Store:
        """The database, opened on first use."""
        if self._store is not None:
            return self._store
        if not self.on_disk:
            self._store = Store(Path(":memory:"), self.config.seal_key)
            return self._store
        try:
            self._store = self._open_on_disk()
        except IndexUnwritable as error:
            self._keep_in_memory(error)
            self._store = Store(Path(":memory:"), self.config.seal_key)
        return self._store

    def _open_on_disk(self) -> Store:
        """The database under ``.agentty/``: checked when its last writer died mid-update, rebuilt when corrupt.

        Raises:
            IndexUnwritable: the folder or a file in it cannot be used safely (a link out, read-only ...).
        """
        config = self.config
        try:
            make_state_dir(config.state_dir)
        except UnsafeFile as error:
            raise IndexUnwritable(str(error)) from None
        except OSError as error:
            raise IndexUnwritable(f"{config.state_dir} cannot be created ({error.strerror})") from None
        problem = manifest_problem(config.manifest_path)
        if problem:
            self._notes.note(f"{config.manifest_path.name}: {problem}; rebuilding the {config.name} index")
            with exclusive(config.lock_path, config.lock_timeout_s):
                self._empty()
        died_mid_update = unfinished_update(config.lock_path)  # read before this process takes the lock
        try:
            return self._checked(died_mid_update)
        except IndexCorrupt:
            with exclusive(config.lock_path, config.lock_timeout_s):
                try:  # again, under the lock: another process may have rebuilt it meanwhile
                    return self._checked(died_mid_update)
                except IndexCorrupt as error:
                    self._notes.note(f"{error}; rebuilding the {config.name} index")
                    self._empty()
            return Store(config.db_path, config.seal_key, config.lock_timeout_s)

    def _checked(self, died_mid_update: bool) -> Store:
        """The database opened, and checked whole when its last writer died mid-update."""
        config = self.config
        store = Store(config.db_path, config.seal_key, config.lock_timeout_s)
        try:
            if died_mid_update:
                store.quick_check()
        except IndexCorrupt:
            store.close()
            raise
        return store

    def _empty(self, foreign: bool = False) -> None:
        """Empty the database file in place (the caller holds the update lock): a process that has it open
        reads the empty index next and rebuilds it, where a deleted file would stay its own. A file SQLite
        cannot open or write at all, which no process can be using, is deleted instead.

        Raises:
            IndexUnwritable: neither can be done (a read-only folder).
        """
        path, timeout_s = self.config.db_path, self.config.lock_timeout_s
        try:
            Store.empty_in_place(path, timeout_s)
        except (IndexCorrupt, IndexUnwritable):
            try:
                Store.delete_files(path)
            except OSError as error:
                raise IndexUnwritable(f"{path} cannot be replaced ({error.strerror})") from None
        # A generation no earlier state had: a process that loaded one at the same number would take the new
        # index for the one it holds.
        header = {"generation": str(time.time_ns())}
        if foreign:  # for ``status``: kept through the rebuild
            header[FOREIGN_REPLACED] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        store = Store(path, self.config.seal_key, timeout_s)
        try:
            with store.immediate():
                store.set_meta(header)
        finally:
            store.close()

    def _keep_in_memory(self, error: Exception) -> None:
        """From now on this process keeps the index in memory only: the files under .agentty/ are unusable."""
        self.on_disk = False
        self.problem = str(error)
        self._notes.note(f"the {self.config.name} index is kept in memory for this process: {error}")

    def move_to_memory(self, error: Exception) -> None:
        """Close the database on disk; the next ``open`` gives an empty one in memory."""
        self.close()
        self._keep_in_memory(error)

    def discard(self, foreign: bool = False) -> None:
        """Close the database and empty it (the caller holds the update lock; an index kept in memory never
        touches the files it refused): the next ``open`` starts an empty one (``foreign``: the one emptied was
        built elsewhere, which ``status`` says)."""
        self.close()
        if self.on_disk:
            self._empty(foreign)
            with contextlib.suppress(FileNotFoundError):
                self.config.manifest_path.unlink()

    def never_built(self) -> bool:
        """Whether there is no database yet (and none open): reporting must not create one."""
        return self.on_disk and self._store is None and not self.config.db_path.exists()

    def describe(self) -> str:
        """``disk``, or ``memory`` with the reason the files under .agentty/ could not be used."""
        if self.on_disk:
            return "disk"
        return f"memory ({self.problem})" if self.problem else "memory"

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


__all__ = ["Storage"]
