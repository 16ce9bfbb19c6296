"""The seam between `@tool` and replay: which replayer (if any) serves tool calls in this context.

`agentotel.tools` asks, before running a tool's body (and `serve_retrieval` before a retrieval's):

    served, value = _active.serve_tool(name, arguments)
    if served:
        result = value           # the recorded result; the body does not run
    else:
        result = func(...)       # no replay active, or the case has no answer for this call: run it

`serve_tool` raises the recorded exception when the recorded call failed, and `ReplayMismatch` when
the replay policy says the call must not happen; both are the tool's outcome, so they propagate to
the caller like any tool error. It is a contextvar read when no replay is active, so it costs nothing.
"""

from __future__ import annotations

import contextvars
from typing import Any, Protocol


class Server(Protocol):
    def serve_tool(self, name: str, arguments: Any) -> tuple[bool, Any]: ...

    def serve_retrieval(self, data_source: str, query: Any) -> tuple[bool, Any]: ...


_active: contextvars.ContextVar[Server | None] = contextvars.ContextVar("agentotel_replay", default=None)

# Whether this process ever replayed a case: until it has, no span can be a replay's, and exporters
# need not look (see `agentotel._setup`, which keeps replays out of the store).
ever = False


def current() -> Server | None:
    """The replayer active in this context (thread or task), or None."""
    return _active.get()


def activate(server: Server | None) -> contextvars.Token:
    global ever
    ever = True
    return _active.set(server)


def deactivate(token: contextvars.Token) -> None:
    _active.reset(token)


def serve_tool(name: str, arguments: Any) -> tuple[bool, Any]:
    """(True, recorded result) when the active replay answers this call, else (False, None)."""
    server = _active.get()
    if server is None:
        return False, None
    return server.serve_tool(name, arguments)


def serve_retrieval(data_source: str, query: Any) -> tuple[bool, Any]:
    """(True, recorded documents) when the active replay answers this retrieval, else (False, None)."""
    server = _active.get()
    if server is None:
        return False, None
    return server.serve_retrieval(data_source, query)
