"""The framework patches: applied by instrument() when a framework is imported later, removed by uninstrument()."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_frameworks_imported_after_instrument_are_patched_and_unpatched(tmp_path):
    script = textwrap.dedent(
        f"""
        import json, sys
        import agentotel
        from agentotel.integrations import patched_attributes
        agentotel.instrument({str(tmp_path / "traces")!r})
        before = patched_attributes()
        import agents, langchain_core.tools, langgraph.pregel, pydantic_ai, mcp.client.session  # after instrument()
        from langchain_core.tools import BaseTool
        after = patched_attributes()
        agentotel.uninstrument()
        restored = patched_attributes()
        plain = not hasattr(BaseTool.__dict__["run"], "__wrapped__")
        agentotel.instrument()
        again = patched_attributes()
        print(json.dumps({{"before": before, "after": after, "restored": restored, "plain": plain, "again": again}}))
        """
    )
    env = {"PYTHONPATH": f"{ROOT}:{ROOT / 'collector'}", "PATH": "/usr/bin:/bin", "AGENTOTEL_CAPTURE_ENVIRONMENT": "false"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["before"] == []
    for expected in ("agents.run_internal.tool_execution._invoke_function_tool_with_metadata", "AgentRunner.run", "BaseTool.run", "BaseTool.arun",
                     "BaseRetriever.invoke", "ToolManager._raw_execute", "Agent.iter", "ClientSession.call_tool",
                     "ClientSession.list_tools", "Pregel.invoke", "Pregel.astream"):
        assert expected in result["after"], (expected, result["after"])
    assert result["restored"] == [] and result["plain"]
    assert sorted(result["again"]) == sorted(result["after"])
