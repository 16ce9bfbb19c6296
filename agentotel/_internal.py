"""Internal failures: logged once, never raised into the user's program.

Telemetry must not break the program it observes. Every place where agentotel code runs inside the
user's call path wraps itself in `internal_errors(...)`. Tests set AGENTOTEL_RAISE_INTERNAL_ERRORS=1
so that a bug in agentotel fails the test instead of vanishing into a log line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from typing import Iterator

log = logging.getLogger("agentotel")

_seen: set[str] = set()
_lock = threading.Lock()


def raise_internal_errors() -> bool:
    return os.environ.get("AGENTOTEL_RAISE_INTERNAL_ERRORS", "").lower() in {"1", "true", "yes"}


def report_internal_error(where: str, exc: BaseException) -> None:
    """Log an agentotel failure once per place (with its traceback), or re-raise it under tests."""
    if raise_internal_errors():
        raise exc
    with _lock:
        first = where not in _seen
        _seen.add(where)
    if first:
        log.error("agentotel: internal error in %s (telemetry only; your program is unaffected)", where, exc_info=exc)
    else:
        log.debug("agentotel: internal error in %s again: %r", where, exc)


@contextlib.contextmanager
def internal_errors(where: str) -> Iterator[None]:
    """Swallow (and log once) any exception raised by agentotel's own code inside the block."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - telemetry must never propagate its own failures
        report_internal_error(where, exc)


def end_span(span: object, where: str) -> None:
    """End `span`; a failing span processor (ours or one the user added) is logged, never raised.

    The SDK calls every processor's `on_end` from `span.end()` without catching: without this, a broken
    exporter would raise out of the user's `with run(...)` or tool call, or replace their exception.
    """
    try:
        span.end()  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001
        report_internal_error(where, exc)
