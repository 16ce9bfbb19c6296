"""The views rebuild a model call's input (stored once per conversation) only for a query that reads it."""

from __future__ import annotations

import json

from spanbuild import SpanStore, assistant

import agentotel
from agentotel import semconv as sc
from agentotel.store import StoreWriter


def _helpdesk(directory) -> tuple[dict[str, str], int]:
    """Three help-desk runs of five turns each, one growing conversation per run, written through the store
    writer (so later calls are stored as continuations); returns each call's recorded input and the token sum."""
    store = SpanStore(directory)
    recorded, tokens = {}, 0
    for r in range(3):
        run = store.run("helpdesk", f"desk-{r}", user=f"customer{r}")
        messages = [{"role": "system", "parts": [{"type": "text", "content": "You answer billing questions briefly."}]}]
        for turn in range(5):
            messages.append({"role": "user", "parts": [{"type": "text", "content": f"Invoice {r}-{turn}: why was I charged twice?"}]})
            output = assistant(f"Invoice {r}-{turn} was refunded on day {turn + 1}.")
            span_id = run.raw("chat gpt-4o-mini", {
                sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_PROVIDER_NAME: "openai", sc.GEN_AI_REQUEST_MODEL: "gpt-4o-mini",
                sc.GEN_AI_USAGE_INPUT_TOKENS: 40 + 25 * turn + r, sc.GEN_AI_USAGE_OUTPUT_TOKENS: 12,
                sc.GEN_AI_INPUT_MESSAGES: json.dumps(messages), sc.GEN_AI_OUTPUT_MESSAGES: output,
            }, kind="CLIENT", scope="agentotel.openai")
            recorded[span_id] = json.dumps(messages)
            tokens += 40 + 25 * turn + r
            messages.append(json.loads(output)[0])
    writer = StoreWriter(directory)
    writer.append(store.batch())
    writer.close()
    return recorded, tokens


def test_a_query_that_reads_no_input_rebuilds_none_and_one_that_does_gets_every_input_whole(tmp_path):
    recorded, tokens = _helpdesk(tmp_path)
    with agentotel.open(tmp_path) as traces:
        # The store kept most of these inputs as continuations: there is something to rebuild.
        assert traces.sql("SELECT count(*) FROM _raw_spans WHERE input_chain IS NOT NULL").fetchall()[0][0] >= 10
        for view in ("spans", "llm_calls"):
            plan = traces.sql(f"EXPLAIN SELECT sum(input_tokens) FROM {view}").fetchall()[0][1]
            rebuilt = traces.sql(f"EXPLAIN SELECT sum(length(input)) FROM {view}").fetchall()[0][1]
            # Only the rebuild reads the columns a continuation is stored in.
            assert "input_added" not in plan and "input_added" in rebuilt, view
        assert traces.sql("SELECT sum(input_tokens) FROM spans").fetchall()[0][0] == tokens
        assert traces.sql("SELECT sum(input_tokens) FROM llm_calls").fetchall()[0][0] == tokens
        assert dict(traces.sql("SELECT span_id, input FROM spans WHERE operation = 'chat'").fetchall()) == recorded
        assert dict(traces.sql("SELECT span_id, input FROM llm_calls").fetchall()) == recorded
