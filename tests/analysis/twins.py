"""Record the framework twins (twins_producer.py) into a store and judge `diff` and `check` on them.

    python tests/analysis/twins.py agents:agentotel langgraph:openinference ...   # prints the table

Each fault names where its cause shows, by what the step did (not by position: a framework may add a triage
model call or a retry): `ask` the model call that asked for the wrong call, `ask2` the one that asked for the
same call again, `answer` the model call that answered, `desk` the order desk's first model call (its
instructions), `follow_up` the first model call given the follow-up question, `tool` the first get_order
call, `last_llm` the last model call, `last` the run's last step.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROOT = HERE.parent.parent

# fault -> (check's kind, layer, where its cause shows; where diff's first divergence should be)
EXPECTED: dict[str, tuple[str, str, str, str]] = {
    "repeat": ("repeated_tool_call", "model", "ask2", "ask2"),
    "tool_error": ("tool_error_ignored", "tool", "answer", "tool"),
    "ungrounded": ("ungrounded_answer", "model", "answer", "answer"),
    "unknown_tool": ("unknown_tool", "tool", "ask", "ask"),
    "wrong_args": ("wrong_arguments", "tool", "ask", "ask"),
    "invented_id": ("invented_argument", "tool", "ask", "ask"),
    "bad_json": ("invalid_arguments_json", "model", "ask", "ask"),
    "prompt": ("instructions_changed", "prompt", "desk", "desk"),
    "history": ("history_lost", "memory", "follow_up", "follow_up"),
    "empty": ("empty_answer", "model", "answer", "answer"),
    "rate_limit": ("run_failed", "model", "last_llm", "last_llm"),
    "error_result": ("tool_error_unreported", "tool", "tool", "tool"),
    "max_turns": ("run_failed", "workflow", "last", "last"),
}


def produce(store: Path, framework: str, instrumentation: str, faults: list[str]) -> list[dict[str, Any]]:
    """Run the producer in a process of its own (forked from one that imported openai, langchain and pyarrow
    once: tests/forkserver.py); returns its manifest (fault, role, run)."""
    from tests import forkserver

    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'collector'}", "OTEL_SDK_DISABLED": "false"}
    result = forkserver.run([HERE / "twins_producer.py", json.dumps(
        {"store": str(store), "framework": framework, "instrumentation": instrumentation, "faults": faults})],
        timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads((store / "manifest.json").read_text())


def _asked(step: dict[str, Any]) -> list[str]:
    from agentotel.analysis._steps import requested_calls

    return [c.name for c in requested_calls(step) if not c.name.startswith("transfer_to")]


def _gave(step: dict[str, Any], text: str) -> bool:
    from agentotel.analysis._steps import input_messages, message_text

    return any(m.get("role") == "user" and text in message_text(m) for m in input_messages(step))


def where(steps: list[dict[str, Any]], role: str) -> int | None:
    """The index of the step a role names in a run's steps (None when the run has no such step)."""
    llm = [s for s in steps if s["type"] == "llm"]
    asking = [s for s in llm if _asked(s)]
    if role == "ask":
        return asking[0]["index"] if asking else None
    if role == "after_ask":
        return next((s["index"] for s in llm if asking and s["index"] > asking[0]["index"]), None)
    if role == "ask2":
        return asking[1]["index"] if len(asking) > 1 else None
    if role == "answer":  # the first answer: where a wrong one shows (a framework may ask again after it)
        done = [s for s in llm if not _asked(s) and s["status"] == "ok" and not any(c.startswith("transfer_to") for c in _names(s))]
        return done[0]["index"] if done else None
    if role == "desk":
        desk = [s for s in llm if not any(c.startswith("transfer_to") for c in _names(s))]
        return desk[0]["index"] if desk else None
    if role == "follow_up":
        from twins_producer import FOLLOW_UP

        given = [s for s in llm if _gave(s, FOLLOW_UP)]
        return given[0]["index"] if given else None
    if role == "tool":
        tools = [s for s in steps if s["type"] == "tool" and s.get("tool_name") == "get_order"]
        return tools[0]["index"] if tools else None
    if role == "last_llm":
        return llm[-1]["index"] if llm else None
    if role == "last":
        return steps[-1]["index"] if steps else None
    raise ValueError(role)


def _names(step: dict[str, Any]) -> list[str]:
    from agentotel.analysis._steps import requested_calls

    return [c.name for c in requested_calls(step)]


@dataclass
class Verdict:
    framework: str
    instrumentation: str
    fault: str
    good_alarms: list[str]  # warning/error findings on the healthy twin (false alarms)
    check_expected: tuple[str, int | None, str]  # (kind, step, layer)
    check_got: tuple[str, int | None, str] | None  # the top finding (most severe, then earliest)
    diff_expected: int | None
    diff_got: int | None
    diff_kind: str | None

    @property
    def check_ok(self) -> bool:
        return self.check_got is not None and self.check_got[1:] == self.check_expected[1:]

    @property
    def diff_ok(self) -> bool:
        return self.diff_got == self.diff_expected

    def row(self) -> str:
        got = "none" if self.check_got is None else f"{self.check_got[0]}@{self.check_got[1]}/{self.check_got[2]}"
        kind, step, layer = self.check_expected
        return (f"| {self.framework} | {self.instrumentation} | {self.fault} | {kind}@{step}/{layer} | {got} "
                f"| {'ok' if self.check_ok else 'WRONG'} | {self.diff_expected} | {self.diff_got} ({self.diff_kind}) "
                f"| {'ok' if self.diff_ok else 'WRONG'} | {', '.join(self.good_alarms) or '-'} |")


def judge(store: Path, manifest: list[dict[str, Any]], framework: str, instrumentation: str) -> list[Verdict]:
    import agentotel
    from agentotel.analysis.detectors import SEVERITIES

    out = []
    with agentotel.open(store) as traces:
        runs = {(m["fault"], m["role"]): m["run"] for m in manifest}
        for (fault, role), run in list(runs.items()):
            if run.startswith("name:"):  # a run found by its name: the runs of that name in start order
                named = [r[0] for r in traces.sql("SELECT run_id FROM runs WHERE name = $n ORDER BY start_time",
                                                  {"n": run[5:]}).fetchall()]
                runs[(fault, role)] = named[["good1", "good2", "faulty"].index(role)] if len(named) == 3 else run
        for fault in dict.fromkeys(m["fault"] for m in manifest):
            kind, layer, check_role, diff_role = EXPECTED[fault]
            good, faulty = runs[(fault, "good2")], runs[(fault, "faulty")]
            steps = [s.__dict__ if not isinstance(s, dict) else s for s in traces.trajectory(faulty).to_dict()["steps"]]
            if fault == "tool_error" and traces.trajectory(faulty).run.get("status") == "error":
                # The framework let the tool's exception end the run (LangGraph's ToolNode, pydantic-ai): the
                # run failed at the tool.
                kind, layer, check_role, diff_role = "run_failed", "tool", "tool", "tool"
            elif fault == "bad_json" and where(steps, "ask") is None:
                # The instrumentation kept no trace of the call that was no JSON (LangChain moves it to
                # invalid_tool_calls, which OpenInference and OpenLLMetry do not record): the record shows a model
                # call that said nothing, and the run ended there.
                kind, layer, check_role, diff_role = "empty_answer", "model", "last_llm", "last_llm"
            elif fault in ("tool_error", "error_result") and not any(
                    s.type == "tool" for s in traces.trajectory(faulty).steps):
                # Only the model client was instrumented: the tool's error shows in what the next model call was
                # given, and the answer that went on without saying so.
                kind, layer, check_role, diff_role = "tool_error_ignored", "tool", "answer", "after_ask"
            alarms = [f"{f.kind}@{f.index}" for f in traces.findings(good) if f.severity in ("warning", "error")]
            found = traces.findings(faulty)
            top = sorted(found, key=lambda f: (-SEVERITIES.index(f.severity), f.index if f.index is not None else 0))
            got = (top[0].kind, top[0].index, top[0].layer) if top else None
            diff = traces.diff(good, faulty).first_divergence or {}
            out.append(Verdict(framework, instrumentation, fault, alarms, (kind, where(steps, check_role), layer), got,
                               where(steps, diff_role), diff.get("index_b"), diff.get("kind")))
    return out


HEADER = ("| framework | instrumentation | fault | check expected | check got (top) | | diff expected | diff got | | "
          "false alarms on the good twin |\n|---|---|---|---|---|---|---|---|---|---|")


if __name__ == "__main__":
    import tempfile

    sys.path[:0] = [str(ROOT), str(HERE)]
    faults = [f for f in os.environ.get("TWINS_FAULTS", ",".join(EXPECTED)).split(",") if f]
    print(HEADER)
    for spec in sys.argv[1:]:
        framework, instrumentation = spec.split(":")
        with tempfile.TemporaryDirectory() as tmp:
            store = Path(tmp) / "store"
            store.mkdir()
            manifest = produce(store, framework, instrumentation, faults)
            for verdict in judge(store, manifest, framework, instrumentation):
                print(verdict.row(), flush=True)
