"""Agent frameworks' tool calls as the same `execute_tool {name}` spans `@agentotel.tool` makes.

`instrument_integrations()` patches every supported framework importable now, or when it is imported
later (the providers' mechanism: a post-import hook); `uninstrument_integrations()` removes every patch.
Both are idempotent. Covered:

- OpenAI Agents SDK (`agents`): function tools and handoffs as tool steps, agents as `invoke_agent` steps, a
  run per `Runner.run` when none is open (openai_agents.py);
- LangChain (`langchain_core`): `BaseTool` runs, retrievers, chains (langchain.py);
- LangGraph (`langgraph`): graph invocations as runs or agent steps, the agents of a multi-agent graph as
  agent steps of their own (langgraph.py);
- pydantic-ai (`pydantic_ai`): tool calls (pydantic_ai.py);
- MCP clients (`mcp`): `ClientSession.call_tool` / `list_tools`, trace context in `_meta` (mcp.py).

Each adapter module defines `patches()`: the (owner, attribute, wrapper) triples to apply, where the wrapper is a wrapt wrapper
`(wrapped, instance, args, kwargs)`; a framework version missing one of them is left untraced. The span, arguments, result, errors and
content policy all come from `agentotel.tools` (`defined_tool`, `start_tool_call`).
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from typing import Any, Callable, Iterable

import wrapt

from agentotel._internal import internal_errors

__all__ = ["instrument_integrations", "uninstrument_integrations", "patched_attributes"]

log = logging.getLogger("agentotel.integrations")

# The adapters' patch lists ("module:function"), by the top-level module of the framework they patch.
FRAMEWORKS = {
    "agents": "agentotel.integrations.openai_agents:patches",
    "langchain_core": "agentotel.integrations.langchain:patches",
    "langgraph.pregel": "agentotel.integrations.langgraph:patches",  # langgraph is a namespace package
    "pydantic_ai": "agentotel.integrations.pydantic_ai:patches",
    "mcp": "agentotel.integrations.mcp:patches",
}

Patch = tuple[Any, str, Callable[..., Any]]  # owner (class or module), attribute, wrapt wrapper


class _Patched(wrapt.FunctionWrapper):
    """Marks an attribute agentotel wrapped, so no second layer is ever added."""

    # Named, as providers' _Patched does: wrapt binds a subclass's method through this class, and looks
    # it up on every call - a failed lookup raised and cleared an AttributeError per framework tool call.
    __bound_function_wrapper__ = wrapt.BoundFunctionWrapper


_lock = threading.RLock()
_enabled = False
_hooked: set[str] = set()
_applied: dict[str, list[tuple[Any, str, Any]]] = {}


def instrument_integrations() -> None:
    """Patch every supported framework importable now, and any imported later (idempotent)."""
    global _enabled
    with _lock:
        _enabled = True
        for name in FRAMEWORKS:
            if name not in _hooked:
                _hooked.add(name)
                wrapt.register_post_import_hook(_on_import, name)  # fires now when already imported
            elif name in sys.modules:
                _apply(name)


def uninstrument_integrations() -> None:
    """Remove every patch (idempotent); the import hooks stay but apply nothing until re-enabled."""
    global _enabled
    with _lock:
        _enabled = False
        for name in list(_applied):
            for owner, attribute, original in reversed(_applied.pop(name)):
                if isinstance(_own(owner, attribute), _Patched):
                    setattr(owner, attribute, original)


def _own(owner: Any, attribute: str) -> Any:
    return owner.__dict__.get(attribute) if isinstance(owner, type) else getattr(owner, attribute, None)


def _on_import(module: Any) -> None:
    with internal_errors("integrations.import_hook"):
        _apply(module.__name__)


def _apply(name: str) -> None:
    with _lock:
        if not _enabled or name in _applied:
            return
        module, _, function = FRAMEWORKS[name].partition(":")
        applied = _applied[name] = []
        for owner, attribute, wrapper in _patches(importlib.import_module(module), function):
            original = _own(owner, attribute)
            if original is None or isinstance(original, _Patched):
                continue
            setattr(owner, attribute, _Patched(original, wrapper))
            applied.append((owner, attribute, original))


def _patches(adapter: Any, function: str) -> Iterable[Patch]:
    try:
        return list(getattr(adapter, function)())
    except (ImportError, AttributeError) as exc:  # a framework version without what an adapter needs: left untraced
        log.debug("agentotel: %s cannot patch this version (%r)", adapter.__name__, exc)
        return []


def patched_attributes() -> list[str]:
    """What is currently wrapped, as "owner.attribute" (for tests and diagnostics)."""
    with _lock:
        return [f"{getattr(o, '__qualname__', None) or o.__name__}.{a}" for items in _applied.values() for o, a, _ in items]
