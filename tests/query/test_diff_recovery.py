"""diff on runs with retries, parallel tool calls and harness faults: real runs through the real openai
and anthropic SDKs against a scripted model on 127.0.0.1.

An inventory agent asks for two tools in parallel (stock level and supplier ETA), then answers. The
scripted model reads what it is sent as a model would: it asks again for a call whose result was an
error, and answers from the results it was given. The harness knobs are what production runs differ
in: a tool that times out once, parallel calls executed in another order, a result whose keys come in
another order (harmless), and the faults a diff must place: a parallel result dropped, a result cut
short by a context budget, a loop stopped early, a wrong answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anthropic
import openai
import pytest

import agentotel
from agentotel.demo import completion, serve_model

QUESTION = "Can we ship 40 units of SKU-7731 to Rotterdam next week?"
PROMPT = "You are the inventory assistant. Check stock and the supplier's ETA before answering."
SCHEMAS = {
    "stock_level": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
    "supplier_eta": {"type": "object", "properties": {"sku": {"type": "string"}, "site": {"type": "string"}},
                     "required": ["sku", "site"]},
}
CALLS = [("stock_level", {"sku": "SKU-7731"}), ("supplier_eta", {"sku": "SKU-7731", "site": "Rotterdam"})]


@pytest.fixture
def store(tmp_path):
    directory = tmp_path / "store"
    agentotel.instrument(directory=directory)
    yield directory
    agentotel.shutdown()


@dataclass
class Knobs:
    """What one run of the agent does differently."""

    flaky: str | None = None  # this tool's first call times out
    reverse: bool = False  # parallel calls executed last first
    harness_retry: bool = False  # the harness retries a failed tool call itself (the model never sees the error)
    keys_reversed: bool = False  # results with their keys in another order
    drop_second: bool = False  # the harness runs only the first of the parallel calls
    cut: str | None = None  # this tool's result reaches the model cut short
    max_model_calls: int = 5
    wrong_answer: bool = False  # the model misreads the stock level
    ask_twice: bool = False  # the model asks for both tools again after good results (a repeated loop)
    failures: dict[str, int] = field(default_factory=dict)


CURRENT = Knobs()  # the run being recorded


@agentotel.tool
def stock_level(sku: str) -> dict[str, Any]:
    """Units on hand and reserved for a SKU."""
    return _result("stock_level", {"sku": sku, "on_hand": 120, "reserved": 35, "bin": "R-14"})


@agentotel.tool
def supplier_eta(sku: str, site: str) -> dict[str, Any]:
    """Days until the supplier delivers a SKU to a site."""
    return _result("supplier_eta", {"sku": sku, "site": site, "eta_days": 4, "carrier": "Maersk"})


def _result(name: str, value: dict[str, Any]) -> dict[str, Any]:
    knobs = CURRENT
    if knobs.flaky == name and not knobs.failures.get(name):
        knobs.failures[name] = 1
        raise TimeoutError(f"{name} did not answer within 5 s")
    return dict(reversed(list(value.items()))) if knobs.keys_reversed else value


TOOLS = {"stock_level": stock_level, "supplier_eta": supplier_eta}


def _model_step(results: dict[str, str], asked: list[str], knobs: Knobs) -> tuple[str | None, list[tuple[str, dict]]]:
    """The scripted model's next step from the tool results it was given (by tool), in order of asking."""
    if not asked or (knobs.ask_twice and len(asked) == 2 and not any(r.startswith("Error") for r in results.values())):
        return None, CALLS
    wrong = knobs.wrong_answer
    failed = [name for name, text in results.items() if text.startswith("Error")]
    if failed:
        return None, [c for c in CALLS if c[0] in failed]
    stock = json.loads(results["stock_level"]) if results.get("stock_level", "").startswith("{") else None
    eta = json.loads(results["supplier_eta"]) if results.get("supplier_eta", "").startswith("{") else None
    if stock is None or eta is None:
        return "I could not check both stock and the supplier's ETA.", []
    free = stock["on_hand"] - stock["reserved"] + (200 if wrong else 0)
    return f"Yes: {free} units are free and the supplier delivers in {eta['eta_days']} days.", []


def openai_responder(knobs: Knobs):
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        results, asked, names = {}, [], {}
        for m in request["messages"]:
            for c in m.get("tool_calls") or []:
                names[c["id"]] = c["function"]["name"]
                asked.append(c["function"]["name"])
            if m["role"] == "tool":
                results[names[m["tool_call_id"]]] = m["content"]
        text, calls = _model_step(results, asked, knobs)
        return completion(text, calls, prompt_tokens=40 * len(request["messages"]), completion_tokens=15)

    return respond


def anthropic_responder(knobs: Knobs):
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        results, asked, names = {}, [], {}
        for m in request["messages"]:
            for block in m["content"] if isinstance(m["content"], list) else []:
                if block["type"] == "tool_use":
                    names[block["id"]] = block["name"]
                    asked.append(block["name"])
                elif block["type"] == "tool_result":
                    results[names[block["tool_use_id"]]] = block["content"]
        text, calls = _model_step(results, asked, knobs)
        content = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": f"toolu_{len(request['messages'])}_{i}", "name": n, "input": a}
                    for i, (n, a) in enumerate(calls)]
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": content,
                "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 40 * len(request["messages"]), "output_tokens": 15}}

    return respond


def _execute(knobs: Knobs, calls: list[tuple[str, str, dict]]) -> list[tuple[str, str]]:
    """(call id, result text) for the calls the harness runs, in the order it sends them back."""
    run = calls[:1] if knobs.drop_second and len(calls) > 1 else calls
    done = []
    for call_id, name, arguments in (list(reversed(run)) if knobs.reverse else run):
        try:
            text = json.dumps(TOOLS[name](**arguments))
        except TimeoutError as exc:
            text = f"Error: TimeoutError: {exc}"
            if knobs.harness_retry:
                text = json.dumps(TOOLS[name](**arguments))
        if knobs.cut == name and not text.startswith("Error"):
            text = "[cut to fit the context]"
        done.append((call_id, text))
    return sorted(done, key=lambda d: [c[0] for c in calls].index(d[0]))  # sent back in the order asked


def openai_agent(base_url: str, knobs: Knobs) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    tools = [{"type": "function", "function": {"name": n, "description": n, "parameters": s}} for n, s in SCHEMAS.items()]
    messages: list[dict[str, Any]] = [{"role": "system", "content": PROMPT}, {"role": "user", "content": QUESTION}]
    for _ in range(knobs.max_model_calls):
        message = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools).choices[0].message
        if not message.tool_calls:
            return
        messages.append(message.model_dump(exclude_none=True))
        calls = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
        messages += [{"role": "tool", "tool_call_id": i, "content": text} for i, text in _execute(knobs, calls)]


def anthropic_agent(base_url: str, knobs: Knobs) -> None:
    client = anthropic.Anthropic(base_url=base_url.removesuffix("/v1"), api_key="test-key", max_retries=0)
    tools = [{"name": n, "description": n, "input_schema": s} for n, s in SCHEMAS.items()]
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    for _ in range(knobs.max_model_calls):
        reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=300, system=PROMPT, messages=messages,
                                       tools=tools)
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        done = _execute(knobs, [(b.id, b.name, b.input) for b in uses])
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": t} for i, t in done]})


AGENTS = {"openai": (openai_agent, openai_responder), "anthropic": (anthropic_agent, anthropic_responder)}


def diff(store, a: Knobs, b: Knobs, provider: str = "openai"):
    global CURRENT
    agent, responder = AGENTS[provider]
    ids = []
    for knobs in (a, b):
        CURRENT = knobs
        with serve_model(responder(knobs)) as base_url, agentotel.run("inventory") as run:
            agent(base_url, knobs)
        ids.append(run.id)
    agentotel.flush()
    return agentotel.open(store).diff(*ids)


def steps(trajectory) -> list[str]:
    return [f"{s.type}:{s.tool_name or ''}:{s.status}" for s in trajectory.steps]


def last_model_call(trajectory) -> int:
    return max(s.index for s in trajectory.steps if s.type == "llm")


# -- harmless differences ---------------------------------------------------------------------------------
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_runs_differing_in_call_order_key_order_and_ids_do_not_diverge(store, provider):
    d = diff(store, Knobs(), Knobs(reverse=True, keys_reversed=True), provider)
    assert [s.tool_name for s in d.b.steps if s.type == "tool"] == ["supplier_eta", "stock_level"]  # really reordered
    assert d.first_divergence is None
    assert {p.status for p in d.pairs} == {"same"}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_timeout_and_the_model_asking_again_are_the_only_difference(store, provider):
    d = diff(store, Knobs(flaky="supplier_eta"), Knobs(), provider)
    # A: llm, stock_level, supplier_eta (timed out), llm asking again, supplier_eta, llm answer.
    assert steps(d.a) == ["llm::ok", "tool:stock_level:ok", "tool:supplier_eta:error", "llm::ok", "tool:supplier_eta:ok",
                          "llm::ok"]
    # The failed call and the call asking again are A's extra steps; every other step pairs and is the same,
    # the answer included (it was given the same results).
    assert [(p.index_a, p.index_b, p.status) for p in d.pairs if p.status != "same"] == [
        (3, None, "step_removed"), (4, None, "step_removed")]
    assert d.first_divergence["index_a"] == 3 and "TimeoutError" in d.first_divergence["detail"]


def test_a_tool_call_the_harness_retried_is_an_added_step_only(store):
    d = diff(store, Knobs(), Knobs(flaky="stock_level", harness_retry=True, reverse=True))
    assert steps(d.b) == ["llm::ok", "tool:supplier_eta:ok", "tool:stock_level:error", "tool:stock_level:ok", "llm::ok"]
    assert [(p.index_a, p.index_b, p.status) for p in d.pairs if p.status != "same"] == [(None, 3, "step_added")]
    assert (d.first_divergence["kind"], d.first_divergence["index_b"]) == ("step_added", 3)


# -- faults, placed where they show ---------------------------------------------------------------------------
@pytest.mark.parametrize(("a", "b"), [(Knobs(flaky="supplier_eta"), Knobs(wrong_answer=True)),
                                      (Knobs(), Knobs(flaky="stock_level", wrong_answer=True))])
def test_a_wrong_answer_is_found_past_a_retry_in_either_run(store, a, b):
    d = diff(store, a, b)
    first = d.first_divergence
    assert (first["kind"], first["index_b"]) == ("output_changed", last_model_call(d.b))
    assert "units are free" in json.dumps(d.to_dict()["pairs"])


def test_a_dropped_parallel_result_shows_at_the_next_model_call(store):
    d = diff(store, Knobs(flaky="stock_level"), Knobs(drop_second=True))
    # B ran only stock_level; its next model call (step 3) was sent the conversation without supplier_eta.
    assert steps(d.b) == ["llm::ok", "tool:stock_level:ok", "llm::ok"]
    first = d.first_divergence
    assert (first["kind"], first["index_b"]) == ("step_removed", 3)
    assert "supplier_eta" in first["detail"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("flaky", [None, "supplier_eta"])
def test_a_result_cut_short_is_history_changed_at_the_model_call_given_it(store, provider, flaky):
    d = diff(store, Knobs(), Knobs(cut="stock_level", flaky=flaky), provider)
    first = d.first_divergence
    given = next(s.index for s in d.b.steps if s.type == "llm" and s.index > 1)  # the first call given any result
    assert (first["kind"], first["index_b"]) == ("history_changed", given)
    assert "cut short" in first["detail"] and "stock_level" in first["detail"]


def test_a_loop_stopped_early_after_a_retry_is_placed_at_b_s_last_step(store):
    d = diff(store, Knobs(), Knobs(flaky="stock_level", max_model_calls=2))
    # B: llm, stock_level (timed out), supplier_eta, llm asking again, stock_level — then the loop stops.
    assert steps(d.b)[-1] == "tool:stock_level:ok"
    first = d.first_divergence
    assert (first["kind"], first["index_b"]) == ("step_removed", len(d.b.steps))
    assert "ended after its step" in first["detail"]


def test_the_same_failure_in_both_runs_stays_paired(store):
    d = diff(store, Knobs(flaky="supplier_eta"), Knobs(flaky="supplier_eta", wrong_answer=True))
    # Both runs' supplier_eta timed out and was asked for again: those steps pair as the same; the answer differs.
    assert steps(d.a) == steps(d.b)
    assert [(p.index_a, p.index_b, p.status) for p in d.pairs if p.status != "same"] == [(6, 6, "output_changed")]
    assert (d.first_divergence["kind"], d.first_divergence["index_b"]) == ("output_changed", 6)


@pytest.mark.parametrize("flaky", [None, "stock_level"])
def test_a_repeated_loop_is_placed_at_the_model_call_that_asked_again(store, flaky):
    d = diff(store, Knobs(flaky=flaky), Knobs(ask_twice=True))
    # B: llm, stock_level, supplier_eta, llm asking for both again, stock_level, supplier_eta, llm answer.
    assert steps(d.b) == ["llm::ok", "tool:stock_level:ok", "tool:supplier_eta:ok"] * 2 + ["llm::ok"]
    first = d.first_divergence
    assert (first["kind"], first["index_b"]) == ("step_added", 4)
    assert [p.index_b for p in d.pairs if p.status == "step_added"] == [4, 5, 6]
