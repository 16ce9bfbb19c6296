"""check's baseline of an earlier run's prompt: a model's first call stored as a continuation of another
model's conversation (its `input` NULL in the file) still reaches the history whole."""

from __future__ import annotations

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
