"""Patches for LLM client libraries (openai, anthropic, google-genai, Bedrock): one `chat {model}` span per call.

`instrument_providers()` patches every supported library that is importable now, or when it is imported
later; `uninstrument_providers()` removes every patch. Both are idempotent.

Traced: openai `chat.completions.create` / `.parse` (and `.stream`, which calls `create`),
`responses.create` / `.parse` (and `.stream`), `embeddings.create`; anthropic `messages.create` /
`.parse` / `.stream` and the same on `beta.messages`; sync and async clients, `with_raw_response` and
`with_streaming_response` included; google-genai `models.generate_content` / `generate_content_stream`
(sync and async; see google_genai.py); Bedrock Runtime's Converse, ConverseStream, InvokeModel and
InvokeModelWithResponseStream through botocore and aiobotocore (see bedrock.py). Spans come from the scopes `agentotel.openai`,
`agentotel.anthropic`, `agentotel.google_genai` and `agentotel.bedrock`.

Counting a model call once, next to the anthropic SDK's own span
------------------------------------------------------------------
anthropic >= 2 starts its own CLIENT span per API call (scope `com.anthropic.sdk.python`, name
`anthropic.messages.create`, with `gen_ai.operation.name=chat`, token usage and its own
`gen_ai.usage.cache_write.input_tokens`). We leave it on (it carries the request id and propagates
trace context to Anthropic) and do not suppress it: our wrapper runs outside the SDK method, so the
SDK's span is always a child of ours. Ours is the model-call span: it has the messages, the spec's
token accounting (input includes cache reads and writes) and the cost.

The rule for queries (trajectory steps, llm_calls, token and cost totals): a span of scope
`com.anthropic.sdk.python` is not a step when its parent span is an agentotel model span:

    NOT (scope_name = 'com.anthropic.sdk.python'
         AND parent_span_id IN (SELECT span_id FROM spans
                                WHERE scope_name LIKE 'agentotel.%' AND operation IN ('chat', 'embeddings')))

When the SDK's spans are off, there is nothing to exclude; when agentotel's patches are off (only the
SDK's spans reach the store), the SDK span has no agentotel parent and counts as the model call.
"""

from __future__ import annotations

from agentotel.providers._core import instrument_providers, uninstrument_providers

__all__ = ["instrument_providers", "uninstrument_providers"]

# Scope of the anthropic SDK's own span (see above), named where the store reads other libraries' spans.
from agentotel.store.dialects import ANTHROPIC_SDK_SCOPE  # noqa: E402
