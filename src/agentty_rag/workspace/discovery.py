"""Which folder is the workspace: found as git and editors find a project, never a place that is not one.

* ``--root DIR`` (or the client's MCP roots) names it explicitly.
* Otherwise the walk goes up from the start folder to the nearest folder holding ``.agentty/`` or ``.git``;
  with no such folder, the start folder itself is the workspace.
* The file-system root, the home folder and system folders are never a workspace: nothing is indexed or
  written there, and the message says to start inside a project or to pass ``--root``.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

MARKERS = (".agentty", ".git")

# Folders that are never a workspace themselves, though a project may live below them.
_NOT_THEMSELVES = (
    "/home",
    "/Users",
    "/tmp",
    "/var",
    "/var/tmp",
    "/opt",
    "/srv",
    "/mnt",
    "/media",
    "/Volumes",
    "/private",
    "/private/tmp",
    "/private/var",
    "/root",
    "/usr",
    "/usr/local",
    "/usr/src",
    "/Applications",
)
# Folders that hold the operating system: neither they nor anything below them is a workspace.
_SYSTEM_TREES = (
    "/etc",
    "/proc",
    "/sys",
    "/dev",
    "/boot",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/run",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/include",
    "/usr/share",
    "/usr/local/bin",
    "/usr/local/lib",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/var/spool",
    "/var/run",
    "/var/db",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db",
)
_WINDOWS_SYSTEM_TREES = ("Windows", "Program Files", "Program Files (x86)", "ProgramData")


# What an empty ``--root ""`` is given as (a hook's ``$CLAUDE_PROJECT_DIR`` that is not set): never a folder,
# where ``Path("")`` would be the current one.
EMPTY_ROOT = Path("\0(empty)")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


@functools.cache
def _system_folders() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(trees, folders that are not themselves a workspace), each as written and as resolved (/etc is
    /private/etc on macOS); resolved once per process."""
    trees = {p for name in _SYSTEM_TREES for p in (Path(name), _real(Path(name)))}
    themselves = {p for name in _NOT_THEMSELVES for p in (Path(name), _real(Path(name)))}
    return tuple(sorted(trees)), tuple(sorted(themselves))


def _same(a: Path, b: Path) -> bool:
    if sys.platform == "win32":
        return os.path.normcase(a) == os.path.normcase(b)
    return a == b


def _inside(path: Path, tree: Path) -> bool:
    return _same(path, tree) or any(_same(parent, tree) for parent in path.parents)


def refusal(folder: Path, home: Path | None) -> str:
    """Why ``folder`` cannot be a workspace ("" when it can): the file-system root, home or a system folder."""
    real = _real(folder)
    if real.parent == real:
        return f"{real} is the root of the file system"
    if home is not None and _same(real, _real(home)):
        return f"{real} is your home folder"
    if sys.platform == "win32":
        drive = Path(real.anchor)
        for name in _WINDOWS_SYSTEM_TREES:
            if _inside(real, drive / name):
                return f"{real} is a system folder"
        if _same(real, drive / "Users"):
            return f"{real} is a system folder"
        return ""
    trees, themselves = _system_folders()
    ancestry = {real, *real.parents}
    if any(tree in ancestry for tree in trees) or real in themselves:
        return f"{real} is a system folder"
    if home is not None and _same(real, _real(home).parent):
        return f"{real} is a system folder"
    return ""


@dataclass(frozen=True)
class Located:
    """The workspace (None when refused), where the search for it started, and how it was chosen."""

    root: Path | None
    start: Path
    how: str  # "--root", "MCP roots", "found .git", "found .agentty", "start folder"
    problem: str = ""

    @property
    def found_elsewhere(self) -> bool:
        """The workspace is not the start folder: results and status name it."""
        return self.root is not None and not _same(self.root, self.start)

    @property
    def marked(self) -> bool:
        """Chosen explicitly or by a project marker, not merely because the search started there."""
        return self.root is not None and self.how != "start folder"


def _marker(folder: Path) -> str:
    for name in MARKERS:
        candidate = folder / name
        if (name == ".git" and candidate.exists()) or candidate.is_dir():
            return name
    return ""


def walk_up(start: Path, home: Path | None) -> tuple[Path, str] | None:
    """The nearest folder at or above ``start`` holding a project marker, and the marker.

    The walk stops at the home folder and never counts a marker in a folder that cannot be a workspace
    (``~/.agentty`` holds user-level skills, not a project).
    """
    real_home = _real(home) if home is not None else None
    for folder in (start, *start.parents):
        if real_home is not None and _same(folder, real_home):
            return None
        if refusal(folder, home):
            continue
        marker = _marker(folder)
        if marker:
            return folder, marker
    return None


def locate(start: Path, home: Path | None, explicit: Path | None = None) -> Located:
    """Choose the workspace for a process started in ``start`` (``explicit``: the ``--root`` given)."""
    start = _real(start)
    if explicit is not None:
        root = _real(explicit.expanduser())
        problem = refusal(root, home)
        if problem:
            return Located(None, start, "--root", f"--root {root}: {problem}, not a project; give a project folder")
        return Located(root, start, "--root")
    found = walk_up(start, home)
    if found is not None:
        return Located(found[0], start, f"found {found[1]}")
    problem = refusal(start, home)
    if problem:
        return Located(
            None, start, "start folder", f"{problem}, not a project: start inside a project or pass --root DIR"
        )
    return Located(start, start, "start folder")


def from_roots(uris: list[str], start: Path, home: Path | None) -> Located | None:
    """The workspace from a client's MCP roots: the first ``file://`` root that is a folder and may be one.

    None when no root qualifies (then the server keeps the workspace it found itself).
    """
    for uri in uris:
        path = path_of_uri(uri)
        if path is None or not path.is_dir():
            continue
        root = _real(path)
        if refusal(root, home):
            continue
        return Located(root, _real(start), "MCP roots")
    return None


def path_of_uri(uri: str) -> Path | None:
    """The local path of a ``file://`` URI (None for any other scheme or a remote host)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    if sys.platform == "win32":
        from urllib.request import url2pathname  # pulls in the HTTP stack: only where it is needed

        return Path(url2pathname(parsed.path))
    return Path(unquote(parsed.path))


__all__ = ["EMPTY_ROOT", "MARKERS", "Located", "from_roots", "locate", "path_of_uri", "refusal", "walk_up"]
