"""Reading trajectory steps, as cases do: the shared readers of `agentotel.analysis`, plus what replay
needs on its own (a payload exactly as recorded, the call a retrieval is replayed as).

A step is a plain mapping with the fields ARCHITECTURE.md gives a trajectory step (`index`, `type`,
`name`, `status`, `tool_name`, `input`, `output`, ...); `input`/`output` may be JSON text or parsed.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from agentotel.analysis._steps import (  # noqa: F401 - the one way steps are read, re-exported for cases
    AGENT,
    LLM,
    RETRIEVAL,
    TOOL,
    RequestedCall,
    call_key,
    final_text,
    is_error,
    output_messages,
    parse_json,
    requested_calls,
    sha,
    tool_name,
    tool_payload,
)


def recorded(step: Mapping[str, Any], column: str) -> Any:
    """A step's payload exactly as recorded (its raw JSON parsed once), for serving it back on replay."""
    raw = step.get(f"raw_{column}")
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return parse_json(step.get(column))


def retrieval_call(data_source: str, query: Any) -> tuple[str, dict[str, Any]]:
    """A retrieval as replay keys it, a call of its own (name, arguments): the data source and the query.

    The query text is what a retrieval span records of its input, so it is all a recording can match on.
    """
    return f"{RETRIEVAL} {data_source}", {"query": query}
