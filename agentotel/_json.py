"""Reading a stored payload: JSON text becomes data, anything that is not JSON stays as it is."""

from __future__ import annotations

import json
import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def parse(value: Any) -> Any:
    """JSON text (or UTF-8 bytes of it) parsed; text that is not JSON, and anything else, unchanged."""
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        try:
            return whole_characters(json.loads(value), value)
        except (ValueError, RecursionError):  # nested deeper than Python recurses: text, as any other non-JSON
            return value
    return value


def whole_characters(value: Any, text: str | bytes | bytearray) -> Any:
    """`value`, parsed from the JSON `text`, with every lone surrogate in it replaced by U+FFFD.

    JSON may escape half of a UTF-16 pair on its own ("\\ud83d": text cut in the middle of an emoji,
    which JavaScript's string slicing does); json.loads turns it into a str no UTF-8 encoder takes, so
    a page, a terminal or a protobuf string would fail on it far from here. Only a text holding such
    an escape is looked through.
    """
    marks = (b"\\ud", b"\\uD") if isinstance(text, (bytes, bytearray)) else ("\\ud", "\\uD")
    return _replaced(value) if marks[0] in text or marks[1] in text else value  # type: ignore[operator]


def _replaced(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replaced(v) for v in value]
    if isinstance(value, dict):
        return {_replaced(k): _replaced(v) for k, v in value.items()}
    return value
