"""The environment of a run: captured at `run()` start, stored on the root span, compared between runs.

    attributes = capture_for_run(run_context, repo=None)   # at run() start: ~0.3 ms after the first run
    attributes = finish_for_run(run_context)               # at run() end: + the snapshot and its hash
    snapshot = snapshot_from_attributes(row["attributes"])  # back from a stored root span
    print("\\n".join(diff(snapshot_a, snapshot_b).lines()))

The snapshot records OS and Python, the git state (of the working directory or `repo=`), lockfiles
and installed distributions, agentotel and SDK versions, agent config files (AGENTS.md, CLAUDE.md,
... plus AGENTOTEL_CONFIG_FILES, relative to the repository root), tool schemas, the tools offered to
the model (schemas and descriptions), a hash of the run's first system prompt, credential NAMES and
who started the run. It holds facts and names, never payload content, so it is recorded even
when content capture is off; its free text (remote URL, tool schemas, CI names) still goes through
the content policy's redaction. Turn it off with AGENTOTEL_CAPTURE_ENVIRONMENT=false.

The environment hash (`agentotel.env.hash`) covers everything except volatile facts — host name,
container id, who started the run, local paths, timings, reasons for missing parts — so identical
environments hash equal across runs, processes and machines; `diff` compares the same part.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from agentotel import _config, _json, semconv
from agentotel._internal import internal_errors
from agentotel.environment._capture import begin, clear_caches, end

if TYPE_CHECKING:  # pragma: no cover
    from agentotel.environment._diff import Change, EnvDiff

__all__ = ["Change", "EnvDiff", "capture_for_run", "clear_caches", "diff", "finish_for_run", "snapshot_from_attributes"]


def capture_for_run(run_context: Any, repo: Any = None, *, agent_version: str | None = None) -> dict[str, Any]:
    """The `agentotel.env.*` attributes known at run start; starts the slow checks. Never raises.

    `repo`: the directory whose git state, lockfile and config files are recorded (default: the
    working directory). `agent_version`: the run's `agent_version=` (else the setting).
    """
    with internal_errors("environment.capture_for_run"):
        if _config.current().capture_environment:
            return begin(run_context, repo, agent_version)
    return {}


def finish_for_run(run_context: Any) -> dict[str, Any]:
    """Every `agentotel.env.*` attribute, incl. the snapshot JSON and the environment hash. Never raises.

    Waits for the checks started at run start (at most ~1 s in total; usually they are long done).
    """
    with internal_errors("environment.finish_for_run"):
        return end(run_context)
    return {}


def diff(snapshot_a: Mapping[str, Any] | None, snapshot_b: Mapping[str, Any] | None) -> "EnvDiff":
    """What differs between two snapshots, key by key: `.changes`, `.lines()`, `.to_dict()`.

    Packages added, removed or changed in version; lockfiles (with the packages that moved); config
    files; tool schemas (with the changed fields) and descriptions; the system prompt's hash; commit,
    branch, dirty state; models; OS and Python.
    Volatile facts (host, who started the run, local paths, timings) are never differences.
    """
    from agentotel.environment import _diff

    return _diff.diff(snapshot_a, snapshot_b)


def __getattr__(name: str) -> Any:
    # The diff types load with the diff: run() never needs them.
    if name in {"Change", "EnvDiff"}:
        from agentotel.environment import _diff

        return getattr(_diff, name)
    raise AttributeError(f"module 'agentotel.environment' has no attribute {name!r}")


def snapshot_from_attributes(attributes: Mapping[str, Any]) -> dict[str, Any] | None:
    """The snapshot dict of a stored root span (its `attributes` map), or None when it has none.

    When the snapshot JSON is missing or damaged, a partial snapshot is rebuilt from the small
    `agentotel.env.*` attributes, with "missing" saying why.
    """
    raw = attributes.get(semconv.AGENTOTEL_ENV_SNAPSHOT)
    if raw:
        snapshot = _json.parse(raw) if isinstance(raw, str) else raw
        if isinstance(snapshot, dict):
            return snapshot
    small = {k: _json.parse(v) for k, v in attributes.items() if k.startswith("agentotel.env.") and k != semconv.AGENTOTEL_ENV_SNAPSHOT}
    if not small:
        return None
    repo = {k: small[a] for k, a in (("commit", semconv.AGENTOTEL_ENV_COMMIT), ("branch", semconv.AGENTOTEL_ENV_BRANCH),
                                     ("dirty", semconv.AGENTOTEL_ENV_DIRTY)) if a in small}  # fmt: skip
    partial: dict[str, Any] = {"schema": 1, "missing": {"snapshot": "no readable snapshot JSON on the span"}}
    if repo:
        partial["repo"] = repo
    if semconv.AGENTOTEL_ENV_LOCKFILE_PATH in small:
        partial["lockfiles"] = {small[semconv.AGENTOTEL_ENV_LOCKFILE_PATH]: {"sha256": small.get(semconv.AGENTOTEL_ENV_LOCKFILE_HASH)}}
    if semconv.AGENTOTEL_ENV_OS_IMAGE in small:
        partial["os"] = {"image": small[semconv.AGENTOTEL_ENV_OS_IMAGE]}
    for key, attr in (("packages_hash", semconv.AGENTOTEL_ENV_PACKAGES_HASH), ("config_hash", semconv.AGENTOTEL_ENV_CONFIG_HASH),
                      ("tool_schemas_hash", semconv.AGENTOTEL_ENV_TOOL_SCHEMAS_HASH)):  # fmt: skip
        if attr in small:
            partial.setdefault("hashes", {})[key] = small[attr]
    return partial
