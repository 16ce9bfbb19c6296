"""The README's regression section, followed verbatim in a fresh project folder: a bug inside a `@tool`
becomes a case that fails before the fix and passes after it, with live tools and frozen models.

Only the recording talks to a model: the real openai SDK against a scripted chat-completions server on
127.0.0.1. Every later command runs with no server, no key and no PYTHONPATH to the project.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import agentotel

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## From a failed run to a regression case"


def walkthrough() -> tuple[str, list[list[str]], tuple[str, str]]:
    """The section's agent file, its command blocks (in order), and its fix (the line before, after)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index(SECTION):]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
    agent = next(body for lang, body in blocks if lang == "python")
    commands = [[line for line in body.splitlines() if line.strip()] for lang, body in blocks if lang == "bash"]
    diff = next(body for lang, body in blocks if lang == "diff").splitlines()
    before = next(line[1:] for line in diff if line.startswith("-"))
    after = next(line[1:] for line in diff if line.startswith("+"))
    return agent, commands, (before, after)


class ScriptedModel(BaseHTTPRequestHandler):
    """A model that searches for the customer's orders, and retries while the tool finds none."""

    calls = 0

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
        ScriptedModel.calls += 1
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        messages = body["messages"]
        results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        if results and results[-1]:
            message = {"role": "assistant", "content": f"acme has {len(results[-1])} orders"}
        elif len(results) < 3:
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{len(results) + 1}", "type": "function",
                "function": {"name": "search_orders", "arguments": json.dumps({"customer": "acme"})}}]}
        else:
            message = {"role": "assistant", "content": "acme has no orders"}
        reply = json.dumps({
            "id": f"chatcmpl-{len(messages)}", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
            "usage": {"prompt_tokens": 40 + 10 * len(messages), "completion_tokens": 9, "total_tokens": 49 + 10 * len(messages)},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def model_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    ScriptedModel.calls = 0
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def user_env(**extra: str) -> dict[str, str]:
    """The user's shell: agentotel installed (here: this checkout), the project NOT on PYTHONPATH, no key."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AGENTOTEL_", "OTEL_", "OPENAI_", "ANTHROPIC_", "PYTEST_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "collector")])
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"  # nothing listens there: a request would fail loudly
    # `pytest` with agentotel's plugin (installed, it is an entry point) and none of this machine's others.
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTEST_PLUGINS="agentotel.cases.pytest_plugin")
    env.update(extra)
    return env


def shell(command: str, project: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """A README command line as typed, run with this interpreter (`python`, `agentotel`, `pytest`)."""
    argv = shlex.split(command)
    runner = {"python": [sys.executable], "agentotel": [sys.executable, "-m", "agentotel"], "pytest": [sys.executable, "-m", "pytest"]}
    argv = runner[argv[0]] + argv[1:]
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=180)


def test_the_readme_turns_a_tool_bug_into_a_case_that_fails_before_the_fix_and_passes_after(tmp_path, model_server):
    agent, (cut_and_run, after_the_fix), (bug, fix) = walkthrough()
    project = tmp_path / "project"
    project.mkdir()
    (project / "support_agent.py").write_text(agent, encoding="utf-8")

    # 1. The failing run, recorded against the scripted model (the only step that talks to a model).
    record, *offline = cut_and_run
    result = shell(record, project, user_env(OPENAI_BASE_URL=model_server, OPENAI_API_KEY="sk-test"))
    assert result.returncode == 0 and result.stdout.strip() == "acme has no orders", result.stderr
    recorded_calls = ScriptedModel.calls
    assert recorded_calls == 4

    # 2. check, cut at the tool step, run the case: offline, it fails on the bug.
    env = user_env()
    outputs = [shell(command, project, env) for command in offline]
    check, new, run = outputs
    assert check.returncode == 0 and "repeated_tool_call" in check.stdout, check.stderr
    assert new.returncode == 0, new.stderr
    assert "replay: tools live, models frozen" in new.stdout and "warning" not in new.stderr
    assert run.returncode == 3, run.stdout + run.stderr
    assert "FAIL  must_not_repeat: search_orders" in run.stdout
    assert "FAIL  required_evidence: step 3 was not shown '10.5'" in run.stdout

    # 3. The fix, as the README's diff says; the same commands now pass, still offline.
    source = (project / "support_agent.py").read_text(encoding="utf-8")
    assert source.count(bug) == 1
    (project / "support_agent.py").write_text(source.replace(bug, fix), encoding="utf-8")
    rerun, pytest_run = [shell(command, project, env) for command in after_the_fix]
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "replay stopped at step 3 (departed)" in rerun.stdout and "pass  required_evidence: step 3 was shown '10.5'" in rerun.stdout
    assert pytest_run.returncode == 0, pytest_run.stdout + pytest_run.stderr
    assert "1 passed" in pytest_run.stdout
    assert ScriptedModel.calls == recorded_calls  # nothing after the recording reached a model

    # Replays are not production data: the store lists the one real run; the replays are kept apart.
    runs = shell("agentotel runs --json", project, env)
    assert [r["name"] for r in json.loads(runs.stdout)] == ["support"]
    replays = agentotel.open(project / "agentotel-traces" / "replays").runs().fetchall()
    assert len(replays) == 3  # case run (bug), case run (fix), pytest
