"""What capture_for_run / finish_for_run record about a run's environment."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import stat
from pathlib import Path

import pytest

from agentotel import _config, semconv
from agentotel.environment import _files, capture_for_run, finish_for_run, snapshot_from_attributes

from env_helpers import AGENTS_MD, UV_LOCK, git, new_run


def snap(attributes: dict) -> dict:
    return json.loads(attributes[semconv.AGENTOTEL_ENV_SNAPSHOT])


def test_clean_repository(repo: Path, capture) -> None:
    attrs = capture(repo)
    s = snap(attrs)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert attrs[semconv.AGENTOTEL_ENV_COMMIT] == head == s["repo"]["commit"]
    assert attrs[semconv.AGENTOTEL_ENV_BRANCH] == "main"
    assert attrs[semconv.AGENTOTEL_ENV_DIRTY] is False
    assert s["repo"]["remote"] == "https://github.com/example/project.git"
    assert attrs[semconv.AGENTOTEL_ENV_LOCKFILE_PATH] == "uv.lock"
    assert attrs[semconv.AGENTOTEL_ENV_LOCKFILE_HASH] == hashlib.sha256(UV_LOCK.encode()).hexdigest()
    assert s["lockfiles"]["uv.lock"]["packages"] == {"httpx": "0.27.0", "requests": "2.31.0"}
    assert s["config_files"] == {"AGENTS.md": {"sha256": hashlib.sha256(AGENTS_MD.encode()).hexdigest()}}
    assert s["os"]["name"] and s["python"]["version"]
    assert attrs[semconv.AGENTOTEL_ENV_PYTHON_VERSION].endswith(s["python"]["version"])
    assert s["who"] == {"trigger": "test", "os_user": s["who"]["os_user"]}
    assert s["agent"]["agentotel"]
    assert "missing" not in s or not any(k.startswith("repo") for k in s["missing"])


def test_identical_environments_hash_equal(repo: Path, capture) -> None:
    first = capture(repo, user="alice", trigger="cli")
    second = capture(repo, user="bob", trigger="ci")  # who started it is not the environment
    assert first[semconv.AGENTOTEL_ENV_HASH] == second[semconv.AGENTOTEL_ENV_HASH]
    assert snap(second)["who"]["user"] == "bob"


def test_dirty_tree_is_seen_and_hashed(repo: Path, capture) -> None:
    (repo / "main.py").write_text("print('changed')\n")
    (repo / "notes.txt").write_text("untracked\n")
    s = snap(capture(repo))
    assert s["repo"]["dirty"] is True
    assert s["repo"]["changed"] == ["main.py", "notes.txt"]
    assert len(s["repo"]["diff_hash"]) == 16
    (repo / "main.py").write_text("print('changed again')\n")
    git(repo, "add", "main.py")  # the index changes, so the cached check is not reused
    assert snap(capture(repo))["repo"]["diff_hash"] != s["repo"]["diff_hash"]


def test_the_trace_store_inside_the_repository_does_not_make_it_dirty(repo: Path, capture, monkeypatch) -> None:
    monkeypatch.setenv("AGENTOTEL_DIR", str(repo / "agentotel-traces"))  # the default ./agentotel-traces, run from the repo
    (repo / "agentotel-traces" / "wal").mkdir(parents=True)
    (repo / "agentotel-traces" / "wal" / "x.arrows").write_text("spans\n")
    assert snap(capture(repo))["repo"]["dirty"] is False
    (repo / "notes.txt").write_text("untracked\n")
    (repo / "main.py").write_text("print('changed')\n")
    git(repo, "add", "main.py")
    s = snap(capture(repo))
    assert s["repo"]["dirty"] is True and s["repo"]["changed"] == ["main.py", "notes.txt"]


def test_later_runs_reuse_the_dirty_check_until_a_signal_changes(repo: Path, capture) -> None:
    assert snap(capture(repo))["capture"]["dirty"] == "checked at this run"
    assert snap(capture(repo))["capture"]["dirty"] == "reused from an earlier check in this process"
    (repo / "AGENTS.md").write_text(AGENTS_MD + "One more rule.\n")  # a hashed file changed: check again
    s = snap(capture(repo))
    assert s["capture"]["dirty"] == "checked at this run"
    assert s["repo"]["dirty"] is True and s["repo"]["changed"] == ["AGENTS.md"]


def test_working_directory_is_the_default(repo: Path, capture, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    s = snap(capture())
    assert s["repo"]["root"] == str(repo)
    assert "uv.lock" in s["lockfiles"]  # found by walking up to the repository root, no further


def test_outside_git(tmp_path: Path, capture) -> None:
    (tmp_path / "requirements.txt").write_text("requests==2.31.0\nhttpx>=0.27\n# comment\n-e .\n")
    attrs = capture(tmp_path)
    s = snap(attrs)
    assert s["repo"] is None
    assert s["missing"]["repo"] == "not inside a git repository"
    assert semconv.AGENTOTEL_ENV_COMMIT not in attrs and semconv.AGENTOTEL_ENV_DIRTY not in attrs
    assert s["lockfiles"]["requirements.txt"]["packages"] == {"httpx": ">=0.27", "requests": "2.31.0"}


def test_without_git_on_path(repo: Path, capture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    attrs = capture(repo)
    s = snap(attrs)
    # Commit and branch come from .git itself; only dirtiness needs the git binary.
    assert attrs[semconv.AGENTOTEL_ENV_COMMIT] == s["repo"]["commit"]
    assert "dirty" not in s["repo"] and semconv.AGENTOTEL_ENV_DIRTY not in attrs
    assert s["missing"]["repo.dirty"] == "git not found on PATH"


def test_repository_without_commits(tmp_path: Path, capture) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("x")
    s = snap(capture(tmp_path))
    assert s["repo"]["branch"] == "main" and "commit" not in s["repo"]
    assert s["missing"]["repo.commit"] == "no commit yet on this branch"
    assert s["repo"]["dirty"] is True and s["repo"]["changed"] == ["a.txt"]


def test_detached_head_and_packed_refs(repo: Path, capture) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git/refs/heads/main").exists()
    assert snap(capture(repo))["repo"]["commit"] == head
    git(repo, "checkout", "-q", "--detach")
    s = snap(capture(repo))
    assert s["repo"]["commit"] == head and s["repo"]["branch"] is None


def test_linked_worktree(repo: Path, capture, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
    s = snap(capture(tmp_path / "wt"))
    assert s["repo"]["branch"] == "feature"
    assert s["repo"]["commit"] == git(repo, "rev-parse", "HEAD").strip()
    assert s["repo"]["dirty"] is False


@pytest.mark.parametrize("kind", ["directory", "symlink-loop", "read-error", "no-permission"])
def test_unreadable_config_file_is_recorded_with_why(repo: Path, capture, kind: str) -> None:
    target = repo / "CLAUDE.md"
    if kind == "directory":
        target.mkdir()
        expected = "not a regular file"
    elif kind == "symlink-loop":
        target.symlink_to(target)
        expected = "OSError: Too many levels of symbolic links"
    elif kind == "read-error":
        if not os.path.exists("/proc/self/mem"):
            pytest.skip("needs Linux /proc: a regular file whose read fails even for root")
        target.symlink_to("/proc/self/mem")  # stat says regular file; reading offset 0 fails with EIO
        expected = "OSError: Input/output error"
    else:
        if os.geteuid() == 0:
            pytest.skip("root reads files whatever their mode; the other cases cover unreadable files")
        target.write_text("x")
        target.chmod(0)
        expected = "PermissionError: Permission denied"
    s = snap(capture(repo))
    assert s["config_files"]["CLAUDE.md"] == {"error": expected}
    assert "sha256" in s["config_files"]["AGENTS.md"]  # the rest is still recorded


def test_broken_lockfile_is_hashed_and_its_parse_error_recorded(repo: Path, capture) -> None:
    (repo / "uv.lock").write_text("[[package]\nname = ")
    s = snap(capture(repo))
    entry = s["lockfiles"]["uv.lock"]
    assert entry["sha256"] == hashlib.sha256(b"[[package]\nname = ").hexdigest()
    assert entry["packages_error"].startswith("unparseable: TOMLDecodeError")


def test_remote_credentials_are_stripped(repo: Path, capture) -> None:
    git(repo, "remote", "set-url", "origin", "https://x-access-token:ghp_PLANTEDabcdefghijklmnopqrstuvwxyz0123@github.com/example/project.git?token=abc")
    attrs = capture(repo)
    assert snap(attrs)["repo"]["remote"] == "https://github.com/example/project.git"
    assert "PLANTED" not in json.dumps(attrs) and "x-access-token" not in json.dumps(attrs)


def test_credentials_are_names_only(repo: Path, capture, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = {
        "OPENAI_API_KEY": "sk-proj-PLANTEDvalue0123456789abcdef",
        "MY_SERVICE_TOKEN": "PLANTED-token-value-42",
        "DB_PASSWORD": "PLANTEDhunter2",
        "DATABASE_URL": "postgres://app:PLANTEDpw@db.internal/app",
    }
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AGENTOTEL_CREDENTIAL_NAMES", "VAULT_ROLE,MY_SERVICE_TOKEN")
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/cert.pem")  # not a credential
    attrs = capture(repo)
    s = snap(attrs)
    assert set(planted) <= set(s["credentials"]["env"])
    assert "SSL_CERT_FILE" not in s["credentials"]["env"]
    assert s["credentials"]["declared"] == ["MY_SERVICE_TOKEN", "VAULT_ROLE"]
    text = json.dumps(attrs)
    for value in planted.values():
        assert value not in text
    assert "PLANTED" not in text


def test_ci_facts_and_agent_version(repo: Path, capture, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n in {"GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "TF_BUILD", "JENKINS_URL", "CI"}]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKFLOW", "nightly-eval")
    monkeypatch.setenv("GITHUB_ACTOR", "octocat")
    monkeypatch.setenv("GITHUB_SHA", "a" * 40)
    monkeypatch.setenv("AGENTOTEL_AGENT_VERSION", "triager@1.4.2")
    s = snap(capture(repo))
    assert s["who"]["ci"] == {"provider": "github-actions", "workflow": "nightly-eval", "actor": "octocat", "commit": "a" * 40}
    assert s["agent"]["agent"] == "triager@1.4.2"
    run = new_run(attributes={semconv.GEN_AI_AGENT_VERSION: "triager@2.0"})
    assert snap(capture(repo, run=run))["agent"]["agent"] == "triager@2.0"  # run(agent_version=...) wins


def test_config_files_added_by_the_user(repo: Path, capture, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "prompts").mkdir()
    (repo / "prompts" / "system.txt").write_text("You are careful.")
    monkeypatch.setenv("AGENTOTEL_CONFIG_FILES", os.pathsep.join(["prompts/system.txt", "prompts/absent.txt"]))
    s = snap(capture(repo))
    assert s["config_files"]["prompts/system.txt"]["sha256"] == hashlib.sha256(b"You are careful.").hexdigest()
    assert s["missing"]["config_files"] == "not found: prompts/absent.txt"


def test_model_tool_definitions_are_recorded_at_finish(repo: Path) -> None:
    run = new_run()
    capture_for_run(run, repo=repo)
    run.record_tool_definitions({"search": {"type": "object", "properties": {"q": {"type": "string"}}}})
    s = snap(finish_for_run(run))
    assert s["model_tools"]["search"]["schema"]["properties"] == {"q": {"type": "string"}}
    assert len(s["model_tools"]["search"]["schema_hash"]) == 16


def test_capture_can_be_turned_off(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTOTEL_CAPTURE_ENVIRONMENT", "false")
    run = new_run()
    assert capture_for_run(run, repo=repo) == {}
    assert finish_for_run(run) == {}


def test_finish_without_capture_returns_nothing() -> None:
    assert finish_for_run(new_run()) == {}


def test_snapshot_from_stored_attributes(repo: Path, capture) -> None:
    attrs = capture(repo)
    # The store keeps non-string attributes JSON-encoded in its attributes map.
    stored = {k: v if isinstance(v, str) else json.dumps(v) for k, v in attrs.items()}
    assert snapshot_from_attributes(stored) == snap(attrs)
    del stored[semconv.AGENTOTEL_ENV_SNAPSHOT]
    partial = snapshot_from_attributes(stored)
    assert partial["repo"] == {"commit": attrs[semconv.AGENTOTEL_ENV_COMMIT], "branch": "main", "dirty": False}
    assert partial["lockfiles"] == {"uv.lock": {"sha256": attrs[semconv.AGENTOTEL_ENV_LOCKFILE_HASH]}}
    assert snapshot_from_attributes({"gen_ai.operation.name": "invoke_agent"}) is None


def test_installed_packages_match_importlib_metadata() -> None:
    packages, problems = _files.installed_packages()
    expected = {_files.canonical_name(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()}
    assert packages == dict(sorted(expected.items()))
    assert problems == []


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("poetry.lock", '[[package]]\nname = "rich"\nversion = "13.7.1"\n', {"rich": "13.7.1"}),
        ("Pipfile.lock", '{"default": {"rich": {"version": "==13.7.1"}}, "develop": {}}', {"rich": "13.7.1"}),
        ("package-lock.json", '{"packages": {"": {}, "node_modules/left-pad": {"version": "1.3.0"}}}', {"left-pad": "1.3.0"}),
        ("pnpm-lock.yaml", "packages:\n  /left-pad@1.3.0:\n    resolution: {}\n  '@scope/pkg@2.0.0(react@18)':\n    x: 1\n",
         {"left-pad": "1.3.0", "@scope/pkg": "2.0.0"}),
        ("Cargo.lock", '[[package]]\nname = "serde"\nversion = "1.0.200"\n', {"serde": "1.0.200"}),
        ("go.sum", "golang.org/x/text v0.14.0 h1:abc=\ngolang.org/x/text v0.14.0/go.mod h1:def=\n", {"golang.org/x/text": "v0.14.0"}),
        ("requirements-dev.txt", "pytest==8.2.0\n", {"pytest": "8.2.0"}),
    ],
)
def test_lockfile_formats(tmp_path: Path, capture, name: str, text: str, expected: dict) -> None:
    (tmp_path / name).write_text(text)
    s = snap(capture(tmp_path))
    assert s["lockfiles"][name]["packages"] == expected


def test_settings_installed_by_instrument_are_used(repo: Path, capture) -> None:
    _config.configure(_config.Settings.resolve(config_files=("main.py",), credential_names=("X_ROLE",)))
    s = snap(capture(repo))
    assert "main.py" in s["config_files"]
    assert s["credentials"]["declared"] == ["X_ROLE"]


def test_unreadable_site_directory_does_not_break_capture(repo: Path, capture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root lists directories whatever their mode")
    locked = tmp_path / "site"
    locked.mkdir()
    locked.chmod(stat.S_IWUSR)
    monkeypatch.syspath_prepend(str(locked))
    s = snap(capture(repo))
    assert "PermissionError" in s["missing"]["packages"]


def test_agent_version_given_to_run(repo: Path, capture) -> None:
    run = new_run("triager")
    capture_for_run(run, repo=repo, agent_version="3.1")
    assert snap(finish_for_run(run))["agent"]["agent"] == "triager@3.1"


def _fake_git(directory: Path, body: str) -> None:
    """A `git` on PATH that does `body` first (an external program standing in for a slow or broken git)."""
    import shutil

    real = shutil.which("git")
    directory.mkdir()
    script = directory / "git"
    script.write_text(f"#!/bin/sh\nPATH={os.environ['PATH']}\n{body}\nexec {real} \"$@\"\n")
    script.chmod(0o755)


def test_a_slow_git_status_never_holds_the_run_for_long(repo: Path, capture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import threading
    import time

    from agentotel.environment import _capture

    _fake_git(tmp_path / "slowbin", "sleep 0.6")
    monkeypatch.setenv("PATH", str(tmp_path / "slowbin"))
    monkeypatch.setattr(_capture, "FINISH_WAIT_S", 0.1)
    started = time.perf_counter()
    first = snap(capture(repo))
    assert time.perf_counter() - started < 0.5
    assert first["missing"]["repo.dirty"] == "still running after 0.1 s (a very large repository?)"
    assert "commit" in first["repo"]  # everything else is there
    for thread in threading.enumerate():  # the check finishes in the background ...
        if thread.name == "agentotel-environment":
            thread.join(10)
    # ... and the next run uses its answer at once.
    started = time.perf_counter()
    second = snap(capture(repo))
    assert time.perf_counter() - started < 0.1
    assert second["repo"]["dirty"] is False
    assert second["capture"]["dirty"] == "reused from an earlier check in this process"


def test_a_failing_git_is_recorded_with_why(repo: Path, capture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_git(tmp_path / "badbin", 'echo "fatal: simulated failure" >&2; exit 128')
    monkeypatch.setenv("PATH", str(tmp_path / "badbin"))
    s = snap(capture(repo))
    assert s["missing"]["repo.dirty"] == "RuntimeError: git status exited with 128: fatal: simulated failure"
    assert "dirty" not in s["repo"]


def test_deleted_working_directory(tmp_path: Path, capture, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    s = snap(capture())
    assert s["repo"] is None and s["missing"]["repo"].startswith("no working directory: FileNotFoundError")
    assert s["packages"] and s["os"]["name"]


def test_a_renamed_file_is_one_changed_path(repo: Path, capture) -> None:
    git(repo, "mv", "main.py", "app with space.py")
    s = snap(capture(repo))
    assert s["repo"]["changed"] == ["app with space.py"]


def test_identical_environments_hash_equal_across_processes(repo: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; from agentotel._context import RunContext; from agentotel.environment import capture_for_run, finish_for_run\n"
        "r = RunContext(run_id='x', name='n', trigger='test'); capture_for_run(r, repo=sys.argv[1])\n"
        "print(finish_for_run(r)['agentotel.env.hash'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "AGENTOTEL_RAISE_INTERNAL_ERRORS"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    hashes = {subprocess.run([sys.executable, "-c", code, str(repo)], env=env, capture_output=True, text=True, check=True).stdout.strip()
              for _ in range(2)}  # fmt: skip
    assert len(hashes) == 1 and len(hashes.pop()) == 16


def test_concurrent_runs_in_threads(repo: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(_i: int) -> str:
        run = new_run()
        capture_for_run(run, repo=repo)
        return finish_for_run(run)[semconv.AGENTOTEL_ENV_HASH]

    with ThreadPoolExecutor(8) as pool:
        hashes = set(pool.map(one, range(32)))
    assert len(hashes) == 1
