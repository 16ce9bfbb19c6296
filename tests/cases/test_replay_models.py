"""Model calls answered from a case through the real `openai` SDK (its httpx2 client), no network."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

from agentotel import semconv

from agentotel.cases import ReplayFrontier, new_case, replay
from cases_build import looping_run

TASK = "How many orders does acme have?"
FIRST = [{"role": "user", "content": TASK}]


class ScriptedModel:
    """The 'live' model: a chat-completions endpoint answered in-process, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.calls += 1
        body = {
            "id": f"live-{self.calls}", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "live answer"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return httpx2.Response(200, json=body)


@pytest.fixture
def live():
    return ScriptedModel()


@pytest.fixture
def client(live):
    return openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1", max_retries=0,
                         http_client=httpx2.Client(transport=httpx2.MockTransport(live)))


@pytest.fixture
def case():
    return new_case(looping_run(), at=3, layer="tool", name="orders")


def second_request(completion) -> list[dict]:
    call = completion.choices[0].message.tool_calls[0]
    return FIRST + [
        {"role": "assistant", "content": None, "tool_calls": [{"id": call.id, "type": "function",
                                                               "function": {"name": call.function.name, "arguments": call.function.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": "no orders found"},
    ]


def test_a_recorded_request_gets_its_recorded_answer_and_the_rest_goes_live(client, live, case):
    with replay(case, models="live") as replayer:
        first = client.chat.completions.create(model="gpt-4o-mini", messages=FIRST)
        assert live.calls == 0
        call = first.choices[0].message.tool_calls[0]
        assert call.function.name == "search_orders" and json.loads(call.function.arguments) == {"customer": "acme"}
        assert first.choices[0].finish_reason == "tool_calls" and first.usage.prompt_tokens == 100
        second = client.chat.completions.create(model="gpt-4o-mini", messages=second_request(first))
    assert second.choices[0].message.content == "live answer" and live.calls == 1
    assert [e.outcome for e in replayer.events] == ["served", "live"]
    # outside the replay everything goes to the endpoint
    client.chat.completions.create(model="gpt-4o-mini", messages=FIRST)
    assert live.calls == 2


def test_a_streamed_request_is_answered_as_a_stream(client, live, case):
    with replay(case):
        stream = client.chat.completions.create(model="gpt-4o-mini", messages=FIRST, stream=True,
                                                stream_options={"include_usage": True})
        chunks = list(stream)
    calls = [tc for c in chunks for ch in c.choices for tc in (ch.delta.tool_calls or ())]
    assert calls[0].function.name == "search_orders" and live.calls == 0
    assert chunks[-1].usage.completion_tokens == 20


def test_frozen_models_answer_the_recorded_requests_and_stop_where_the_agent_departs(client, live, case):
    with replay(case, models="frozen") as replayer:
        first = client.chat.completions.create(model="gpt-4o-mini", messages=FIRST)
        again = client.chat.completions.create(model="gpt-4o-mini", messages=second_request(first))
        assert again.choices[0].message.tool_calls[0].function.name == "search_orders"  # the recorded step 3
        fixed = second_request(first)
        fixed[-1]["content"] = '1 orders: [{"id": 1}]'  # what a fixed tool returns: not the recorded result
        with pytest.raises(ReplayFrontier, match=r"departs from the recording at step 5 \(it sends 1 orders: "):
            client.chat.completions.create(model="gpt-4o-mini", messages=fixed)
    assert live.calls == 0 and not replayer.violations
    assert replayer.frontier.outcome == "departed"


def test_a_frozen_replay_stops_at_the_first_request_it_has_no_answer_for(client, live, case):
    case.models = case.models[:1]  # a recording that ends at the cut
    with replay(case, mode="frozen") as replayer:
        first = client.chat.completions.create(model="gpt-4o-mini", messages=FIRST)
        with pytest.raises(ReplayFrontier, match="every recorded answer is served"):
            try:
                client.chat.completions.create(model="gpt-4o-mini", messages=second_request(first))
            except Exception:  # noqa: BLE001 - an agent's catch-all must not swallow the frontier
                pytest.fail("the frontier was caught as an Exception")
    assert live.calls == 0 and not replayer.violations
    assert replayer.frontier is not None and replayer.frontier.kind == "model"


def test_strict_refuses_a_changed_first_request_and_fifo_serves_it(client, live, case):
    changed = [{"role": "system", "content": "Be brief."}] + FIRST
    with replay(case, policy="strict"):
        with pytest.raises(openai.BadRequestError, match="recorded calls are still unserved"):
            client.chat.completions.create(model="gpt-4o-mini", messages=changed)
    with replay(case, policy="fifo") as replayer:
        served = client.chat.completions.create(model="gpt-4o-mini", messages=changed)
    assert served.choices[0].message.tool_calls[0].function.name == "search_orders"
    assert "drifted" in replayer.events[0].detail and live.calls == 0


async def test_the_async_client_is_answered_too(live, case):
    client = openai.AsyncOpenAI(api_key="sk-test", base_url="http://model.test/v1", max_retries=0,
                                http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(live)))
    with replay(case):
        first = await client.chat.completions.create(model="gpt-4o-mini", messages=FIRST)
    assert first.choices[0].message.tool_calls[0].function.name == "search_orders" and live.calls == 0


ANTHROPIC_FIRST = [{"role": "user", "content": TASK}]


def anthropic_case():
    """A case recorded from an Anthropic run (the instrumentation's GenAI shape, Anthropic stop reasons)."""
    from cases_build import llm, record, tool, user

    steps = [
        llm(1, calls=[("search_orders", {"customer": "acme"}, "toolu_1")], messages=[user(TASK)], finish="tool_use"),
        tool(2, "search_orders", {"customer": "acme"}, {"orders": []}, requested_by=1, call_id="toolu_1"),
        llm(3, text="none", messages=[user(TASK)]),
    ]
    steps[0]["model"] = "claude-test-model"
    return new_case(record(*steps), at=3, layer="tool", name="anthropic-orders")


@pytest.fixture
def claude(live):
    import anthropic

    def handler(request):
        live.calls += 1
        return httpx2.Response(200, json={"id": "msg_live", "type": "message", "role": "assistant", "model": "claude-test-model",
                                          "content": [{"type": "text", "text": "live"}], "stop_reason": "end_turn",
                                          "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})

    return anthropic.Anthropic(api_key="sk-ant-test", base_url="http://model.test", max_retries=0,
                               http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def test_anthropic_messages_are_answered_whole_and_streamed(claude, live):
    case = anthropic_case()
    with replay(case, policy="fifo"):
        message = claude.messages.create(model="claude-test-model", max_tokens=100, messages=ANTHROPIC_FIRST)
    assert message.stop_reason == "tool_use" and message.content[0].name == "search_orders"
    assert message.content[0].input == {"customer": "acme"} and live.calls == 0
    with replay(case):
        with claude.messages.stream(model="claude-test-model", max_tokens=100, messages=ANTHROPIC_FIRST) as stream:
            final = stream.get_final_message()
    assert final.content[0].type == "tool_use" and final.content[0].input == {"customer": "acme"} and live.calls == 0
    with replay(case, mode="frozen"):
        claude.messages.create(model="claude-test-model", max_tokens=100, messages=ANTHROPIC_FIRST)
        with pytest.raises(ReplayFrontier, match="agentotel replay frontier of anthropic-orders"):
            claude.messages.create(model="claude-test-model", max_tokens=100, messages=ANTHROPIC_FIRST + [
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "search_orders", "input": {"customer": "acme"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "[]"}]}])


@pytest.mark.parametrize("stream", [False, True])
def test_a_replayed_answer_reports_the_recorded_cache_tokens_so_it_costs_the_same(claude, client, stream, tmp_path):
    """Recorded input tokens include the cache's (GenAI conventions); Anthropic's API counts them apart."""
    import agentotel

    case = anthropic_case()
    case.models[0].usage = {"input_tokens": 1000, "output_tokens": 20, "cache_read_tokens": 600, "cache_write_tokens": 100}
    openai_case = new_case(looping_run(), at=3, layer="tool", name="orders")
    openai_case.models[0].usage = {"input_tokens": 1000, "output_tokens": 20, "cache_read_tokens": 600, "reasoning_tokens": 5}
    agentotel.instrument(tmp_path)
    try:
        with replay(case, policy="fifo"):
            if stream:
                with claude.messages.stream(model="claude-test-model", max_tokens=100, messages=ANTHROPIC_FIRST) as s:
                    s.get_final_message()
            else:
                claude.messages.create(model="claude-test-model", max_tokens=100, messages=ANTHROPIC_FIRST)
        with replay(openai_case):
            if stream:
                list(client.chat.completions.create(model="gpt-4o-mini", messages=FIRST, stream=True,
                                                    stream_options={"include_usage": True}))
            else:
                client.chat.completions.create(model="gpt-4o-mini", messages=FIRST)
        assert agentotel.flush()
        rows = agentotel.open(tmp_path / "replays").sql(
            "SELECT provider, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, "
            "cost_usd, attributes[$recorded] FROM llm_calls ORDER BY provider",
            {"recorded": semconv.AGENTOTEL_REPLAY_RECORDED_COST_USD}).fetchall()
    finally:
        agentotel.shutdown()
    assert [r[:6] for r in rows] == [("anthropic", 1000, 20, 600, 100, None), ("openai", 1000, 20, 600, None, 5)]
    # Served from the recording: nothing was spent now; what the recorded call cost is kept apart.
    assert rows[1][6] == 0 and float(rows[1][7]) > 0
