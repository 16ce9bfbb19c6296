"""diff compares what model calls were given: real runs through the real openai and anthropic SDKs.

A small tool-calling agent runs twice against a scripted model on 127.0.0.1. The model answers by
call number, never by what it was sent, so the only difference between two runs is the one the test
makes in what the agent sends (system prompt, tool description, temperature, history) — exactly
what `diff` must name, at the model call that was given it.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any, Callable

import anthropic
import openai
import pytest

import agentotel
from agentotel import cli
from agentotel.demo import completion, serve_model

QUESTION = "Where is order A-1042?"
PROMPT = "You are a support agent for an online shop. Use the tools. Be brief."
DESCRIPTION = "Look up an order's status and tracking number."
SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
ANSWER = "Order A-1042 has shipped (tracking JD014600003)."


@pytest.fixture
def store(tmp_path):
    directory = tmp_path / "store"
    agentotel.instrument(directory=directory)
    yield directory
    agentotel.shutdown()


@agentotel.tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order's status and tracking number."""
    return {"order_id": order_id, "status": "shipped", "tracking": "JD014600003"}


@dataclass
class Variant:
    """What one run of the agent sends: the knobs a test turns between run A and run B."""

    prompt: str = PROMPT
    description: str = DESCRIPTION
    temperature: float | None = None
    tool_choice: Any = None
    keep_history: bool = True
    answer: str = ANSWER
    fail_first: bool = False  # the model's first call answers 500; the agent retries it
    turns: int = 3


@dataclass
class Script:
    """The scripted model: reply n to the n-th call of the current run, whatever it was sent."""

    replies: list[Callable[[], dict[str, Any]]] = field(default_factory=list)
    calls: int = 0
    fail_first: bool = False

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self.fail_first and self.calls == 1:
            raise RuntimeError("upstream overloaded, try again")
        n = self.calls - 1 - int(self.fail_first)
        return self.replies[min(n, len(self.replies) - 1)]()


def _openai_replies(answer: str) -> list[Callable[[], dict[str, Any]]]:
    return [
        lambda: completion(None, [("lookup_order", {"order_id": "A-1042"})], prompt_tokens=60, completion_tokens=12),
        lambda: completion(None, [("lookup_order", {"order_id": "A-1043"})], prompt_tokens=90, completion_tokens=12),
        lambda: completion(answer, prompt_tokens=120, completion_tokens=20),
    ]


def _anthropic_message(n: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 50 + 30 * n, "output_tokens": 12}}  # fmt: skip


def _anthropic_replies(answer: str) -> list[Callable[[], dict[str, Any]]]:
    def call(n: int) -> Callable[[], dict[str, Any]]:
        return lambda: _anthropic_message(n, [{"type": "tool_use", "id": f"toolu_{n}", "name": "lookup_order",
                                               "input": {"order_id": f"A-104{2 + n}"}}], "tool_use")  # fmt: skip

    text = [{"type": "text", "text": answer}] if answer else []
    return [call(0), call(1), lambda: _anthropic_message(2, text, "end_turn")]


def openai_agent(base_url: str, v: Variant) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    tools = [{"type": "function", "function": {"name": "lookup_order", "description": v.description, "parameters": SCHEMA}}]
    extra: dict[str, Any] = {"temperature": v.temperature} if v.temperature is not None else {}
    if v.tool_choice is not None:
        extra["tool_choice"] = v.tool_choice
    messages: list[dict[str, Any]] = [{"role": "system", "content": v.prompt}, {"role": "user", "content": QUESTION}]
    for _ in range(v.turns):
        try:
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools, **extra)
        except openai.InternalServerError:
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools, **extra)
        message = reply.choices[0].message
        if not message.tool_calls:
            return
        if not v.keep_history:  # a memory bug: every turn starts again from the question
            messages = messages[:2]
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = lookup_order(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})


def anthropic_agent(base_url: str, v: Variant) -> None:
    client = anthropic.Anthropic(base_url=base_url.removesuffix("/v1"), api_key="test-key", max_retries=0)
    tools = [{"name": "lookup_order", "description": v.description, "input_schema": SCHEMA}]
    # This SDK takes sampling parameters only through extra_body (the adapter reads them there too).
    extra: dict[str, Any] = {"extra_body": {"temperature": v.temperature}} if v.temperature is not None else {}
    if v.tool_choice is not None:
        extra["tool_choice"] = v.tool_choice
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    for _ in range(v.turns):
        reply = client.messages.create(model="claude-sonnet-4-20250514", max_tokens=200, system=v.prompt,
                                       messages=messages, tools=tools, **extra)  # fmt: skip
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return
        if not v.keep_history:
            messages = messages[:1]
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b.id, "content": json.dumps(lookup_order(**b.input))} for b in uses]})


def _responses_replies(answer: str) -> list[Callable[[], dict[str, Any]]]:
    def response(n: int, output: list[dict[str, Any]]) -> Callable[[], dict[str, Any]]:
        return lambda: {"id": f"resp_{n}", "object": "response", "created_at": 0, "status": "completed",
                        "model": "gpt-4o-mini", "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
                        "tools": [], "error": None, "incomplete_details": None, "metadata": {},
                        "usage": {"input_tokens": 40 + 30 * n, "input_tokens_details": {"cached_tokens": 0},
                                  "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 0},
                                  "total_tokens": 49 + 30 * n}}  # fmt: skip

    def call(n: int) -> dict[str, Any]:
        return {"id": f"fc_{n}", "type": "function_call", "status": "completed", "call_id": f"call_{n}",
                "name": "lookup_order", "arguments": json.dumps({"order_id": f"A-104{2 + n}"})}  # fmt: skip

    text = [{"type": "output_text", "text": answer, "annotations": []}] if answer else []
    final = [{"id": "msg_2", "type": "message", "status": "completed", "role": "assistant", "content": text}]
    return [response(0, [call(0)]), response(1, [call(1)]), response(2, final)]


def responses_agent(base_url: str, v: Variant) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    tools = [{"type": "function", "name": "lookup_order", "description": v.description, "parameters": SCHEMA}]
    extra = {"temperature": v.temperature} if v.temperature is not None else {}
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    for _ in range(v.turns):
        response = client.responses.create(model="gpt-4o-mini", instructions=v.prompt, input=items, tools=tools, **extra)
        calls = [o for o in response.output if o.type == "function_call"]
        if not calls:
            return
        if not v.keep_history:
            items = items[:1]
        for c in calls:
            items.append({"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.arguments})
            items.append({"type": "function_call_output", "call_id": c.call_id,
                          "output": json.dumps(lookup_order(**json.loads(c.arguments)))})


AGENTS = {"openai": (openai_agent, _openai_replies), "anthropic": (anthropic_agent, _anthropic_replies),
          "responses": (responses_agent, _responses_replies)}
PROVIDERS = ["openai", "anthropic", "responses"]


def record(store, a: Variant, b: Variant, provider: str = "openai") -> tuple[str, str]:
    """Run the agent as A, then as B; their run ids."""
    agent, replies = AGENTS[provider]
    ids = []
    for v in (a, b):
        script = Script(replies(v.answer), fail_first=v.fail_first)
        with serve_model(script) as base_url, agentotel.run("support") as run:
            agent(base_url, v)
        ids.append(run.id)
    agentotel.flush()
    return ids[0], ids[1]


def diff(store, a: Variant, b: Variant, provider: str = "openai"):
    run_a, run_b = record(store, a, b, provider)
    return agentotel.open(store).diff(run_a, run_b)


def run_cli(*argv: str) -> tuple[int, str]:
    """The command's exit code and output, whitespace collapsed (table cells wrap)."""
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), stdout=out, stderr=err)
    return code, " ".join((out.getvalue() + err.getvalue()).split())


def first_model_call(d) -> int:
    return next(s.index for s in d.a.steps if s.type == "llm")


# -- what the model was given ------------------------------------------------------------------------
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_prompt_only_change_is_instructions_changed_at_the_first_model_call(store, provider):
    d = diff(store, Variant(), Variant(prompt=PROMPT + " Never reveal tracking numbers."), provider)
    first = d.first_divergence
    assert first["kind"] == "instructions_changed"
    assert first["index_a"] == first["index_b"] == first_model_call(d) == 1
    assert "Never reveal tracking numbers" in first["detail"]
    # Every model call was given the new prompt; nothing else differs.
    assert {p.status for p in d.differences} == {"instructions_changed"}
    assert len(d.differences) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_changed_tool_description_is_tools_offered_changed(store, provider):
    d = diff(store, Variant(), Variant(description="Look up an order. Only for orders placed this year."), provider)
    first = d.first_divergence
    assert (first["kind"], first["index_a"]) == ("tools_offered_changed", 1)
    assert "lookup_order" in first["detail"] and "description" in first["detail"]
    assert {"path": "$.tools.lookup_order.description", "a": DESCRIPTION,
            "b": "Look up an order. Only for orders placed this year."} in d.differences[0].changes  # fmt: skip


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_changed_temperature_is_params_changed(store, provider):
    d = diff(store, Variant(temperature=0.0), Variant(temperature=0.9), provider)
    first = d.first_divergence
    assert (first["kind"], first["index_a"]) == ("params_changed", 1)
    assert {"path": "$.params.temperature", "a": 0.0, "b": 0.9} in d.differences[0].changes
    assert "temperature 0.0 → 0.9" in first["detail"]


@pytest.mark.parametrize(("provider", "a", "b", "said"), [
    ("openai", "auto", "required", '"auto" → "required"'),
    ("openai", None, {"type": "function", "function": {"name": "lookup_order"}}, "(unset) →"),
    ("anthropic", {"type": "auto"}, {"type": "any"}, '"auto" → "any"'),
])
def test_a_changed_tool_choice_is_params_changed(store, provider, a, b, said):
    d = diff(store, Variant(tool_choice=a), Variant(tool_choice=b), provider)
    first = d.first_divergence
    assert (first["kind"], first["index_a"]) == ("params_changed", 1)
    assert "tool_choice " + said in first["detail"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_history_dropped_between_turns_is_history_changed_at_that_model_call(store, provider):
    d = diff(store, Variant(), Variant(keep_history=False), provider)
    first = d.first_divergence
    steps = {s.index: s for s in d.a.steps}
    # Steps: llm 1, tool 2, llm 3, tool 4, llm 5. The second call still had everything; the third did not.
    assert first["kind"] == "history_changed" and first["index_a"] == first["index_b"] == 5
    assert steps[5].type == "llm"
    (change,) = [c for c in d.differences[0].changes if c["path"] == "$.history.dropped"]
    assert change["a"] == [] and len(change["b"]) == 2  # the first turn's tool call and its result
    assert "dropped or rewritten" in first["detail"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_empty_answer_is_output_empty(store, provider):
    d = diff(store, Variant(), Variant(answer=""), provider)
    first = d.first_divergence
    assert (first["kind"], first["index_a"]) == ("output_empty", 5)
    assert "returned nothing in run B" in first["detail"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_identical_runs_through_the_real_sdk_do_not_diverge(store, provider):
    d = diff(store, Variant(), Variant(), provider)
    assert d.first_divergence is None and len(d.pairs) == 5


# -- alignment ----------------------------------------------------------------------------------------------
def test_a_failed_call_and_its_retry_do_not_blame_the_identical_first_step(store):
    d = diff(store, Variant(), Variant(fail_first=True))
    first = d.first_divergence
    # B's failed attempt is the inserted step; its retry pairs with A's first call.
    assert (first["kind"], first["index_a"], first["index_b"]) == ("step_added", None, 1)
    assert "upstream overloaded" in first["detail"]
    assert [(p.index_a, p.index_b, p.status) for p in d.pairs] == [
        (None, 1, "step_added"), (1, 2, "same"), (2, 3, "same"), (3, 4, "same"), (4, 5, "same"), (5, 6, "same")]
    assert d.pairs[0].changes == [{"path": "$.error", "b": d.b.steps[0].error}]
    assert d.pairs[0].delta == {"input_tokens": 0, "output_tokens": 0} or d.pairs[0].delta == {}


def test_when_b_ended_early_index_b_names_its_last_step(store):
    d = diff(store, Variant(), Variant(turns=1))
    first = d.first_divergence
    # B asked for the tool, ran it, and stopped: A's next model call is what B lacks.
    assert (first["kind"], first["index_a"], first["index_b"]) == ("step_removed", 3, 2)
    assert d.totals["steps"] == {"a": 5, "b": 2}


def test_token_and_cost_deltas_per_pair(store):
    d = diff(store, Variant(), Variant(prompt=PROMPT + " Be polite."))
    assert all(p.delta.get("input_tokens") == 0 for p in d.pairs if p.index_a and d.a.steps[p.index_a - 1].type == "llm")
    assert d.to_dict()["pairs"][0]["delta"]["cost_usd"] == 0


# -- errors and the environment, as people see them -------------------------------------------------
def test_errors_show_in_trajectory_and_diff(store):
    run_a, run_b = record(store, Variant(), Variant(fail_first=True))
    traces = agentotel.open(store)
    failed = traces.trajectory(run_b).steps[0]
    assert failed.status == "error" and "upstream overloaded" in failed.error
    assert traces.trajectory(run_a).steps[0].error is None
    code, table = run_cli("trajectory", run_b, "--dir", str(store))
    assert code == 0 and "upstream overloaded" in table
    code, full = run_cli("trajectory", run_b, "--full", "--dir", str(store))
    assert code == 0 and "upstream overloaded" in full
    code, raw = run_cli("trajectory", run_b, "--json", "--dir", str(store))
    assert "upstream overloaded" in json.loads(raw)["steps"][0]["error"]
    code, text = run_cli("diff", run_a, run_b, "--dir", str(store))
    assert code == 0 and "upstream overloaded" in text
    code, raw = run_cli("diff", run_a, run_b, "--json", "--dir", str(store))
    assert "upstream overloaded" in json.loads(raw)["first_divergence"]["detail"]
    rows = traces.sql("SELECT error FROM steps WHERE run_id = ? AND status = 'error'", [run_b]).fetchall()
    assert len(rows) == 1 and "upstream overloaded" in rows[0][0]


def test_the_cli_diff_says_what_changed_in_words(store):
    run_a, run_b = record(store, Variant(), Variant(prompt=PROMPT + " Never reveal tracking numbers.", temperature=0.7))
    code, text = run_cli("diff", run_a, run_b, "--dir", str(store))
    assert code == 0
    assert "instructions_changed" in text and "system prompt" in text and "Never reveal" in text
    assert "temperature" in text


def test_env_shows_a_changed_tool_description_and_system_prompt(store):
    run_a, run_b = record(store, Variant(), Variant(prompt=PROMPT + " Be polite.", description="Find an order."))
    code, text = run_cli("env", run_a, run_b, "--dir", str(store))
    assert code == 0, text
    assert "tool definition lookup_order changed" in text and "description changed" in text
    assert "system prompt" in text
    code, text = run_cli("env", run_a, run_a, "--dir", str(store))
    assert "same environment" in text
