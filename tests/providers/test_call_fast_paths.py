"""The per-call shortcuts of the provider path give what the general path gives, to the bit.

Each shortcut skips work on every model call (benchmarks/bench_providers.py --instructions counts it):
a cost from rates read once, a Converse body read by dict look-ups, the metrics instruments kept while
no provider changed. These compare each with the general path on the same input.
"""

from __future__ import annotations

import types

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from agentotel import _config, _tracing
from agentotel.cost import _library_prices, _price_from_override, cost_usd
from agentotel.providers import _core
from agentotel.providers._bedrock_converse import converse_response


@pytest.fixture(autouse=True)
def _fresh_settings():
    _config.reset()
    yield
    _config.reset()


@pytest.mark.parametrize(
    "provider, model",
    [("openai", "gpt-4o-mini"), ("gcp.gemini", "gemini-2.0-flash-001"), ("aws.bedrock", "amazon.nova-micro-v1:0"),
     ("openai", "gpt-4o")],
)  # fmt: skip
@pytest.mark.parametrize("tokens", [(0, 0), (20, 30), (1, 0), (123457, 98765), (3, 10**9)])
def test_a_cost_without_cache_tokens_is_the_general_sum_to_the_bit(provider, model, tokens):
    import time

    found = _library_prices(provider, model, int(time.time() // 3600))
    assert found is not None and found[1] is not None, "a model with flat rates"
    general = _price_from_override(found[1], tokens[0], tokens[1], 0, 0)
    assert cost_usd(provider, model, input_tokens=tokens[0], output_tokens=tokens[1]) == general
    # With cache tokens the general sum still decides.
    assert cost_usd(provider, model, input_tokens=tokens[0] + 5, output_tokens=tokens[1], cache_read_tokens=5) == (
        _price_from_override(found[1], tokens[0] + 5, tokens[1], 5, 0)
    )


def _as_object(value):
    if isinstance(value, dict):
        return types.SimpleNamespace(**{k: _as_object(v) for k, v in value.items()})
    return value


@pytest.mark.parametrize(
    "body",
    [
        {"output": {"message": {"role": "assistant", "content": [{"text": "hi"}, {"toolUse": {"toolUseId": "t1", "name": "f", "input": {"a": 1}}}]}},
         "stopReason": "tool_use", "usage": {"inputTokens": 3, "outputTokens": 4, "cacheReadInputTokens": 2}},
        {"output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}}, "stopReason": "", "usage": None},
        {"stopReason": "end_turn"},
        {"output": None, "usage": {"inputTokens": 1}},
    ],
)  # fmt: skip
def test_a_converse_body_reads_the_same_as_a_dict_and_as_an_object(body):
    fast = converse_response(body)
    general = converse_response(types.SimpleNamespace(**body))  # field_of's path, the same values
    assert fast == general
    if isinstance(body.get("output"), dict):  # nested objects too (an SDK-like body)
        assert converse_response(types.SimpleNamespace(**{**body, "output": _as_object(body["output"])})) == fast


def test_metrics_follow_a_replaced_meter_provider():
    previous = (_tracing._tracer_provider, _tracing._meter_provider)
    try:
        first, second = MeterProvider(metric_readers=[InMemoryMetricReader()]), MeterProvider(metric_readers=[InMemoryMetricReader()])
        _tracing.set_providers(previous[0], first)
        kept = _core._metrics()
        assert kept is not None and _core._metrics() is kept  # kept while nothing changed
        _tracing.set_providers(previous[0], second)
        replaced = _core._metrics()
        assert replaced is not None and replaced is not kept
        _tracing.set_providers(previous[0], first)
        assert _core._metrics() is not replaced
    finally:
        _tracing.set_providers(*previous)
        _core._instruments = None


def _span_pair(limits=None):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=limits) if limits is not None else TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("t")
    start = {"a.start": "s", "a.shared": 1}
    return tracer.start_span("x", attributes=start), tracer.start_span("x", attributes=start), exporter


@pytest.mark.parametrize(
    "attributes",
    [
        {"s": "text", "i": 3, "f": 0.5, "b": True, "l": ["stop"], "t": ("a", "b"), "e": [], "a.shared": 2},  # plain, a key set again
        {"s": "x", "ints": [1, 2], "bools": [True, False], "floats": [1.5]},
        {"mixed": [1, "a"], "s": "x"},  # items of two types
        {"bool_int": [True, 1]},
        {"none": None, "s": "x"},
        {"nested": [["a"]], "s": "x"},
        {"obj": object(), "s": "x"},
        {"strsub": type("S", (str,), {})("x")},
        {"": "empty key", "s": "x"},
        {1: "int key", "s": "x"},
        {"d": {"k": "v"}},
        {},
    ],
)  # fmt: skip
def test_setting_plain_attributes_in_place_stores_what_the_sdk_stores(attributes):
    ours, sdk, exporter = _span_pair()
    _tracing.set_attributes(ours, attributes)
    sdk.set_attributes(attributes)
    ours.end()
    sdk.end()
    a, b = exporter.get_finished_spans()
    assert list(a.attributes.items()) == list(b.attributes.items())
    assert [type(v) for v in a.attributes.values()] == [type(v) for v in b.attributes.values()]
    assert a.dropped_attributes == b.dropped_attributes


def test_setting_attributes_in_place_keeps_the_sdk_limits():
    from opentelemetry.sdk.trace import SpanLimits

    # Near the attribute limit the oldest are dropped as the SDK drops them; a length limit cuts strings.
    for limits, attributes in ((SpanLimits(max_span_attributes=4), {f"k{i}": i for i in range(5)}),
                               (SpanLimits(max_span_attribute_length=3), {"s": "abcdef", "l": ["abcdef"]})):  # fmt: skip
        ours, sdk, exporter = _span_pair(limits)
        _tracing.set_attributes(ours, attributes)
        sdk.set_attributes(attributes)
        ours.end()
        sdk.end()
        a, b = exporter.get_finished_spans()
        assert list(a.attributes.items()) == list(b.attributes.items())
        assert a.dropped_attributes == b.dropped_attributes
    # An ended span takes nothing more.
    ours, _, exporter = _span_pair()
    ours.end()
    _tracing.set_attributes(ours, {"late": "x"})
    assert "late" not in exporter.get_finished_spans()[0].attributes


def test_setting_attributes_on_another_span_type_calls_its_own_method():
    from opentelemetry.trace import NonRecordingSpan, SpanContext

    seen = []

    class Recorded(NonRecordingSpan):
        def set_attributes(self, attributes):
            seen.append(dict(attributes))

    _tracing.set_attributes(Recorded(SpanContext(1, 2, False)), {"s": "x", "l": ["a"]})
    assert seen == [{"s": "x", "l": ["a"]}]


def test_a_google_genai_plain_call_enters_few_python_functions(telemetry):
    """The per-call path's budget: each Python function a model call enters costs ~0.5-1 µs run cold, more
    than its body (providers/_core.ModelCall), so the path enters few, counted here (a deterministic count,
    not a time). agentotel's own: 17 on a plain call with a prompt and a system instruction, metrics on (34,
    then 24, then 21, before their usual cases were inlined: the tracer, the metrics instruments and whether
    content is captured are asked without a call of their own; the SDK call's context is made with the span,
    the response read and the span ended in one function each; a client's attributes and a prompt or an
    instruction sent before are found by a look-up, not encoded again); none of OTel's context API (get_current,
    attach, detach: two calls each) from ours."""
    import json
    import os
    import sys

    import httpx2
    from google import genai

    import agentotel

    body = json.dumps({"candidates": [{"content": {"role": "model", "parts": [{"text": "one two three"}]}, "index": 0, "finishReason": "STOP"}],
                       "modelVersion": "gemini-2.0-flash-001", "responseId": "r-1",
                       "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 3}}).encode()  # fmt: skip
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, content=body, headers={"content-type": "application/json"}))
    client = genai.Client(api_key="k", http_options={"client_args": {"transport": transport}})

    def call():
        return client.models.generate_content(model="gemini-2.0-flash", contents="Count.", config={"system_instruction": "Be terse."})

    call(), call()  # warm: imports, caches, the price table
    ours = os.path.dirname(agentotel.__file__)
    entered: list[str] = []
    from_ours: list[str] = []

    def profile(frame, event, arg):
        if event != "call":
            return
        if frame.f_code.co_filename.startswith(ours):
            entered.append(frame.f_code.co_name)
        elif "opentelemetry/context" in frame.f_code.co_filename and frame.f_back.f_code.co_filename.startswith(ours):
            from_ours.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    assert len(telemetry.spans()) == 3, "the call recorded (one span each)"
    assert from_ours == []
    assert len(entered) <= 17, sorted(entered)
