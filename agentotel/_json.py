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
            parsed = json.loads(value)
        except ValueError:
            return value
        return whole_characters(parsed) if "\\ud" in value or "\\uD" in value else parsed
    return value


def whole_characters(value: Any) -> Any:
    """`value` (parsed JSON) with every lone surrogate replaced by U+FFFD.

    JSON may escape half of a UTF-16 pair on its own ("\\ud83d": text cut in the middle of an emoji,
    which JavaScript's string slicing does); json.loads turns it into a str no UTF-8 encoder accepts,
    so a page, a terminal or a Parquet column would fail on it far from here.
    """
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [whole_characters(v) for v in value]
    if isinstance(value, dict):
        return {whole_characters(k): whole_characters(v) for k, v in value.items()}
    return value
