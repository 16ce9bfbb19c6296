"""The git repository a run works in: commit, branch and remote read from `.git`, dirtiness from git.

Commit, branch and remote come straight from the files in `.git` (HEAD, refs, packed-refs, config):
a few small reads, no subprocess, and they work without git installed. Whether the tree is dirty can
only be known by comparing the working tree with the index, which is `git status` — 0.1 to 0.4 s on
a 50,000-file repository. `_capture` runs it in a background thread and reuses its answer while
HEAD, the index, the top-level directory and the hashed lockfiles/config files are unchanged, for at
most 60 s. The trade-off: an unstaged edit to some other tracked file is seen by the next check, not
by the runs of the same process in between; the snapshot's `capture.dirty` says whether the answer
was checked at this run or reused. Status runs with GIT_OPTIONAL_LOCKS=0, so it never takes
index.lock from under the user's own git commands.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from agentotel.environment._files import why

STATUS_TIMEOUT_S = 30.0  # a git status still running after this is killed; the run has long moved on
_MAX_CHANGED_PATHS = 200  # changed paths listed in the snapshot (the count is always there)

_roots: dict[str, Path | None] = {}


def find_root(start: Path) -> Path | None:
    """The working-tree root containing `start` (the nearest directory with a .git entry), or None."""
    key = str(start)
    if key in _roots:
        return _roots[key]
    found = None
    directory = start
    while True:
        if os.path.lexists(directory / ".git"):
            found = directory
            break
        if directory.parent == directory:
            break
        directory = directory.parent
    if len(_roots) > 1024:
        _roots.clear()
    _roots[key] = found
    return found


def _git_dirs(root: Path) -> tuple[Path, Path]:
    """(git dir, common dir): they differ in a linked worktree, where .git is a `gitdir:` file."""
    dot_git = root / ".git"
    git_dir = dot_git
    if dot_git.is_file():
        text = dot_git.read_text(encoding="utf-8").strip()
        if not text.startswith("gitdir:"):
            raise ValueError(".git is a file without a gitdir line")
        git_dir = (root / text[len("gitdir:") :].strip()).resolve()
    common = git_dir
    commondir = git_dir / "commondir"
    if commondir.is_file():
        common = (git_dir / commondir.read_text(encoding="utf-8").strip()).resolve()
    return git_dir, common


def _read_ref(git_dir: Path, common: Path, ref: str) -> str | None:
    for base in (git_dir, common):
        try:
            value = (base / ref).read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            continue
        if value.startswith("ref:"):
            return _read_ref(git_dir, common, value[4:].strip())
        return value or None
    try:
        with open(common / "packed-refs", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref:
                    return parts[0]
    except FileNotFoundError:
        pass
    return None


def strip_credentials(url: str) -> str:
    """The URL without user:password@ and without a query (where tokens also travel)."""
    if "://" not in url:
        return url  # scp-like git@host:path carries a user name, never a secret
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable remote URL>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


_REMOTE_SECTION = re.compile(r'^\s*\[\s*remote\s+"([^"]+)"\s*\]')
_URL_LINE = re.compile(r"^\s*url\s*=\s*(.+?)\s*$")
_remotes: dict[str, tuple[int, str | None]] = {}


def _remote_url(common: Path) -> str | None:
    config = common / "config"
    try:
        mtime = config.stat().st_mtime_ns
    except OSError:
        return None
    cached = _remotes.get(str(config))
    if cached is not None and cached[0] == mtime:
        return cached[1]
    urls: dict[str, str] = {}
    section = None
    with open(config, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = _REMOTE_SECTION.match(line)
            if m:
                section = m.group(1)
                continue
            if line.lstrip().startswith("["):
                section = None
            elif section is not None:
                u = _URL_LINE.match(line)
                if u and section not in urls:
                    urls[section] = u.group(1).strip('"')
    url = urls.get("origin") or (urls[sorted(urls)[0]] if urls else None)
    result = strip_credentials(url) if url else None
    _remotes[str(config)] = (mtime, result)
    return result


def read_head(root: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """{"commit", "branch", "remote"} read from .git, and {field: why} for what could not be read."""
    facts: dict[str, Any] = {}
    missing: dict[str, str] = {}
    try:
        git_dir, common = _git_dirs(root)
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except Exception as exc:  # noqa: BLE001 - a damaged .git is recorded, not raised
        return {}, {"repo": f"cannot read .git: {why(exc)}"}
    if head.startswith("ref:"):
        ref = head[4:].strip()
        facts["branch"] = ref.removeprefix("refs/heads/")
        commit = _read_ref(git_dir, common, ref)
        if commit:
            facts["commit"] = commit
        else:
            missing["repo.commit"] = "no commit yet on this branch"
    else:
        facts["commit"] = head
        facts["branch"] = None  # detached HEAD
    try:
        remote = _remote_url(common)
    except OSError as exc:
        missing["repo.remote"] = why(exc)
        remote = None
    if remote:
        facts["remote"] = remote
    return facts, missing


def index_key(root: Path) -> tuple[int, int, int] | None:
    """The index file's stat: it changes on add, commit, checkout, reset and every refreshing status."""
    try:
        git_dir, _common = _git_dirs(root)
        st = (git_dir / "index").stat()
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


_which: tuple[str | None, str | None] = (None, None)


def git_binary() -> str | None:
    """The git executable on the current PATH (looked up again only when PATH changes)."""
    global _which
    path = os.environ.get("PATH")
    if _which[0] != path or _which[0] is None:
        _which = (path, shutil.which("git", path=path))
    return _which[1]


def _stream_hash(args: list[str], cwd: Path, digest: "hashlib._Hash", deadline: float) -> bytes:
    """Run git, feed its stdout to `digest`, return the first 64 KiB of it; kill it at the deadline."""
    import subprocess  # loaded in the background thread, not on run() start

    # No optional locks: a status must never take index.lock from under the user's own git commands.
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    proc = subprocess.Popen(args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    timer = threading.Timer(max(0.0, deadline - time.monotonic()), proc.kill)
    timer.daemon = True
    timer.start()
    head = b""
    try:
        assert proc.stdout is not None
        for chunk in iter(lambda: proc.stdout.read(1 << 16), b""):
            digest.update(chunk)
            if len(head) < 1 << 16:
                head += chunk[: (1 << 16) - len(head)]
        stderr = proc.stderr.read() if proc.stderr else b""
        code = proc.wait()
    finally:
        timer.cancel()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    if code != 0:
        if time.monotonic() >= deadline:
            raise TimeoutError(f"git {args[3]} took longer than {STATUS_TIMEOUT_S:.0f} s")
        raise RuntimeError(f"git {args[3]} exited with {code}: {stderr.decode(errors='replace').strip()[:160]}")
    return head


def _status_paths(status: bytes) -> list[str]:
    """The paths of `git status --porcelain=v1 -z` entries ("XY path", a rename followed by its source)."""
    paths = []
    entries = status.split(b"\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        if len(entry) > 3:
            paths.append(entry[3:].decode("utf-8", "replace"))
            if entry[:1] in (b"R", b"C"):
                i += 1  # the source path of a rename or copy
        i += 1
    return paths


def exclusions(root: Path, paths: list[Path]) -> list[str]:
    """Git pathspecs leaving out `paths` that lie inside the repository at `root` (the trace store: runs
    writing their own traces into the working tree must not make it look edited)."""
    specs = []
    for path in paths:
        try:
            inside = path.resolve().relative_to(root.resolve())
        except (OSError, ValueError):
            continue  # outside the repository: git never sees it
        if inside.parts:
            specs.append(f":(exclude){inside.as_posix()}")
    return [".", *specs] if specs else []


def check_dirty(root: Path, git: str, has_commit: bool = True, exclude: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """Run `git status` (and `git diff HEAD` when dirty): {"dirty", "diff_hash", "changed"...} or {"error"}.

    `exclude`: pathspecs from `exclusions()`, left out of both.
    """
    deadline = time.monotonic() + STATUS_TIMEOUT_S
    pathspec = ["--", *exclude] if exclude else []
    try:
        digest = hashlib.sha256()
        status = _stream_hash(
            [git, "-C", str(root), "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=dirty",
             *pathspec],
            root, digest, deadline,
        )  # fmt: skip
        if status == b"":
            return {"dirty": False}
        paths = _status_paths(status)
        # The diff hash covers the status list (so untracked files count) and the full tracked diff.
        if has_commit:
            diff = [git, "-C", str(root), "diff", "HEAD", "--binary", "--no-ext-diff", "--no-color", *pathspec]
            _stream_hash(diff, root, digest, deadline)
    except FileNotFoundError:
        return {"error": "git not found"}
    except Exception as exc:  # noqa: BLE001 - recorded as the reason dirtiness is unknown
        return {"error": why(exc)}
    result: dict[str, Any] = {"dirty": True, "diff_hash": digest.hexdigest()[:16]}
    if len(status) < 1 << 16:
        result["changed"] = sorted(paths)[:_MAX_CHANGED_PATHS]
        result["changed_count"] = len(paths)
    return result


def clear_caches() -> None:
    global _which
    _roots.clear()
    _remotes.clear()
    _which = (None, None)
