"""Files the environment names by hash: lockfiles, agent config files, and installed distributions.

Every read is cached on the file's stat (mtime, size, inode): a later run costs one `stat` a file.
Nothing here walks a directory tree; at most one directory listing (for requirements*.txt), itself
cached on the directory's mtime.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import threading
from pathlib import Path
from typing import Any, Callable

# In priority order: the first one present is "the" lockfile on the span; all are in the snapshot.
LOCKFILES = (
    "uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "requirements.txt",
    "package-lock.json", "pnpm-lock.yaml", "Cargo.lock", "go.sum",
)  # fmt: skip
CONFIG_FILES = (
    "AGENTS.md", "CLAUDE.md", ".cursorrules", ".github/copilot-instructions.md", "agents.yaml", "agents.yml",
    ".mcp.json",
)  # fmt: skip
_REQUIREMENTS = re.compile(r"^requirements.*\.txt$")
_MAX_DECLARED = 5000  # packages kept from one lockfile; a bigger one is recorded as cut


def _stat_key(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def why(exc: BaseException) -> str:
    """A short reason without the path (paths can name users; the snapshot already says which file)."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{type(exc).__name__}: {exc.strerror}"
    return f"{type(exc).__name__}: {exc}"[:200]


class _StatCache:
    """path -> (stat key, value), recomputed only when the file's stat changes."""

    def __init__(self, compute: Callable[[Path], Any]) -> None:
        self._compute = compute
        self._entries: dict[str, tuple[tuple[int, int, int], Any]] = {}
        self._lock = threading.Lock()

    def cached(self, path: Path, st: os.stat_result) -> tuple[bool, Any]:
        entry = self._entries.get(str(path))
        if entry is not None and entry[0] == _stat_key(st):
            return True, entry[1]
        return False, None

    def get(self, path: Path, st: os.stat_result) -> Any:
        hit, value = self.cached(path, st)
        if hit:
            return value
        value = self._compute(path)
        with self._lock:
            self._entries[str(path)] = (_stat_key(st), value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _sha256(path: Path) -> dict[str, Any]:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        return {"error": why(exc)}
    return {"sha256": digest.hexdigest()}


_hashes = _StatCache(_sha256)


def file_hash(path: Path) -> dict[str, Any] | None:
    """{"sha256": hex} for a readable file, {"error": why} when it cannot be read, None when absent."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return {"error": why(exc)}
    if not stat.S_ISREG(st.st_mode):
        return {"error": "not a regular file"}
    return _hashes.get(path, st)


# --- directory listings ----------------------------------------------------------------------------------

_listings: dict[str, tuple[int, frozenset[str]]] = {}


def listing(directory: Path) -> frozenset[str]:
    """The names in one directory (not below it), re-read only when the directory's mtime changes."""
    key = str(directory)
    try:
        mtime = os.stat(key).st_mtime_ns
    except OSError:
        return frozenset()
    cached = _listings.get(key)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    try:
        names = frozenset(os.listdir(key))
    except OSError:
        names = frozenset()
    if len(_listings) > 256:
        _listings.clear()
    _listings[key] = (mtime, names)
    return names


def find_lockfiles(start: Path, root: Path | None) -> tuple[Path | None, list[str]]:
    """The nearest directory from `start` up to `root` holding a lockfile, and the lockfile names in it."""
    directory = start
    while True:
        present = listing(directory)
        names = [n for n in LOCKFILES if n in present]
        names += sorted(n for n in present if n != "requirements.txt" and _REQUIREMENTS.match(n))
        if names:
            return directory, names
        if root is None or directory == root or directory.parent == directory:
            return None, []
        directory = directory.parent


def present_config_files(directory: Path) -> list[Path]:
    """The agent config files (AGENTS.md, CLAUDE.md, ...) in `directory`, from its cached listing."""
    names = listing(directory)
    found = [directory / n for n in CONFIG_FILES if "/" not in n and n in names]
    for nested in (n for n in CONFIG_FILES if "/" in n):
        head, _, rest = nested.partition("/")
        if head in names and rest in listing(directory / head):
            found.append(directory / nested)
    return found


# --- declared packages, parsed from a lockfile (so a diff can say which version moved) ---------------


def _toml_packages(text: str) -> dict[str, str]:
    import tomllib  # loaded with the first lockfile parsed, in the background thread

    data = tomllib.loads(text)
    return {p["name"]: str(p.get("version", "")) for p in data.get("package", []) if "name" in p}


def _pipfile_packages(text: str) -> dict[str, str]:
    data = json.loads(text)
    out: dict[str, str] = {}
    for section in ("default", "develop"):
        for name, spec in (data.get(section) or {}).items():
            out[name] = str(spec.get("version", "")).lstrip("=") if isinstance(spec, dict) else str(spec)
    return out


_REQ_LINE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?\s*(==|===|>=|~=|<=|>|<|!=)?\s*([^\s;#\\]*)")


def _requirements_packages(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", "-")):
            continue
        m = _REQ_LINE.match(line)
        if m:
            out[m.group(1)] = (m.group(2) or "") + m.group(3) if m.group(2) != "==" else m.group(3)
    return out


def _npm_packages(text: str) -> dict[str, str]:
    data = json.loads(text)
    out: dict[str, str] = {}
    for key, spec in (data.get("packages") or {}).items():
        if key and isinstance(spec, dict) and "version" in spec:
            out[key.rsplit("node_modules/", 1)[-1]] = str(spec["version"])
    for name, spec in (data.get("dependencies") or {}).items():  # lockfileVersion 1
        if isinstance(spec, dict) and "version" in spec:
            out.setdefault(name, str(spec["version"]))
    return out


def _pnpm_packages(text: str) -> dict[str, str]:
    import yaml

    data = yaml.safe_load(text) or {}
    out: dict[str, str] = {}
    for key in data.get("packages") or {}:
        spec = str(key).lstrip("/").split("(", 1)[0]
        name, sep, version = spec.rpartition("@")
        if sep and name:
            out[name] = version
    return out


def _gosum_packages(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            out[parts[0]] = parts[1].removesuffix("/go.mod")
    return out


def _parser(name: str) -> Callable[[str], dict[str, str]] | None:
    if name in {"uv.lock", "poetry.lock", "pdm.lock", "Cargo.lock"}:
        return _toml_packages
    if name == "Pipfile.lock":
        return _pipfile_packages
    if name == "package-lock.json":
        return _npm_packages
    if name == "pnpm-lock.yaml":
        return _pnpm_packages
    if name == "go.sum":
        return _gosum_packages
    if _REQUIREMENTS.match(name):
        return _requirements_packages
    return None


def _declared(path: Path) -> dict[str, Any]:
    parse = _parser(path.name)
    if parse is None:
        return {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        packages = parse(text)
    except OSError as exc:
        return {"packages_error": why(exc)}
    except Exception as exc:  # noqa: BLE001 - a broken lockfile is a fact to record, not a failure
        return {"packages_error": f"unparseable: {why(exc)}"}
    if len(packages) > _MAX_DECLARED:
        return {"packages": dict(sorted(packages.items())[:_MAX_DECLARED]), "packages_cut": len(packages)}
    return {"packages": dict(sorted(packages.items()))}


_declared_cache = _StatCache(_declared)


def declared_cached(path: Path) -> tuple[bool, dict[str, Any]]:
    """(True, parsed) when the lockfile's packages are known for its current stat, else (False, {})."""
    try:
        st = path.stat()
    except OSError:
        return True, {}
    return _declared_cache.cached(path, st)


def declared_packages(path: Path) -> dict[str, Any]:
    """{"packages": {name: version}} parsed from a lockfile, or {"packages_error": why}; cached on stat."""
    try:
        st = path.stat()
    except OSError as exc:
        return {"packages_error": why(exc)}
    return _declared_cache.get(path, st)


# --- installed distributions --------------------------------------------------------------------------

_DIST_DIR = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+?)(?:-py[^-]*)?(?:-[^-]+)?\.(?:dist|egg)-info$")


def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_packages_state: tuple[tuple[tuple[str, int], ...], dict[str, str], list[str]] | None = None


def installed_packages() -> tuple[dict[str, str], list[str]]:
    """Installed distributions {name: version} from the *.dist-info / *.egg-info names on sys.path.

    Reading directory names (not every METADATA file) keeps the first call at a few milliseconds
    instead of ~50 ms; later calls cost one `stat` per sys.path entry (an install changes the mtime).
    Also returns the problems met (an unreadable site directory), as reasons.
    """
    global _packages_state
    key: list[tuple[str, int]] = []
    for entry in sys.path:
        try:
            key.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            continue
    key_t = tuple(key)
    state = _packages_state
    if state is not None and state[0] == key_t:
        return state[1], state[2]
    packages: dict[str, str] = {}
    problems: list[str] = []
    for entry, _mtime in key_t:
        directory = entry or "."
        if not os.path.isdir(directory):
            continue
        try:
            names = os.listdir(directory)
        except OSError as exc:
            problems.append(f"{entry}: {why(exc)}")
            continue
        for name in sorted(names):
            m = _DIST_DIR.match(name)
            if m:
                # sys.path order wins, as for imports: a shadowed copy further down is not what runs.
                packages.setdefault(canonical_name(m.group("name")), m.group("version"))
    packages = dict(sorted(packages.items()))
    _packages_state = (key_t, packages, problems)
    return packages, problems


def clear_caches() -> None:
    global _packages_state
    _hashes.clear()
    _declared_cache.clear()
    _listings.clear()
    _packages_state = None
