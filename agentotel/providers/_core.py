"""The generic wrapper every provider adapter plugs into (placeholder while the adapters land)."""

from __future__ import annotations

import threading

_lock = threading.Lock()
_enabled = False


def instrument_providers() -> None:
    """Patch every supported client library (idempotent)."""
    global _enabled
    with _lock:
        _enabled = True


def uninstrument_providers() -> None:
    """Remove every patch (idempotent)."""
    global _enabled
    with _lock:
        _enabled = False
