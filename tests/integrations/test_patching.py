"""The framework patches: applied by instrument() when a framework is imported later, removed by uninstrument()."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_a_failing_instrumentation_never_breaks_a_frameworks_agent(store, model_server, monkeypatch):
    """Every tool call's record fails inside agentotel (logged, not raised, as in production): each framework's
    agent still gets its tool results and answers, and its exceptions are still its own."""
    import asyncio

    from agents import Runner
    from pydantic_ai import ModelRetry

    from agentotel.tools import DefinedTool
    from tests.integrations import test_langchain as lc
    from tests.integrations import test_openai_agents as oa
    from tests.integrations import test_pydantic_ai as pa
    from tests.integrations.conftest import ANSWER, chat_tool_calls

    def broken(self):
        raise RuntimeError("agentotel is broken")

    monkeypatch.delenv("AGENTOTEL_RAISE_INTERNAL_ERRORS")
    monkeypatch.setattr(DefinedTool, "register", broken)
    assert asyncio.run(Runner.run(oa._agent(model_server, "chat"), "Weather in Paris?")).final_output == ANSWER
    assert lc._graph(model_server).invoke(lc._question())["messages"][-1].content == ANSWER
    agent = pa._agent(model_server, weather=False)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        if city != "Paris":
            raise ModelRetry("Spell the city with a capital letter.")
        return f"18C, cloudy in {city}"

    model_server.before.append(chat_tool_calls(("call_retry_0", "get_weather", {"city": "paris"})))
    assert agent.run_sync("Weather in Paris?").output == ANSWER
    # No tool step could be recorded; the model steps and runs still were.
    assert store.traces().sql("select count(*) from tool_calls").fetchall() == [(0,)]
    assert store.traces().sql("select count(*) from llm_calls").fetchall()[0][0] >= 7
