"""The content policy against an earlier version of itself: the same calls, the same attributes.

A change to agentotel/content.py's fast paths must leave every encoded value as it was: the same text,
redaction count, truncation marker and remaining span budget, call after call (the policy remembers
texts between calls, so the order matters). This runs the same sequence of `Payload` calls through the
current module and through content.py as of a git revision (`AGENTOTEL_CONTENT_REF`, default: where
this branch left main), under several settings, and prints every difference:

    python -m benchmarks.content_equivalence            # trajectories, edge cases, random shapes
    python -m benchmarks.content_equivalence --replay /work/shared/cassettes/*/   # recorded SDK traffic
        # replayed through the real SDKs (tests/providers/peer_replay.py): every Payload shadowed
    python -m pytest tests/providers -n 0 -p benchmarks.content_equivalence     # every Payload the
        # provider tests make, shadowed

Each exits 1 (fails the session) on any difference.
"""

from __future__ import annotations

import collections
import enum
import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TRAJECTORIES = Path("/work/shared/trajectories")


def reference_module() -> Any:
    """content.py as of `AGENTOTEL_CONTENT_REF` (default: the merge base of HEAD and main), as a module."""
    rev = os.environ.get("AGENTOTEL_CONTENT_REF") or subprocess.run(
        ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    source = subprocess.run(["git", "show", f"{rev}:agentotel/content.py"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    spec = importlib.util.spec_from_loader("agentotel._content_reference", loader=None)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    module.__file__ = f"{rev}:agentotel/content.py"
    sys.modules[spec.name] = module  # type: ignore[union-attr]  # (dataclasses and typing look modules up by name)
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def _outcome(method: Any, args: tuple, kwargs: dict) -> Any:
    """What a call returned, or the type and text of what it raised (compared like a result)."""
    try:
        return method(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        return f"raised {type(exc).__name__}: {exc}"


def _state(payload: Any) -> tuple[int, bool, int]:
    return payload.redactions, payload.truncated, payload._budget


class Pair:
    """One `Payload` of each version, called alike; `check` returns what differed (empty when nothing)."""

    def __init__(self, new: Any, old: Any) -> None:
        self.new, self.old = new.Payload(), old.Payload()

    def call(self, method: str, *args: Any, **kwargs: Any) -> str | None:
        got, want = _outcome(getattr(self.new, method), args, kwargs), _outcome(getattr(self.old, method), args, kwargs)
        if got != want or _state(self.new) != _state(self.old):
            return f"{method}: new {got!r:.200} {_state(self.new)} / old {want!r:.200} {_state(self.old)}"
        return None


# --- the corpus -------------------------------------------------------------------------------------------


class Colour(enum.IntEnum):
    RED = 1


class Text(str):
    pass


Point = collections.namedtuple("Point", "x y")


def _text_part(text: Any) -> dict[str, Any]:
    return {"type": "text", "content": text}


def trajectory_calls() -> list[list[tuple[str, tuple, dict]]]:
    """Each SWE-agent trajectory as the model calls an agent makes: the conversation so far (growing by
    one or two messages a call), the system prompt (the same every call) and the answer."""
    runs = []
    for path in sorted(TRAJECTORIES.glob("*/*.traj")):
        history = json.loads(path.read_text())["history"]
        messages = [{"role": h["role"], "parts": [_text_part(h["content"] if isinstance(h["content"], str) else json.dumps(h["content"]))]}
                    for h in history]  # fmt: skip
        system = [m for m in messages if m["role"] == "system"][:1]
        calls = []
        for i, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            payload = []
            payload.append(("encode_messages", ([m for m in messages[:i] if m["role"] != "system"],), {}))
            if system:
                payload.append(("encode", (system[0]["parts"],), {"repeated": True}))
            payload.append(("encode", ([{**message, "finish_reason": "stop"}],), {}))
            payload.append(("encode", (history[i],), {}))  # a raw record, as a tool's arguments
            calls.append(payload)
        runs.append(calls)
    return runs


def edge_values() -> list[Any]:
    """Hand-made values where a fast path must step aside, or must not change a thing."""
    secret = "use sk-abcdefghijklmnopqrstuvwx1234 now"
    nested: Any = "leaf"
    for _ in range(33):
        nested = [nested]
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    out = [
        [{"role": "assistant", "parts": [_text_part("one two three")], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part("one"), _text_part("two")], "finish_reason": None}],
        [{"role": "assistant", "parts": [], "finish_reason": "stop"}],
        [],
        {"role": "user", "parts": [_text_part("hi")]},
        [_text_part("You are terse.")],
        [{"role": "assistant", "parts": [_text_part(secret)], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part("Authorization: Bearer abcdefgh12345678")], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part("key points: the password is 'hunter22'")], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part(Text("a str subclass"))], "finish_reason": "stop"}],
        [{"role": Text("assistant"), "parts": [_text_part("x")], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part("x")], "finish_reason": Colour.RED}],
        [{"role": "assistant", "parts": [_text_part(5)], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part(None)], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": Point(_text_part("a"), _text_part("b")), "finish_reason": "stop"}],
        [{"role": "assistant", "parts": (_text_part("a"),), "finish_reason": "stop"}],
        [{"parts": [_text_part("x")], "role": "assistant", "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [{"content": "x", "type": "text"}], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [{"type": "text", "content": "x", "extra": 1}], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {"x": 1.5, "password": "p"}}]}],
        [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": {"rows": [[1, 2], [3, None]], "token": 7}}]}],
        [{"role": "assistant", "parts": [_text_part("日本語 é \u2028 \x00 \x1f \" \\ \ud800")], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part("x" * 65_536)], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part("x" * 65_500)], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part("é" * 30_000)], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part("word " * 3000) for _ in range(30)], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part(str(i)) for i in range(1001)], "finish_reason": "stop"}],
        [{"role": "assistant", "parts": [_text_part("a")], "finish_reason": "stop"}] * 1001,
        [{"role": "user", "parts": [_text_part("u")]}, "loose text", 3],
        {"blob": b"\x00\xff", "bytes": b"plain", "tags": {"b", "a"}, "point": Point(1, 2), "colour": Colour.RED},
        {1: "a", "1": "b", 2.5: "c", None: "d", True: "e"},
        {"big": 7**6000, "bigger": 7**5100, "nan": float("nan"), "inf": [float("inf")]},
        nested,
        cyclic,
        "a top-level string",
        42,
        None,
    ]
    return out


def random_values(seed: int, count: int) -> list[Any]:
    """GenAI shapes with random mutations: other types in every slot, extra or missing keys, secrets, limits."""
    rng = random.Random(seed)
    words = ["one", "two", "Count", "to", "thirty.", "key", "pass", "basic", "é", "日本", "a:b", "x=y", "-----",
             "sk-abcdefghijklmnopqrstuvwx1234", "ghp_" + "a" * 36, "https://u:p@h/x", "\n", "\t", '"', "\\", "\ud800", "toKen"]  # fmt: skip

    def text() -> Any:
        choice = rng.random()
        if choice < 0.85:
            return " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        return rng.choice([Text("sub"), 3, 2.5, None, True, Colour.RED, b"b", ["nested"], {"k": "v"}, "x" * rng.choice([63, 64, 65, 2000])])

    def part() -> Any:
        p: dict[Any, Any] = {"type": rng.choice(["text", "reasoning", Text("text")]), "content": text()}
        roll = rng.random()
        if roll < 0.05:
            p["extra"] = text()
        elif roll < 0.08:
            p = {"content": p["content"], "type": p["type"]}
        elif roll < 0.1:
            p = {"type": "tool_call", "id": "c", "name": "f", "arguments": {rng.choice(["x", "api_key", "token_budget"]): text()}}
        return p

    def message() -> Any:
        parts: Any = [part() for _ in range(rng.randint(0, 3))]
        if rng.random() < 0.05:
            parts = tuple(parts)
        m: dict[Any, Any] = {"role": rng.choice(["user", "assistant", "tool", Text("user"), 1]), "parts": parts}
        if rng.random() < 0.5:
            m["finish_reason"] = rng.choice(["stop", None, "length", 0])
        return m

    out: list[Any] = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.6:
            out.append([message() for _ in range(rng.randint(0, 3))])
        elif kind < 0.8:
            out.append(message())
        else:
            out.append([part() for _ in range(rng.randint(0, 3))])
    return out


SETTINGS = {
    "defaults": {},
    "a small value limit": {"max_value_bytes": 200},
    "a small span budget": {"max_span_payload_bytes": 700},
    "user rules": {"redact_keys": ("content",), "redact_patterns": (r"thirty",)},
    "capture off": {"capture_content": False},
}


def compare(new: Any, old: Any) -> list[str]:
    """Every difference between the two versions over the corpus, under each of SETTINGS."""
    from agentotel import _config

    differences: list[str] = []
    edges, randoms = edge_values(), random_values(0, 3000)
    runs = trajectory_calls()
    for name, overrides in SETTINGS.items():
        _config.configure(_config.Settings.resolve(environ={}, **{"capture_content": True, **overrides}))
        try:
            for _ in range(2):  # twice: the second time with the texts the first found clean remembered
                for run in runs:
                    for calls in run:
                        pair = Pair(new, old)
                        for method, args, kwargs in calls:
                            if (diff := pair.call(method, *args, **kwargs)) is not None:
                                differences.append(f"{name}, trajectory: {diff}")
                for i, value in enumerate([*edges, *randoms]):
                    pair = Pair(new, old)
                    for method, kwargs in (("encode", {}), ("encode", {"repeated": True}), ("encode_messages", {})):
                        if (diff := pair.call(method, value, **kwargs)) is not None:
                            differences.append(f"{name}, value {i}: {diff}")
                # A conversation growing message by message, as an agent sends it.
                conversation: list[Any] = []
                for value in randoms[:400]:
                    conversation.append(value if isinstance(value, dict) else {"role": "user", "parts": value})
                    if (diff := Pair(new, old).call("encode_messages", list(conversation))) is not None:
                        differences.append(f"{name}, conversation of {len(conversation)}: {diff}")
        finally:
            _config.reset()
    return differences


# --- pytest plugin: every Payload of a test session shadowed by the reference version ---------------------

_shadows: dict[int, tuple[Any, Any]] = {}
_differences: list[str] = []
_inside: list[str] = []


def shadow() -> None:
    """From now on every `Payload` is shadowed by one of the reference version, called alike and compared."""
    from agentotel import content

    old = reference_module()
    init, encode, encode_messages = content.Payload.__init__, content.Payload.encode, content.Payload.encode_messages

    def shadowed_init(self: Any) -> None:
        init(self)
        _shadows[id(self)] = (self, old.Payload())  # the payload kept alive: its id is never reused

    def shadowed(method: Any, name: str) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _inside:  # a call from within a shadowed one (encode_messages' own encode calls): its shadow makes its own
                return method(self, *args, **kwargs)
            _inside.append(name)
            try:
                got = method(self, *args, **kwargs)
            finally:
                _inside.pop()
            shadow = _shadows.get(id(self))
            if shadow is not None:
                want = getattr(shadow[1], name)(*args, **kwargs)
                if got != want or _state(self) != _state(shadow[1]):
                    _differences.append(f"{name}: new {got!r:.200} {_state(self)} / old {want!r:.200} {_state(shadow[1])}")
            return got

        return call

    content.Payload.__init__ = shadowed_init  # type: ignore[method-assign]
    content.Payload.encode = shadowed(encode, "encode")  # type: ignore[method-assign]
    content.Payload.encode_messages = shadowed(encode_messages, "encode_messages")  # type: ignore[method-assign]


def report() -> bool:
    """Print how many payloads were shadowed and what differed; whether nothing did."""
    print(f"\ncontent equivalence: {len(_shadows)} payloads shadowed, {len(_differences)} differences")
    for diff in _differences[:20]:
        print("  " + diff)
    return not _differences


def pytest_configure(config: Any) -> None:
    shadow()


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if not report():
        session.exitstatus = 1


if __name__ == "__main__" and sys.argv[1:2] == ["--replay"]:
    # --replay DIR_OR_FILE ...: recorded SDK traffic replayed through the real SDKs (tests/providers/peer_replay.py,
    # once as recorded and once through each SDK's other surface), every Payload shadowed.
    from tests.providers import peer_replay

    shadow()
    peer_replay.main([*sys.argv[2:], "--flip"])
    sys.exit(0 if report() else 1)
elif __name__ == "__main__":
    from agentotel import content

    reference = reference_module()
    found = compare(content, reference)
    print(f"content equivalence against {reference.__file__}: {len(found)} differences")
    for line in found[:40]:
        print("  " + line)
    sys.exit(1 if found else 0)
