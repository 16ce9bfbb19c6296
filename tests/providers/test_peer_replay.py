"""Other projects' recorded SDK traffic (peer_cassettes/) replayed through the real SDKs: every span checked against the recording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agentotel
from agentotel import _context
from agentotel.semconv import (
    AGENTOTEL_COST_USD,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_REQUEST_TOP_K,
    GEN_AI_REQUEST_TOP_P,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_ID,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    SERVER_ADDRESS,
)
from agentotel.providers import uninstrument_providers
from tests.providers import peer_replay

PEER = Path(__file__).parent / "peer_cassettes"
ALL = sorted(str(p.relative_to(PEER)) for p in peer_replay.cassettes_under([str(PEER)]))


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch):
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def replayed(telemetry, name: str) -> list[peer_replay.Outcome]:
    """The traced calls of one cassette, each replayed and checked."""
    outcomes = [o for o in peer_replay.replay_cassette(PEER / name, telemetry.exporter) if not o.call.untraced]
    assert outcomes and not [o.replay_error for o in outcomes if o.replay_error]
    return outcomes


def output(outcome: peer_replay.Outcome) -> list[dict]:
    (span,) = outcome.spans
    return json.loads(span.attributes[GEN_AI_OUTPUT_MESSAGES])


@pytest.mark.parametrize("name", ALL)
def test_every_recorded_call_gives_one_correct_span(telemetry, name):
    outcomes = replayed(telemetry, name)
    assert [(o.call.index, o.details) for o in outcomes if o.mismatches] == []


@pytest.mark.parametrize("name", ALL)
def test_with_content_capture_off_the_same_spans_carry_no_messages(telemetry, capture_off, name):
    outcomes = replayed(telemetry, name)
    assert [(o.call.index, o.details) for o in outcomes if o.mismatches] == []
    assert all(GEN_AI_OUTPUT_MESSAGES not in o.spans[0].attributes for o in outcomes)


def test_the_check_fails_a_call_that_made_no_span(telemetry):
    uninstrument_providers()  # the recording still plays; nothing of ours records it
    outcomes = replayed(telemetry, "langchain-openai/test_custom_tool.yaml.gz")
    assert all(o.mismatches == ["span_count"] for o in outcomes)


def test_responses_custom_tool_calls_are_tool_calls(telemetry):
    """A custom tool (free-text input, not JSON arguments) is called, answered and streamed like a function tool."""
    called, answered, streamed = replayed(telemetry, "langchain-openai/test_custom_tool.yaml.gz")
    for outcome in (called, streamed):
        (span,) = outcome.spans
        assert span.attributes[GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_calls",)
        (call,) = [p for p in output(outcome)[0]["parts"] if p["type"] == "tool_call"]
        assert call["name"] == "execute_code" and call["arguments"] == "print(3**3)" and call["id"].startswith("call_")
    (span,) = answered.spans
    parts = [p for m in json.loads(span.attributes[GEN_AI_INPUT_MESSAGES]) for p in m["parts"]]
    asked = next(p for p in parts if p["type"] == "tool_call")
    result = next(p for p in parts if p["type"] == "tool_call_response")
    assert (asked["name"], asked["arguments"], result["id"], result["response"]) == ("execute_code", "print(3**3)", asked["id"], "27")


def test_anthropic_stream_keeps_tool_calls_and_results_that_arrive_whole(telemetry):
    """Programmatic tool use: code execution calls a client tool, whose input comes whole in the block's start event."""
    with agentotel.run("programmatic"):
        asked, answered = replayed(telemetry, "langchain-anthropic/test_programmatic_tool_use_streaming.yaml.gz")
        pending = _context.current_run().pending_tool_calls()
    calls = [p for p in output(asked)[0]["parts"] if p["type"] == "tool_call"]
    assert [(c["name"], c["arguments"]) for c in calls][1] == ("get_weather", {"location": "Boston"})
    assert calls[0]["name"] == "code_execution" and "get_weather" in calls[0]["arguments"]["code"]
    # The server tool's result is kept as it is in a non-streamed answer (a part of its own type).
    result, text = output(answered)[0]["parts"]
    assert result["type"] == "code_execution_tool_result" and result["content"]["content"]["stdout"] == "It's sunny.\n"
    assert text["type"] == "text" and "sunny" in text["content"]
    # The client tool is the run's pending call (a later @agentotel.tool links to it); the server's is not.
    assert pending == [_context.PendingToolCall("toolu_01GBP4TihhPzB1SU2W4r2wbS", "get_weather", {"location": "Boston"})]


def test_bedrock_counts_a_body_leaves_out_come_from_bedrock(telemetry):
    """Nova behind a guardrail: the body's usage has input tokens only; the output count is in Bedrock's headers."""
    (outcome,) = replayed(telemetry, "openllmetry-bedrock/test_nova_completion.yaml")
    (span,) = outcome.spans
    assert (span.attributes[GEN_AI_USAGE_INPUT_TOKENS], span.attributes[GEN_AI_USAGE_OUTPUT_TOKENS]) == (30, 51)


def test_bedrock_ai21_jurassic_bodies_are_read(telemetry):
    (outcome,) = replayed(telemetry, "openllmetry-bedrock/test_ai21_j2_completion_string_content.yaml")
    (span,) = outcome.spans
    a = span.attributes
    assert (a[GEN_AI_REQUEST_MAX_TOKENS], a[GEN_AI_REQUEST_TEMPERATURE], a[GEN_AI_REQUEST_TOP_P]) == (200, 0.5, 0.5)
    assert a[GEN_AI_RESPONSE_FINISH_REASONS] == ("endoftext",) and a[GEN_AI_RESPONSE_ID] == "1234"
    assert "Amazon Bedrock es" in output(outcome)[0]["parts"][0]["content"]
    assert "Translate to spanish" in json.loads(a[GEN_AI_INPUT_MESSAGES])[0]["parts"][0]["content"]
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == (26, 42)  # Bedrock's counts


@pytest.mark.parametrize(
    "name, model, text, finish, tokens",
    [
        # gpt-oss on Bedrock answers with a chat completion, usage included
        ("openinference-bedrock/TestOpenAIInvokeModel.test_invoke_model.yaml", "us.openai.gpt-6-sol", "pong", "stop", (17, 5)),
        # an imported model (an ARN) answers with a text completion; the counts are Bedrock's
        ("openllmetry-bedrock/test_imported_model_completion.yaml", "/opt/ml/model", " I'm a high school student.", "length", (6, 100)),
    ],
)
def test_bedrock_openai_shaped_bodies_are_read_as_openai_reads_them(telemetry, name, model, text, finish, tokens):
    (outcome,) = replayed(telemetry, name)
    (span,) = outcome.spans
    a = span.attributes
    assert a[GEN_AI_RESPONSE_MODEL] == model and a[GEN_AI_RESPONSE_FINISH_REASONS] == (finish,)
    assert output(outcome)[0]["parts"][0]["content"].startswith(text)
    assert (a[GEN_AI_USAGE_INPUT_TOKENS], a[GEN_AI_USAGE_OUTPUT_TOKENS]) == tokens


def test_bedrock_nova_invoke_parameters_in_either_spelling(telemetry):
    """Nova's InvokeModel takes `maxTokens` / `topP` (the Converse spelling) as well as its own `max_new_tokens` / `top_p`."""
    (outcome,) = replayed(telemetry, "openinference-bedrock/TestNovaInvokeModel.test_nova_with_tool_use.yaml")
    (span,) = outcome.spans
    assert span.attributes[GEN_AI_REQUEST_MAX_TOKENS] == 256
    (call,) = [p for p in output(outcome)[0]["parts"] if p["type"] == "tool_call"]
    assert (call["name"], call["arguments"]) == ("get_weather", {"location": "Seattle"})


def test_bedrock_nova_invoke_own_spelling(telemetry, model_server):
    import boto3

    from tests.providers.conftest import Scripted

    model_server.script(Scripted({"output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}}, "stopReason": "end_turn",
                                  "usage": {"inputTokens": 3, "outputTokens": 1}}))  # fmt: skip
    client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=model_server.url)
    body = {"messages": [{"role": "user", "content": [{"text": "hello"}]}], "inferenceConfig": {"max_new_tokens": 32, "top_p": 0.5, "top_k": 7}}
    client.invoke_model(modelId="amazon.nova-micro-v1:0", body=json.dumps(body))["body"].read()
    a = telemetry.one().attributes
    assert (a[GEN_AI_REQUEST_MAX_TOKENS], a[GEN_AI_REQUEST_TOP_P], a[GEN_AI_REQUEST_TOP_K]) == (32, 0.5, 7)


def test_anthropic_sdk_calls_served_by_bedrock_name_bedrock_as_provider(telemetry):
    """AnthropicBedrock (async here): the same messages API, served and billed by AWS Bedrock."""
    (outcome,) = replayed(telemetry, "openllmetry-anthropic/test_async_anthropic_bedrock_regular_create.yaml")
    (span,) = outcome.spans
    a = span.attributes
    assert a[GEN_AI_PROVIDER_NAME] == "aws.bedrock" and a[GEN_AI_REQUEST_MODEL] == "anthropic.claude-3-haiku-20240307-v1:0"
    assert a[SERVER_ADDRESS] == "bedrock-runtime.us-east-1.amazonaws.com" and a[AGENTOTEL_COST_USD] > 0
