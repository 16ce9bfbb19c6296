"""`python SCRIPT ARGS` for the recording scripts (tests/dialects/producer.py, tests/analysis/twins_producer.py),
each run in a process of its own, forked from one that imported the big libraries once.

Those scripts run in a fresh process because the instrumentations they load patch the SDKs for good. Most of such
a process's CPU was importing openai, langchain and pyarrow again (~2-4 s a run, tens of runs a suite). Here a
server process (one per pytest process and environment) imports them and nothing else - no instrumentation, no
tracer provider, no patch - and forks a child per script run: the child starts from that clean state, runs the
script as `__main__` with its own argv, environment, folder and output files, and exits as the interpreter
would (non-daemon threads joined, atexit handlers run: the tracer providers' last export).

    result = run([script, *args], env=env, timeout=180)   # .returncode, .stdout, .stderr as subprocess.run's

The preloaded libraries are imported before the script's first line, where a fresh process would import them
when the script does: only libraries whose import changes nothing another one sees are preloaded (not the Agents
SDK, which sets up its own tracing on import, nor anthropic, whose SDK traces itself).
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

PRELOAD = ["openai", "langchain_core.tools", "langchain_core.messages", "langchain_core.documents",
           "langchain_core.retrievers", "langchain_openai", "pyarrow.parquet", "opentelemetry.sdk.trace",
           "opentelemetry.sdk.trace.export", "agentotel", "agentotel.store"]

_servers: dict[str, _Server] = {}
_lock = threading.Lock()


class _Server:
    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen([sys.executable, __file__, json.dumps(PRELOAD)], env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        if self._read() != {"ready": True}:
            raise RuntimeError("the fork server did not start")

    def _read(self) -> Any:
        line = self.process.stdout.readline()
        return json.loads(line) if line else None

    def run(self, argv: list[str], env: dict[str, str], cwd: str, timeout: float) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix="forkserver-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            request = {"argv": argv, "env": env, "cwd": cwd, "stdout": str(out), "stderr": str(err)}
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            pid = self._read()["pid"]
            timer = threading.Timer(timeout, _kill, [pid])
            timer.start()
            try:
                reply = self._read()
            finally:
                timer.cancel()
            if reply is None:
                raise RuntimeError("the fork server died")
            return subprocess.CompletedProcess(argv, reply["returncode"], out.read_text(errors="replace"),
                                               err.read_text(errors="replace"))

    def close(self) -> None:
        self.process.stdin.close()  # the server's loop ends with its input
        self.process.wait(timeout=30)
        self.process.stdout.close()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


def run(argv: list[str], *, env: dict[str, str], cwd: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`subprocess.run([sys.executable, *argv], env=env, cwd=cwd, capture_output=True, text=True)`, forked from a
    server started with the same environment (pytest's per-test variable aside)."""
    env = {k: v for k, v in env.items() if k != "PYTEST_CURRENT_TEST"}
    key = json.dumps(sorted(env.items()))
    with _lock:
        server = _servers.get(key)
        if server is None or server.process.poll() is not None:
            server = _servers[key] = _Server(env)
        return server.run([str(a) for a in argv], env, cwd or os.getcwd(), timeout)


@atexit.register
def _close() -> None:
    for server in _servers.values():
        server.close()


# -- the server ------------------------------------------------------------------------------------------------


def _serve(preload: list[str]) -> None:
    import importlib

    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what a preloaded library prints does not reach the channel
    for name in preload:
        importlib.import_module(name)
    requests = os.fdopen(os.dup(0), "r")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)

    def say(message: dict[str, Any]) -> None:
        channel.write(json.dumps(message) + "\n")
        channel.flush()

    say({"ready": True})
    for line in requests:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            channel.close()
            requests.close()
            _child(request)
        say({"pid": pid})
        _, status = os.waitpid(pid, 0)
        say({"returncode": os.waitstatus_to_exitcode(status)})


def _child(request: dict[str, Any]) -> None:
    """The script as `python ARGV` runs it, then the interpreter's exit: never returns."""
    import runpy
    import traceback

    code = 1
    try:
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        script = os.path.abspath(request["argv"][0])
        sys.argv = list(request["argv"])
        sys.path[0] = os.path.dirname(script)
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as exit_:
            if exit_.code is None or isinstance(exit_.code, int):
                code = exit_.code or 0
            else:
                print(exit_.code, file=sys.stderr)
        except BaseException:
            sys.excepthook(*sys.exc_info())  # as the interpreter reports an uncaught exception (a hook may be set)
        threading._shutdown()  # as the interpreter does at exit: non-daemon threads first, then atexit
        atexit._run_exitfuncs()
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__main__":
    _serve(json.loads(sys.argv[1]))
