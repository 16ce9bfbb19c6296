"""A chat completion reads the same whether it comes as the SDK's typed object (the fast path every
call takes) or as plain dicts (the general reader)."""

from __future__ import annotations

import pytest
from openai.types.chat import ChatCompletion

from agentotel.providers.openai import _chat_response

_COMPLETIONS = {
    "text": {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "one two three"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23,
                  "prompt_tokens_details": {"cached_tokens": 8}, "completion_tokens_details": {"reasoning_tokens": 2}},
    },
    "tool calls, refusal, two choices, no usage": {
        "id": "chatcmpl-2", "object": "chat.completion", "created": 0, "model": "gpt-4o",
        "choices": [
            {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "broken", "arguments": "{not json"}},
            ]}},
            {"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": "", "refusal": "I can't"}},
        ],
    },
}  # fmt: skip


@pytest.mark.parametrize("name", _COMPLETIONS)
def test_typed_and_plain_completions_read_the_same(name):
    typed = ChatCompletion.model_validate(_COMPLETIONS[name])
    from_typed = _chat_response(typed)
    assert from_typed == _chat_response(typed.model_dump())
    assert from_typed.id == _COMPLETIONS[name]["id"] and from_typed.output_messages
    if name == "text":
        assert (from_typed.usage.input_tokens, from_typed.usage.cache_read_tokens, from_typed.usage.reasoning_tokens) == (20, 8, 2)
    else:
        assert [c.id for c in from_typed.tool_calls] == ["call_1", "call_2"]
        assert from_typed.finish_reasons == ["tool_calls", "stop"]
        assert from_typed.output_messages[1]["parts"] == [{"type": "text", "content": ""}, {"type": "text", "content": "I can't"}]
