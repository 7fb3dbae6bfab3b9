"""What a file or folder's name alone says: a dependency or build folder to prune, a secret-looking or
generated file to skip, a name that is not UTF-8."""

from __future__ import annotations

import fnmatch
import os
import re

# Directories that never hold a project's own sources or docs: VCS data, dependency trees, virtual
# environments, build outputs and caches. Matched on the directory's name, before descending.
PRUNED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        ".agentty",
        "node_modules",
        "bower_components",
        "jspm_packages",
        "vendor",
        "third_party_vendor",
        ".venv",
        "venv",
        "virtualenv",
        "site-packages",
        "__pypackages__",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        ".eggs",
        "dist",
        "build",
        "target",
        "out",
        "_build",
        "coverage",
        "htmlcov",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".turbo",
        ".parcel-cache",
        ".cache",
        ".gradle",
        ".terraform",
        "Pods",
        "DerivedData",
        "bin",
        "obj",
    }
)
PRUNED_SUFFIXES = (".egg-info",)

# Files whose name says they hold credentials. Skipped (and reported) unless the user opts in.
SECRET_PATTERNS = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.tfvars",
    "*.tfvars.json",
    "*.tfstate",
    "*.tfstate.*",
    "*.properties",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.toml",
    "credentials",
    "credentials.json",
    "credentials.yaml",
    "credentials.yml",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".htpasswd",
)

# Generated files recognisable by name; content-based detection happens at load time.
GENERATED_PATTERNS = (
    "*.min.js",
    "*.min.css",
    "*.min.mjs",
    "*.pb.go",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.g.dart",
)


def _compile(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


_SECRET = _compile(SECRET_PATTERNS)
_GENERATED = _compile(GENERATED_PATTERNS)


def is_secret_name(name: str) -> bool:
    return _SECRET.match(name) is not None


def is_generated_name(name: str) -> bool:
    return _GENERATED.match(name) is not None


def is_pruned_dir(name: str) -> bool:
    return name in PRUNED_DIRS or name.startswith(".") or name.endswith(PRUNED_SUFFIXES)


def is_utf8_name(name: str) -> bool:
    """False for a name holding bytes that are not UTF-8 (Python keeps them as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_path(path: str) -> str:
    """A path whose bytes are not all UTF-8, with those bytes shown as ``\\xff``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


__all__ = [
    "GENERATED_PATTERNS",
    "PRUNED_DIRS",
    "SECRET_PATTERNS",
    "is_generated_name",
    "is_pruned_dir",
    "is_secret_name",
    "is_utf8_name",
    "printable_path",
]
