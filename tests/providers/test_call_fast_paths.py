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
