"""What check compares a run with: an earlier run's prompt (a model's first call stored as a continuation of
another model's conversation, its `input` NULL in the file, still reaches the history whole) and the tool's
own declaration (this run's tool, not a same-named tool of another agent in the process)."""

from __future__ import annotations

import json

import duckdb

import agentotel
from agentotel.analysis._record import load_history, load_run
from agentotel.store import parquet_files

from shapes import Recorder, reply, serve

SYSTEM = {"role": "system", "content": "You are the release assistant. Answer in one sentence."}


def _echoing_model(body: dict) -> dict:
    return {**reply(f"({body['model']}) noted: {body['messages'][-1]['content']}"), "model": body["model"]}


def _two_models(rec: Recorder, task: str) -> str:
    client = rec.client()
    messages = [SYSTEM, {"role": "user", "content": task}]
    draft = client.chat.completions.create(model="gpt-4o-mini", messages=messages).choices[0].message.content
    # The second model is handed the first one's conversation as it stands: its input continues it.
    messages += [{"role": "assistant", "content": draft}, {"role": "user", "content": "Now check the draft."}]
    return client.chat.completions.create(model="gpt-4o", messages=messages).choices[0].message.content


def test_a_second_model_s_first_call_stored_as_a_continuation_is_a_whole_baseline(tmp_path):
    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    try:
        with serve(_echoing_model) as base_url:
            rec = Recorder(directory, base_url)
            earlier = rec.run("release-notes", "v1.2", lambda: _two_models(rec, "Write the notes for v1.2."))
            later = rec.run("release-notes", "v1.3", lambda: _two_models(rec, "Write the notes for v1.3."))
    finally:
        agentotel.shutdown()

    files = [str(f) for f in parquet_files(directory)]
    stored = duckdb.sql(f"SELECT request_model, input IS NULL AS continued FROM read_parquet({files}) "
                        f"WHERE run_id = '{earlier}' AND operation = 'chat' ORDER BY start_time").fetchall()
    assert stored == [("gpt-4o-mini", False), ("gpt-4o", True)]  # what makes this the case under test

    with agentotel.open(directory) as traces:
        history = load_history(traces, load_run(traces, later))
    baseline = {step["model"]: step["input"] for run, step in history.first_calls if run == earlier}
    assert [m["role"] for m in baseline["gpt-4o"]] == ["system", "user", "assistant", "user"]
    assert baseline["gpt-4o"][-1]["parts"][0]["content"] == "Now check the draft."
    assert len(baseline["gpt-4o-mini"]) == 2


def test_a_same_named_tool_of_another_agent_in_the_process_is_not_this_run_s_tool(tmp_path):
    from agentotel.analysis.detectors import findings

    @agentotel.tool(name="lookup", description="Find an order by its id.")
    def orders_lookup(order_id: str) -> dict:
        return {"order_id": order_id, "status": "shipped"}

    @agentotel.tool(name="lookup", description="Find a customer by e-mail.")  # another agent's, same name
    def customers_lookup(email: str) -> dict:
        return {"email": email, "tier": "gold"}

    offered = [{"type": "function", "function": {"name": "lookup", "description": "Find an order by its id.",
                                                 "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                                                "required": ["order_id"]}}}]

    def model(body: dict) -> dict:
        if any(m["role"] == "tool" for m in body["messages"]):
            return reply("Order A-17 has shipped.")
        return reply(None, ("lookup", {"order_id": "A-17"}))

    def agent(rec: Recorder) -> str:
        client = rec.client()
        messages = [{"role": "user", "content": "Where is order A-17?"}]
        first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=offered).choices[0].message
        call = first.tool_calls[0]
        result = orders_lookup(**json.loads(call.function.arguments))
        messages += [first.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call.id, "content": str(result)}]
        return client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=offered).choices[0].message.content

    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    try:
        with serve(model) as base_url:
            rec = Recorder(directory, base_url)
            run = rec.run("orders", "Where is order A-17?", lambda: agent(rec))
    finally:
        agentotel.shutdown()
    with agentotel.open(directory) as traces:
        found = findings(traces, run)
    assert [f.kind for f in found if f.kind == "tools_offered_mismatch"] == []
    assert customers_lookup(email="a@b.c")["tier"] == "gold"  # the other agent's tool still works as declared


def test_a_run_on_another_model_than_every_earlier_run_of_the_agent_is_a_model_changed(tmp_path):
    from agentotel.analysis.detectors import findings

    directory = tmp_path / "traces"
    agentotel.instrument(directory)

    def notes(rec: Recorder, model: str, task: str) -> str:
        return rec.client().chat.completions.create(model=model, messages=[SYSTEM, {"role": "user", "content": task}]).choices[0].message.content

    try:
        with serve(_echoing_model) as base_url:
            rec = Recorder(directory, base_url)
            for n in range(3):
                rec.run("release-notes", f"v1.{n}", lambda n=n: notes(rec, "gpt-4.1", f"Write the notes for v1.{n}."))
            same = rec.run("release-notes", "v1.3", lambda: notes(rec, "gpt-4.1", "Write the notes for v1.3."))
            other = rec.run("release-notes", "v1.4", lambda: notes(rec, "gpt-4o-mini", "Write the notes for v1.4."))
    finally:
        agentotel.shutdown()

    with agentotel.open(directory) as traces:
        changed = [(f.kind, f.layer, f.severity) for f in findings(traces, other)]
        kept = [f.kind for f in findings(traces, same)]
    assert ("model_changed", "product", "info") in changed, changed
    assert "model_changed" not in kept, kept
