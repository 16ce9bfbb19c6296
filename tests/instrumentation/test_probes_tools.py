"""A tool's odd values and exits: recorded as well as they can be, and the program sees exactly what it would
without agentotel (the same value, the same exception object)."""

from __future__ import annotations

import asyncio
import json

import pytest
from opentelemetry.trace import StatusCode

from agentotel import semconv as sc
from agentotel.tools import tool


def test_an_int_too_long_for_str_is_recorded_as_hex(recorded):
    huge = 7 ** 6000  # 5,071 decimal digits: str() refuses it (Python's 4,300-digit limit)

    @tool
    def factor(n, pair):
        return {"n": n, huge: "as a key"}

    assert factor(huge, [1, huge]) == {"n": huge, huge: "as a key"}
    span = recorded.one("execute_tool factor")
    arguments = json.loads(span.attributes[sc.GEN_AI_TOOL_CALL_ARGUMENTS])
    result = json.loads(span.attributes[sc.GEN_AI_TOOL_CALL_RESULT])
    assert arguments == {"n": hex(huge), "pair": [1, hex(huge)]}
    assert result == {"n": hex(huge), hex(huge): "as a key"}


class Unspeakable(Exception):
    def __str__(self):
        raise RuntimeError("no text")

    def __repr__(self):
        raise RuntimeError("no repr")


@pytest.mark.parametrize("exit", [KeyboardInterrupt(), SystemExit(3), asyncio.CancelledError(), Unspeakable()],
                         ids=lambda e: type(e).__name__)
def test_every_exit_of_a_tool_passes_through_as_the_same_object(recorded, exit):
    @tool
    def leave():
        raise exit

    with pytest.raises(BaseException) as raised:
        leave()
    assert raised.value is exit
    span = recorded.one("execute_tool leave")
    assert span.status.status_code is StatusCode.ERROR and span.attributes[sc.ERROR_TYPE].endswith(type(exit).__name__)


def test_a_cancelled_async_tool_is_cancelled_and_its_span_ends(recorded):
    @tool
    async def wait_for_approval():
        await asyncio.sleep(60)

    async def main():
        task = asyncio.create_task(wait_for_approval())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return task.cancelled()

    assert asyncio.run(main()) is True
    assert recorded.one("execute_tool wait_for_approval").end_time is not None


def test_half_a_character_in_a_docstring_or_default_is_no_error_at_import(recorded):
    # Before, hashing the tool's schema raised UnicodeEncodeError out of the decorator: the user's module
    # failed to import.
    @tool
    def lookup(key="\ud83d", table={"\udc00": 1}):
        """Looks a key up \ud83d"""
        return table.get(key, 2)

    assert lookup() == 2
    assert recorded.one("execute_tool lookup").attributes[sc.GEN_AI_TOOL_NAME] == "lookup"
