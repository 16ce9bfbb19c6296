"""Reading a stored payload: JSON text becomes data, anything that is not JSON stays as it is."""

from __future__ import annotations

import json
import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# Containers nested deeper than this in a stored payload are read as DEPTH_MARKER. json.loads reads up to
# ~1,000 levels, but what reads a payload then walks it recursively (a diff's comparison, `--json`'s
# dataclass conversion, the view's, detectors), several frames a level: a tool result 700 levels deep
# (another instrumentation's, sent to the collector) failed `trajectory --json`, `report` and rules of `check`
# with RecursionError. No payload an agent exchanges comes near 100 levels; the SDK's capture cuts at 32.
MAX_DEPTH = 100
DEPTH_MARKER = "[max depth]"


def parse(value: Any) -> Any:
    """JSON text (or UTF-8 bytes of it) parsed, containers past MAX_DEPTH levels as DEPTH_MARKER; text that
    is not JSON, and anything else, unchanged."""
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):  # nested deeper than Python recurses: text, as any other non-JSON
            return value
        if _may_be_deep(value):
            parsed = _cut_deep(parsed)
        return whole_characters(parsed, value)
    return value


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")  # what bytes.translate deletes


def _may_be_deep(text: str) -> bool:
    """Whether the JSON `text` may nest containers past MAX_DEPTH levels: False for nearly every payload
    without walking the parsed value (which doubled json.loads's time for a list of a few hundred records),
    by C-speed byte operations (~5 % of json.loads): its brackets alone, then rounds each taking out the
    innermost pairs, one level at least. Brackets inside strings may leave some unpaired: then True, and the
    walk decides."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    for _round in range(MAX_DEPTH):
        inner = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if not inner or inner == brackets:
            return bool(inner)
        brackets = inner
    return True


def _cut_deep(value: Any) -> Any:
    """`value` (fresh from json.loads: changed in place) with each container past MAX_DEPTH levels replaced
    by DEPTH_MARKER. A loop, not recursion, for the reason the cut exists."""
    if type(value) is not dict and type(value) is not list:
        return value
    stack = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        for key, item in container.items() if type(container) is dict else enumerate(container):
            if type(item) is dict or type(item) is list:
                if depth >= MAX_DEPTH:
                    container[key] = DEPTH_MARKER  # an existing key: the dict's size is unchanged mid-iteration
                else:
                    stack.append((item, depth + 1))
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
