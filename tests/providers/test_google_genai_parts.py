"""google-genai parts other than text, thoughts and function calls (code execution, built-in tools, media),
plain and streamed, through the real SDK on the local model server and on the SDK's own types."""

from __future__ import annotations

import base64
import json

from google import genai
from google.genai import types

from agentotel import _config
from agentotel.providers import google_genai
from agentotel.semconv import GEN_AI_INPUT_MESSAGES, GEN_AI_OUTPUT_MESSAGES
from tests.providers.conftest import Scripted

PNG = base64.b64encode(b"\x89PNG fake").decode()
CODE = "import math\nprint(math.factorial(5))\n"
# A code-execution answer as the Gemini API sends it (camelCase JSON): text, the code the model ran,
# its result, more text, then an image it produced.
PARTS = [
    {"text": "I will compute it."},
    {"executableCode": {"language": "PYTHON", "code": CODE}},
    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "120\n"}},
    {"text": "5! is 120."},
    {"inlineData": {"mimeType": "image/png", "data": PNG}},
]
EXPECTED = [
    {"type": "text", "content": "I will compute it."},
    {"type": "server_tool_call", "id": None, "name": "code_execution",
     "server_tool_call": {"type": "code_execution", "code": CODE, "language": "PYTHON"}},
    {"type": "server_tool_call_response", "id": None,
     "server_tool_call_response": {"type": "code_execution", "outcome": "OUTCOME_OK", "output": "120\n"}},
    {"type": "text", "content": "5! is 120."},
    {"type": "blob", "modality": "image", "content": "base64:" + PNG, "mime_type": "image/png"},  # bytes, not UTF-8
]  # fmt: skip


def body(parts, *, finish="STOP", usage=None):
    candidate = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    out = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash-001", "responseId": "resp-9"}
    return out | ({"usageMetadata": usage} if usage else {})


def client(server) -> genai.Client:
    return genai.Client(api_key="test-key", http_options={"base_url": server.url})


def output(span):
    return json.loads(span.attributes[GEN_AI_OUTPUT_MESSAGES])


def test_code_execution_and_media_parts_plain_and_streamed_alike(telemetry, model_server):
    usage = {"promptTokenCount": 9, "candidatesTokenCount": 30}
    # The same answer twice: whole, then one part per chunk (the stream must come out the same).
    model_server.script(
        Scripted(body(PARTS, usage=usage)),
        Scripted(events=[body([p], finish=None) for p in PARTS[:-1]] + [body(PARTS[-1:], usage=usage)]),
    )
    gemini = client(model_server)
    config = {"tools": [{"code_execution": {}}]}
    gemini.models.generate_content(model="gemini-2.5-flash", contents="What is 5!?", config=config)
    for _ in gemini.models.generate_content_stream(model="gemini-2.5-flash", contents="What is 5!?", config=config):
        pass
    plain, streamed = telemetry.spans()
    assert output(plain) == [{"role": "assistant", "parts": EXPECTED, "finish_reason": "stop"}]
    assert output(streamed) == output(plain)


def test_streamed_text_around_other_parts_stays_in_order_and_bounded(telemetry, model_server):
    """Text split by another part is two text parts; all of a candidate's text deltas share one limit in memory."""
    _config.configure(_config.Settings.resolve(max_value_bytes=4096))
    events = [body([{"text": "a" * 3000}], finish=None),
              body([{"executableCode": {"language": "PYTHON", "code": "print(1)"}}], finish=None),
              body([{"text": "b" * 3000}])]  # fmt: skip
    model_server.script(Scripted(events=events))
    stream = google_genai._Stream(None)  # type: ignore[arg-type]
    gemini = client(model_server)  # held: a collected client closes its transport
    for chunk in gemini.models.generate_content_stream(model="gemini-2.5-flash", contents="go"):
        stream.chunk(chunk)
    parts = stream.response().output_messages[0]["parts"]
    assert [p["type"] for p in parts] == ["text", "server_tool_call", "text"]
    # The first text took 3000 of the 4096 characters kept; the second keeps what was left.
    assert (len(parts[0]["content"]), len(parts[2]["content"])) == (3000, 1096)


def test_streamed_other_parts_not_kept_when_capture_is_off(telemetry, capture_off, model_server):
    model_server.script(Scripted(events=[body(PARTS[1:3], finish=None), body([{"text": "done"}])]))
    stream = google_genai._Stream(None)  # type: ignore[arg-type]
    gemini = client(model_server)
    for chunk in gemini.models.generate_content_stream(model="gemini-2.5-flash", contents="go"):
        stream.chunk(chunk)
    # Nothing held in memory that may not be recorded: no other part, no text (an empty buffer at most).
    assert all(type(item) is tuple and not item[1] for item in stream.candidates[0].parts)
    assert GEN_AI_OUTPUT_MESSAGES not in telemetry.one().attributes


def test_built_in_tool_and_unknown_part_kinds_on_sdk_types():
    """Server-side tool calls (search, maps, ...) and a part kind with no convention, read from real SDK objects."""
    call = types.Part(tool_call=types.ToolCall(id="t1", tool_type=types.ToolType.GOOGLE_SEARCH_WEB, args={"query": "otel"}))
    response = types.Part(tool_response=types.ToolResponse(id="t1", tool_type=types.ToolType.GOOGLE_SEARCH_WEB,
                                                           response={"results": ["a"]}))  # fmt: skip
    assert google_genai._part(call) == {
        "type": "server_tool_call", "id": "t1", "name": "google_search_web",
        "server_tool_call": {"type": "google_search_web", "args": {"query": "otel"}},
    }  # fmt: skip
    assert google_genai._part(response) == {
        "type": "server_tool_call_response", "id": "t1",
        "server_tool_call_response": {"type": "google_search_web", "response": {"results": ["a"]}},
    }  # fmt: skip
    # A kind the conventions have no part for: a generic part named after the SDK's field.
    transcript = types.Part(audio_transcription=types.Transcription(text="hello there"))
    assert google_genai._part(transcript) == {"type": "audio_transcription", "content": {"text": "hello there"}}
    # Qualifiers alone (a thought signature) are nothing readable; with content they do not hide it.
    assert google_genai._part(types.Part(thought_signature=b"sig")) is None
    code = types.Part(executable_code=types.ExecutableCode(code="1+1", language="PYTHON"), thought_signature=b"sig")
    assert google_genai._part(code)["server_tool_call"] == {"type": "code_execution", "code": "1+1", "language": "PYTHON"}


def test_code_execution_parts_in_the_request_history(telemetry, model_server):
    """A follow-up request carrying the earlier code execution records it in the input messages too."""
    model_server.script(Scripted(body([{"text": "ok"}])))
    history = [
        types.Content(role="user", parts=[types.Part(text="What is 5!?")]),
        types.Content(role="model", parts=[
            types.Part(executable_code=types.ExecutableCode(code=CODE, language="PYTHON")),
            types.Part(code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="120\n")),
        ]),
        types.Content(role="user", parts=[types.Part(text="Thanks")]),
    ]  # fmt: skip
    gemini = client(model_server)
    gemini.models.generate_content(model="gemini-2.5-flash", contents=history)
    messages = json.loads(telemetry.one().attributes[GEN_AI_INPUT_MESSAGES])
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["parts"] == EXPECTED[1:3]
