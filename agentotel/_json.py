"""Reading a stored payload: JSON text becomes data, anything that is not JSON stays as it is."""

from __future__ import annotations

import json
from typing import Any


def parse(value: Any) -> Any:
    """JSON text (or UTF-8 bytes of it) parsed; text that is not JSON, and anything else, unchanged."""
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
