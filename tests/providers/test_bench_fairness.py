"""The providers benchmark compares agentotel with a hand-written span "with the same attributes": this
keeps that true. Both run on the benchmark's own mocked transport; the hand-written span must carry
every attribute agentotel records there, with the same values (the time to first chunk aside, which
differs from run to run).
"""

from __future__ import annotations

from typing import Any

import httpx2
import openai

from agentotel.providers import instrument_providers, uninstrument_providers
from agentotel.semconv import GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK
from benchmarks import bench_providers as bench


def _calls(client: Any, plain: Any, stream: Any) -> None:
    plain(model="gpt-4o-mini", messages=bench.MESSAGES)
    for _ in stream(model="gpt-4o-mini", messages=bench.MESSAGES, stream=True, stream_options={"include_usage": True}):
        pass


def test_the_hand_written_span_records_what_agentotel_records(telemetry):
    client = openai.OpenAI(api_key="k", http_client=httpx2.Client(transport=bench._transport()))
    _calls(client, client.chat.completions.create, client.chat.completions.create)
    ours = telemetry.model_spans()
    uninstrument_providers()
    try:
        hand_plain, hand_stream = bench._hand_written(client, telemetry.tracer_provider.get_tracer("bench"))
        telemetry.exporter.clear()
        _calls(client, hand_plain, hand_stream)
        hand = telemetry.spans()
    finally:
        instrument_providers()
    assert [s.name for s in ours] == [s.name for s in hand] == ["chat gpt-4o-mini"] * 2
    for mine, theirs in zip(ours, hand):
        assert mine.kind == theirs.kind
        mine_attributes, their_attributes = dict(mine.attributes), dict(theirs.attributes)
        assert (GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK in mine_attributes) == (GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK in their_attributes)
        mine_attributes.pop(GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, None)
        their_attributes.pop(GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, None)
        assert mine_attributes == their_attributes


def test_the_google_genai_hand_written_span_records_what_agentotel_records(telemetry):
    """`--floor`'s hand-written google-genai span (`_genai_hand_written`) against agentotel's on the
    benchmark's own plain call: same name, kind and attributes, values included."""
    plain = bench._sdk_calls("genai")[0]
    plain()
    ours = telemetry.model_spans()
    uninstrument_providers()
    switch = bench._genai_hand_written(telemetry.tracer_provider)
    try:
        telemetry.exporter.clear()
        switch(True)
        plain()
        hand = telemetry.spans()
    finally:
        switch(False)
        instrument_providers()
    assert [s.name for s in ours] == [s.name for s in hand] == ["chat gemini-2.0-flash"]
    assert ours[0].kind == hand[0].kind
    assert dict(ours[0].attributes) == dict(hand[0].attributes)
