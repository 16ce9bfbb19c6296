"""Building a run's environment snapshot: fast facts at run start, slow ones in the background.

Cost model (measured by benchmarks/bench_environment.py): at run start only cached facts and `stat`
calls — OS/Python facts once per process, files re-hashed only when their stat changes, installed
distributions re-listed only when a sys.path directory changes, HEAD read from `.git`. The two slow
parts — `git status` (dirtiness, 0.1-0.4 s on 50,000 files) and parsing a lockfile that changed —
run in one daemon thread started at the end of capture; `finish_for_run` waits for them (at most
FINISH_WAIT_S in total) and adds them to the snapshot. Span attributes are exported when the root
span ends, so facts that arrive at run end are stored exactly like those known at the start.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Iterator

from agentotel import _config, semconv
from agentotel._internal import report_internal_error
from agentotel.environment import _files, _repo, _system

SCHEMA_VERSION = 1
FINISH_WAIT_S = 1.0  # the most a run's end waits for background checks; later runs reuse their result
# A dirtiness check is reused while its key (HEAD, index, top-level entries, the hashed files) holds,
# for at most this long; then a run starts a fresh one in the background.
DIRTY_MAX_AGE_S = 60.0
# Facts that differ between identical environments (machine identity, who, timings, local paths):
# kept in the snapshot, left out of the environment hash and of diffs.
VOLATILE = ("host", "who", "missing", "capture")
VOLATILE_FIELDS = {"python": ("executable", "prefix"), "repo": ("root",)}


def digest(value: Any) -> str:
    """SHA-256 (hex, first 16 characters) of a value's canonical JSON: the rule for every composite hash."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    # surrogatepass: half of a UTF-16 pair (a default value or docstring can hold one) hashes, never raises
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def hashed_part(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The snapshot without its volatile facts: what the environment hash and diffs cover."""
    out = {k: v for k, v in snapshot.items() if k not in VOLATILE}
    for section, fields in VOLATILE_FIELDS.items():
        if isinstance(out.get(section), dict):
            out[section] = {k: v for k, v in out[section].items() if k not in fields}
    return out


# --- background jobs --------------------------------------------------------------------------------


class _Job:
    """One slow check; `_start` runs a batch of them in one daemon thread (never holding up exit)."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._fn = fn
        self._done = threading.Event()
        self.result: Any = None
        self.created = time.monotonic()
        self.started = False

    def run(self) -> None:
        try:
            self.result = self._fn()
        except Exception as exc:  # noqa: BLE001 - reported where the result is used
            self.result = exc
        finally:
            self._done.set()

    def wait(self, timeout: float) -> bool:
        return self._done.wait(max(0.0, timeout))


def _start(jobs: list[_Job]) -> None:
    """Run the jobs not yet started, one after the other, in one new daemon thread."""
    with _jobs_lock:
        todo = [job for job in jobs if not job.started]
        for job in todo:
            job.started = True
    if todo:

        def work() -> None:
            for job in todo:
                job.run()

        threading.Thread(target=work, name="agentotel-environment", daemon=True).start()


_jobs: dict[tuple[Any, ...], _Job] = {}
_jobs_lock = threading.Lock()


def _job(key: tuple[Any, ...], fn: Callable[[], Any], max_age_s: float) -> tuple[_Job, bool]:
    """The job for `key`: the one running or done (when younger than max_age_s), else a new one.

    Jobs of the same kind and place (key[:2]) replace each other, so the table stays small.
    """
    now = time.monotonic()
    with _jobs_lock:
        job = _jobs.get(key)
        if job is not None and (not job._done.is_set() or now - job.created < max_age_s):
            return job, False
        for old in [k for k in _jobs if k[:2] == key[:2]]:
            del _jobs[old]
        job = _jobs[key] = _Job(fn)
        return job, True


def forget_jobs() -> None:
    with _jobs_lock:
        _jobs.clear()


if hasattr(os, "register_at_fork"):
    # A forked child inherits the table but not the threads: jobs still running would never finish there.
    os.register_at_fork(after_in_child=forget_jobs)


# --- one run's capture ------------------------------------------------------------------------------


class Capture:
    """A snapshot being built for one run: facts known at start plus the jobs finishing it."""

    def __init__(self) -> None:
        self.snapshot: dict[str, Any] = {"schema": SCHEMA_VERSION}
        self.missing: dict[str, str] = {}
        self.attributes: dict[str, Any] = {}
        self.waits: list[tuple[_Job, Callable[[Any], None], str]] = []

    @contextlib.contextmanager
    def part(self, name: str) -> Iterator[None]:
        """A bug in one part loses that part (recorded as missing), not the snapshot."""
        try:
            yield
        except Exception as exc:  # noqa: BLE001
            self.missing[name] = f"capture failed: {_files.why(exc)}"
            report_internal_error(f"environment.{name}", exc)

    def finish(self, run_context: Any) -> dict[str, Any]:
        deadline = time.monotonic() + FINISH_WAIT_S
        for job, apply, name in self.waits:
            if not job.wait(deadline - time.monotonic()):
                self.missing[name] = f"still running after {FINISH_WAIT_S:g} s (a very large repository?)"
                continue
            if isinstance(job.result, Exception):
                self.missing[name] = f"capture failed: {_files.why(job.result)}"
                report_internal_error(f"environment.{name}", job.result)
                continue
            with self.part(name):
                apply(job.result)
        with self.part("model_tools"):
            _model_tools(self, run_context)
        if self.missing:
            self.snapshot["missing"] = dict(sorted(self.missing.items()))
        snapshot = self.snapshot
        out = dict(self.attributes)
        out[semconv.AGENTOTEL_ENV_SNAPSHOT] = json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        out[semconv.AGENTOTEL_ENV_HASH] = digest(hashed_part(snapshot))
        return out


def _redacted(value: Any) -> Any:
    """Free text (remote URLs, tool descriptions, CI names) through the content policy's redaction."""
    from agentotel import content

    if isinstance(value, str):
        return content.redact_text(value)[0]
    return content.redact(value)[0]


def capture(run_context: Any, repo: Any = None, agent_version: str | None = None) -> Capture:
    settings = _config.current()
    cap = Capture()
    snap = cap.snapshot
    environ = os.environ
    try:
        start: Path | None = Path(os.path.abspath(os.fspath(repo))) if repo is not None else Path(os.getcwd())
    except OSError as exc:  # the working directory was deleted under the process
        start = None
        snap["repo"] = None
        cap.missing["repo"] = f"no working directory: {_files.why(exc)}"

    with cap.part("os"):
        facts = _system.machine()
        snap["os"], snap["python"] = facts["os"], facts["python"]
        host = dict(facts["host"])
        extra = _system.image_and_sandbox(environ)
        if "image" in extra:
            snap["container"] = {"image": _redacted(extra["image"])}
        if "sandbox" in extra:
            host["sandbox"] = _redacted(extra["sandbox"])
        if extra.get("kubernetes"):
            host["kubernetes"] = True
        snap["host"] = host
        cap.attributes[semconv.AGENTOTEL_ENV_OS_IMAGE] = facts["os"]["image"]
        cap.attributes[semconv.AGENTOTEL_ENV_PYTHON_VERSION] = f"{facts['python']['implementation']} {facts['python']['version']}"
        sandbox = host.get("container_id") or host.get("sandbox")
        if sandbox:
            cap.attributes[semconv.AGENTOTEL_ENV_SANDBOX_ID] = sandbox

    root = None
    if start is not None:
        with cap.part("repo"):
            root = _capture_repo(cap, start)
        base = root or start
        with cap.part("lockfiles"):
            _capture_lockfiles(cap, start, root, base)
    with cap.part("packages"):
        packages, problems = _files.installed_packages()
        snap["packages"] = packages
        if problems:
            cap.missing["packages"] = "; ".join(problems)[:500]
        cap.attributes[semconv.AGENTOTEL_ENV_PACKAGES_HASH] = _packages_digest(packages)
    with cap.part("agent"):
        agent = _system.client_versions(snap.get("packages", {}))
        version = (
            agent_version
            or (getattr(run_context, "attributes", None) or {}).get(semconv.GEN_AI_AGENT_VERSION)
            or settings.agent_version
        )
        if version:
            version = str(version)
            # The same name@version as the root span's gen_ai.agent.version.
            agent["agent"] = _redacted(version if "@" in version else f"{getattr(run_context, 'name', 'agent')}@{version}")
        snap["agent"] = agent
    if start is not None:
        with cap.part("config_files"):
            _capture_config_files(cap, start, base, settings.config_files)
    if root is not None:
        with cap.part("repo.dirty"):
            _schedule_dirty(cap, root)
    with cap.part("tools"):
        _capture_tools(cap)
    with cap.part("credentials"):
        snap["credentials"] = _system.credentials(environ, settings.credential_names)
    with cap.part("who"):
        who: dict[str, Any] = {"trigger": getattr(run_context, "trigger", None)}
        if getattr(run_context, "user", None):
            who["user"] = run_context.user
        who["os_user"] = _system.os_user()
        ci = _system.ci(environ)
        if ci:
            who["ci"] = ci
        snap["who"] = _redacted(who)
    # Started last, so the thread's start-up and its first slice of the GIL do not delay the snapshot.
    _start([job for job, _apply, _name in cap.waits])
    return cap


_packages_digests: dict[int, tuple[dict[str, str], str]] = {}


def _packages_digest(packages: dict[str, str]) -> str:
    # The installed list is the same dict object until something is installed: hash it once.
    cached = _packages_digests.get(id(packages))
    if cached is not None and cached[0] is packages:
        return cached[1]
    value = digest(packages)
    _packages_digests.clear()
    _packages_digests[id(packages)] = (packages, value)
    return value


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def _capture_repo(cap: Capture, start: Path) -> Path | None:
    if not start.is_dir():
        cap.snapshot["repo"] = None
        cap.missing["repo"] = "the repo path given to run() is not a directory"
        return None
    root = _repo.find_root(start)
    if root is None:
        cap.snapshot["repo"] = None
        cap.missing["repo"] = "not inside a git repository"
        return None
    facts, missing = _repo.read_head(root)
    cap.missing.update(missing)
    repo: dict[str, Any] = {"root": str(root), **facts}
    if "remote" in repo:
        repo["remote"] = _redacted(repo["remote"])
    cap.snapshot["repo"] = repo
    if facts.get("commit"):
        cap.attributes[semconv.AGENTOTEL_ENV_COMMIT] = facts["commit"]
    if facts.get("branch"):
        cap.attributes[semconv.AGENTOTEL_ENV_BRANCH] = facts["branch"]
    return root


def _schedule_dirty(cap: Capture, root: Path) -> None:
    """Start (or reuse) the `git status` check whose result finish() adds to the snapshot."""
    repo = cap.snapshot.get("repo")
    if not repo or "repo" in cap.missing:
        return
    git = _repo.git_binary()
    if git is None:
        cap.missing["repo.dirty"] = "git not found on PATH"
        return
    try:
        top = root.stat().st_mtime_ns  # a file added or removed at the top level
    except OSError:
        top = None
    # Cheap signals that the tree changed since the last check; an unstaged edit to any other tracked
    # file is seen at the next check (at most DIRTY_MAX_AGE_S later), not by the runs in between.
    hashed = {**(cap.snapshot.get("lockfiles") or {}), **(cap.snapshot.get("config_files") or {})}
    files = digest({path: entry.get("sha256") or entry.get("error") for path, entry in hashed.items()})
    commit = repo.get("commit")
    exclude = tuple(_repo.exclusions(root, [_config.current().directory]))
    key = ("dirty", str(root), commit, _repo.index_key(root), top, files, exclude)
    job, new = _job(key, lambda: _repo.check_dirty(root, git, bool(commit), exclude), DIRTY_MAX_AGE_S)
    cap.snapshot["capture"] = {"dirty": "checked at this run" if new else "reused from an earlier check in this process"}

    def apply(result: dict[str, Any]) -> None:
        if "error" in result:
            cap.missing["repo.dirty"] = result["error"]
            return
        repo.update(result)
        cap.attributes[semconv.AGENTOTEL_ENV_DIRTY] = result["dirty"]

    cap.waits.append((job, apply, "repo.dirty"))


def _capture_lockfiles(cap: Capture, start: Path, root: Path | None, base: Path) -> None:
    directory, names = _files.find_lockfiles(start, root)
    lockfiles: dict[str, Any] = {}
    cap.snapshot["lockfiles"] = lockfiles
    if directory is None:
        return
    for name in names:
        path = directory / name
        rel = _relative(path, base)
        entry = _files.file_hash(path)
        if entry is None:
            continue
        entry = dict(entry)
        lockfiles[rel] = entry
        if semconv.AGENTOTEL_ENV_LOCKFILE_PATH not in cap.attributes:
            cap.attributes[semconv.AGENTOTEL_ENV_LOCKFILE_PATH] = rel
            if "sha256" in entry:
                cap.attributes[semconv.AGENTOTEL_ENV_LOCKFILE_HASH] = entry["sha256"]
        if "error" in entry:
            continue
        known, declared = _files.declared_cached(path)
        if known:
            entry.update(declared)
            continue
        # First sight of this lockfile version: parse it off the run's path; the stat cache keeps the result.
        cap.waits.append((_Job(lambda p=path: _files.declared_packages(p)), entry.update, f"lockfiles.{rel}"))


def _capture_config_files(cap: Capture, start: Path, base: Path, extra: tuple[str, ...]) -> None:
    files: dict[str, Any] = {}
    directories = [base] if start == base else [base, start]
    candidates = [path for d in directories for path in _files.present_config_files(d)]
    for given in extra:
        path = Path(given).expanduser()
        candidates.append(path if path.is_absolute() else base / path)
    for path in candidates:
        entry = _files.file_hash(path)
        if entry is not None:
            files[_relative(path, base)] = entry
    cap.snapshot["config_files"] = dict(sorted(files.items()))
    cap.attributes[semconv.AGENTOTEL_ENV_CONFIG_HASH] = digest(cap.snapshot["config_files"])
    missing = [g for g in extra if _files.file_hash(Path(g).expanduser() if Path(g).is_absolute() else base / g) is None]
    if missing:
        cap.missing["config_files"] = "not found: " + ", ".join(missing)


_tool_entries: dict[tuple[str, str], dict[str, Any]] = {}


def _tool_entry(name: str, schema_hash: str, schema: Any, description: Any) -> dict[str, Any]:
    # Redacting a schema walks it; a tool's entry is computed once per (name, schema hash).
    key = (name, schema_hash + "\0" + str(description))
    entry = _tool_entries.get(key)
    if entry is None:
        entry = {"schema_hash": schema_hash, "schema": _redacted(schema)}
        if description:
            entry["description"] = _redacted(str(description))
        if len(_tool_entries) > 4096:
            _tool_entries.clear()
        _tool_entries[key] = entry
    return entry


def _capture_tools(cap: Capture) -> None:
    # No module, no @tool: importing agentotel.tools here would only cost the run's start time.
    tools_module = sys.modules.get("agentotel.tools")
    tools = {}
    if tools_module is not None:
        for name, info in sorted(tools_module.registered_tools().items()):
            tools[name] = _tool_entry(name, info.schema_hash, info.schema, None)  # the schema holds the description
    cap.snapshot["tools"] = tools
    cap.attributes[semconv.AGENTOTEL_ENV_TOOL_SCHEMAS_HASH] = digest({n: t["schema_hash"] for n, t in tools.items()})


def _schema_hash(schema: Any) -> str:
    try:
        from agentotel.tools import schema_hash
    except ImportError:
        return digest(schema)
    return schema_hash(schema)


def _model_tools(cap: Capture, run_context: Any) -> None:
    """What the run's model calls were offered (tool schemas and descriptions) and told (a hash of the
    first system prompt: a fact, not its text)."""
    instructions = getattr(run_context, "instructions", None)
    if instructions:
        cap.snapshot["instructions"] = {"sha256": hashlib.sha256(instructions.encode("utf-8", "replace")).hexdigest(),
                                        "chars": len(instructions)}
    definitions = getattr(run_context, "tool_definitions", None) or {}
    if not definitions:
        return
    descriptions = getattr(run_context, "tool_descriptions", None) or {}
    cap.snapshot["model_tools"] = {
        name: _tool_entry("model:" + name, _schema_hash(schema), schema, descriptions.get(name))
        for name, schema in sorted(dict(definitions).items())
    }


# --- per-run bookkeeping ----------------------------------------------------------------------------

_captures: dict[int, tuple[weakref.ref, Capture]] = {}
_captures_lock = threading.Lock()


def begin(run_context: Any, repo: Any, agent_version: str | None = None) -> dict[str, Any]:
    cap = capture(run_context, repo, agent_version)
    with _captures_lock:
        for key in [k for k, (ref, _c) in _captures.items() if ref() is None]:
            del _captures[key]  # runs whose end was never reported
        _captures[id(run_context)] = (weakref.ref(run_context), cap)
    return dict(cap.attributes)


def end(run_context: Any) -> dict[str, Any]:
    with _captures_lock:
        entry = _captures.pop(id(run_context), None)
    if entry is None or entry[0]() is not run_context:
        return {}
    return entry[1].finish(run_context)


def clear_caches() -> None:
    """Forget every cache (tests; a process that changed its environment in ways stat cannot see)."""
    forget_jobs()
    _files.clear_caches()
    _repo.clear_caches()
    _system.machine.cache_clear()
    _tool_entries.clear()
    _packages_digests.clear()
