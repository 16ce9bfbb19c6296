"""Stores for the view's tests: one long run recorded in a fresh process (the demo's store: tests/conftest.py)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LONG_RUN = textwrap.dedent('''
    import sys
    import agentotel

    agentotel.instrument(sys.argv[1])

    @agentotel.tool
    def read_file(path: str) -> str:
        """Read a file of the repository."""
        if path.endswith("7.py"):
            raise FileNotFoundError(path)
        return "contents of " + path + " </script><script>window.pwned = 1</script>"

    steps = int(sys.argv[2])
    with agentotel.run("long-agent", user="bob", task="read every file") as run:
        for i in range(steps):
            try:
                read_file(f"src/module_{i}.py")
            except FileNotFoundError:
                pass
        run.output = "done"
    assert agentotel.flush()
''')


def record(directory: Path, script: str, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "collector")]), "NO_COLOR": "1",
           "AGENTOTEL_CAPTURE_ENVIRONMENT": "false"}
    proc = subprocess.run([sys.executable, "-c", script, str(directory), *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=directory.parent)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="session")
def long_store(tmp_path_factory):
    """One run of 1,000 tool steps (step 8 of every ten fails), with hostile text in its results."""
    directory = tmp_path_factory.mktemp("view-long") / "traces"
    record(directory, LONG_RUN, "1000")
    return directory


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go: $AGENTOTEL_TEST_ARTIFACTS, else test-artifacts/ in the project (not committed)."""
    path = Path(os.environ.get("AGENTOTEL_TEST_ARTIFACTS") or ROOT / "test-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path
