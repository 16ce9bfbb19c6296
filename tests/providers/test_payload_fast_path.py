"""The content policy's fast path (plain JSON values serialised without the walker's copy) encodes
exactly what the walker does: same text, same redaction count, same truncation marker.

Messages go through `Payload.encode` on every model call, so the providers' overhead depends on that
path; these cases are the ones where it must step aside (secrets, secret keys, bounds, non-plain
types) and the ones where it must not change a thing.
"""

from __future__ import annotations

import collections
import enum
import json
from typing import Any

import pytest

from agentotel import _config, content
from agentotel.content import Payload


def _walker_encode(value: Any, budget: int | None = None) -> tuple[str, int, bool]:
    """What `Payload.encode` returned before the fast path: the walker, then the shared encoder and fit."""
    policy = content._policy()
    budget = policy.max_span_bytes if budget is None else budget
    room = min(policy.max_value_bytes, budget)
    walker = content._Walker(policy, room + content._PRECUT_MARGIN)
    safe = walker.walk(value)
    text = json.dumps(safe, ensure_ascii=False, separators=(",", ":"))
    truncated = walker.truncated
    if len(text.encode("utf-8", "surrogatepass")) > room:
        text = content._fit(safe, text, room)
        truncated = True
    return text, walker.redactions, truncated


def _encode(value: Any, repeated: bool = False) -> tuple[str | None, int, bool]:
    payload = Payload()
    text = payload.encode(value, repeated=repeated)
    return text, payload.redactions, payload.truncated


class Colour(enum.IntEnum):
    RED = 1


class Text(str):
    pass


Pair = collections.namedtuple("Pair", "left right")


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


_MESSAGES = [
    {"role": "system", "parts": [{"type": "text", "content": "You are terse."}]},
    {"role": "user", "parts": [{"type": "text", "content": "Count to thirty."}]},
    {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {"x": 1.5, "y": None}}]},
]

CASES = {
    "messages": _MESSAGES,
    "scalars": [1, -2, 2.5, True, False, None, "", "é", "日本語", (1, 2), {"": {}}],
    "a top-level string": "Count to thirty.",
    "a top-level number": 42,
    "non-finite floats": {"a": float("nan"), "b": [float("inf"), -float("inf")]},
    "a secret in text": [{"role": "user", "parts": [{"type": "text", "content": "use sk-abcdefghijklmnopqrstuvwx1234"}]}],
    "a bearer token": {"headers": "Authorization: Bearer abcdefgh12345678"},
    "a url password": ["postgres://user:hunter2@db/x"],
    "a secret key": {"api_key": "abc", "password": "x", "token": 3, "auth": {"nested": "kept"}},
    "a secret key split oddly": {"pa_sswd": "hidden", "to-ken": "hidden"},
    "ordinary words that look like hints": {"author": "the keyboard monkey", "passage": "basic usage"},
    "long token-like runs": ["a" * 40, "xoxb-" + "1" * 20, "-----BEGIN PRIVATE KEY-----abc"],
    "max depth - 1": _nested(31),
    "max depth": _nested(32),
    "max depth + 1": _nested(33),
    "1000 items": list(range(1000)),
    "1001 items": list(range(1001)),
    "over 20,000 nodes": [list(range(900)) for _ in range(25)],
    "non-str keys": {1: "a", 2.5: "b", False: "c", None: "d"},
    "a namedtuple": {"pair": Pair(1, 2)},
    "a str subclass": {"text": Text("plain")},
    "an int enum": {"colour": Colour.RED},
    "a set": {"tags": {"b", "a"}},
    "bytes": {"blob": b"abc"},
    "a lone surrogate": {"text": "a\ud800b"},
    "a Kelvin sign key": {"\u212aey": "value"},
    "a long string": "word " * 20_000,
    "many long strings": ["word " * 5000 for _ in range(20)],
    "a shared (not cyclic) member": [[1, 2]] * 3,
}


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch):
    def install(**overrides: Any) -> None:
        _config.configure(_config.Settings.resolve(environ={}, **overrides))

    yield install
    _config.reset()


@pytest.mark.parametrize("name", CASES)
def test_fast_path_encodes_what_the_walker_does(settings, name):
    settings(capture_content=True)
    value = CASES[name]
    try:
        expected = _walker_encode(value)
    except UnicodeEncodeError:  # the lone surrogate: both paths give up the same way (no attribute)
        expected = (None, 0, False)
    assert _encode(value) == expected
    assert _encode(value) == expected  # again, with the texts found clean the first time remembered


def test_a_text_remembered_clean_is_redacted_once_a_user_pattern_covers_it(settings):
    settings(capture_content=True)
    value = [{"role": "user", "parts": [{"type": "text", "content": "deploy to cluster-internal-7"}]}]
    assert _encode(value) == (json.dumps(value, separators=(",", ":")), 0, False)
    assert "deploy to cluster-internal-7" in content._policy().clean_texts
    settings(capture_content=True, redact_patterns=(r"internal-\d+",))
    text, redactions, _ = _encode(value)
    assert "internal-7" not in text and redactions == 1


def test_a_text_with_a_secret_is_never_remembered_clean(settings):
    settings(capture_content=True)
    secret = "use sk-abcdefghijklmnopqrstuvwx1234 now"
    for _ in range(2):
        text, redactions, _ = _encode([{"role": "user", "parts": [{"type": "text", "content": secret}]}])
        assert "sk-abcdefghijklmnopqrstuvwx1234" not in text and redactions == 1
        assert content.redact_text(secret) == ("use [REDACTED] now", 1)
    assert secret not in content._policy().clean_texts


def test_the_memory_of_clean_texts_is_bounded(settings):
    settings(capture_content=True)
    policy = content._policy()
    for i in range(content._CLEAN_TEXTS + 10):
        policy.remember_clean(f"text {i}")
    assert 0 < len(policy.clean_texts) <= content._CLEAN_TEXTS
    policy.remember_clean("x" * (content._CLEAN_CHARS // 16 + 1))  # too long to keep
    assert all(len(text) <= content._CLEAN_CHARS // 16 for text in policy.clean_texts)
    for _ in range(20):
        policy.remember_clean("y" * (content._CLEAN_CHARS // 16) + str(_))
    assert sum(map(len, policy.clean_texts)) <= content._CLEAN_CHARS


def test_a_cycle_is_encoded_as_the_walker_does(settings):
    settings(capture_content=True)
    cyclic: list[Any] = [1, {"a": "b"}]
    cyclic.append(cyclic)
    text, redactions, truncated = _encode(cyclic)
    assert (text, redactions, truncated) == _walker_encode(cyclic)
    assert "[cycle]" in text


@pytest.mark.parametrize("name", ["messages", "a secret key", "ordinary words that look like hints", "a top-level string"])
def test_user_patterns_and_keys_are_applied_on_the_fast_path_too(settings, name):
    settings(capture_content=True, redact_patterns=("thirty", "monkey"), redact_keys=("role", "author"))
    value = CASES[name]
    assert _encode(value) == _walker_encode(value)
    if name == "messages":
        text, redactions, _ = _encode(value)
        assert "thirty" not in text and '"role":"[REDACTED]"' in text and redactions == 4


def test_a_small_value_limit_truncates_as_before(settings):
    settings(capture_content=True, max_value_bytes=120)
    for value in (_MESSAGES, "x" * 200, ["short", "y" * 120]):
        text, redactions, truncated = _encode(value)
        assert (text, redactions, truncated) == _walker_encode(value)
        assert truncated and len(text.encode()) <= 120


def test_the_span_budget_is_shared_as_before(settings):
    settings(capture_content=True, max_span_payload_bytes=300)
    payload = Payload()
    first = payload.encode(_MESSAGES)
    second = payload.encode(_MESSAGES)
    assert first == _walker_encode(_MESSAGES)[0]
    assert second == _walker_encode(_MESSAGES, budget=300 - len(first.encode()))[0]
    assert payload.truncated


def test_the_fast_path_leaves_the_value_alone(settings):
    settings(capture_content=True)
    value = json.loads(json.dumps(_MESSAGES))
    before = json.dumps(value)
    _encode(value)
    assert json.dumps(value) == before


# --- Values sent again on every call (system instructions, tool definitions): known by their text ----------


@pytest.mark.parametrize("name", CASES)
def test_a_repeated_value_encodes_what_the_walker_does(settings, name):
    settings(capture_content=True)
    value = CASES[name]
    try:
        expected = _walker_encode(value)
    except UnicodeEncodeError:
        expected = (None, 0, False)
    for _ in range(3):  # first seen, then known by its text
        assert _encode(value, repeated=True) == expected


def test_a_repeated_value_is_not_walked_again(settings):
    import sys

    settings(capture_content=True)
    value = [{"type": "text", "content": "You are terse."}]
    first = _encode(value, repeated=True)
    walked = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is content._as_is.__code__:
            walked.append(1)

    sys.setprofile(profile)
    try:
        again = _encode([{"type": "text", "content": "You are terse."}], repeated=True)  # equal, not the same object
    finally:
        sys.setprofile(None)
    assert again == first and not walked
    changed = _encode([{"type": "text", "content": "You are terse!"}], repeated=True)
    assert changed[0] == '[{"type":"text","content":"You are terse!"}]'


def test_a_repeated_value_with_a_secret_is_redacted_every_time(settings):
    settings(capture_content=True)
    value = [{"type": "text", "content": "key sk-abcdefghijklmnopqrstuvwx1234"}, {"api_key": "abc"}]
    for _ in range(3):
        text, redactions, _ = _encode(value, repeated=True)
        assert "sk-abcdefghijklmnopqrstuvwx1234" not in text and '"abc"' not in text and redactions == 2
    assert not content._policy().clean_json


def test_a_known_repeated_text_is_redacted_once_a_user_rule_covers_it(settings):
    settings(capture_content=True)
    value = [{"type": "text", "content": "You run on cluster-internal-7."}, {"region": "eu"}]
    assert _encode(value, repeated=True)[1] == 0
    settings(capture_content=True, redact_patterns=(r"internal-\d+",), redact_keys=("region",))
    text, redactions, _ = _encode(value, repeated=True)
    assert "internal-7" not in text and '"eu"' not in text and redactions == 2


def test_a_known_repeated_text_still_fits_a_smaller_room(settings):
    settings(capture_content=True, max_span_payload_bytes=200)
    value = [{"type": "text", "content": "word " * 20}]
    payload = Payload()
    first = payload.encode(value, repeated=True)
    second = payload.encode(value, repeated=True)  # the span's budget is now smaller than the text
    assert first == _walker_encode(value)[0]
    assert second == _walker_encode(value, budget=200 - len(first.encode()))[0]
    assert payload.truncated and len(second.encode()) <= 200 - len(first.encode())


def test_the_memory_of_repeated_texts_is_bounded(settings):
    settings(capture_content=True)
    policy = content._policy()
    for i in range(content._CLEAN_TEXTS + 10):
        policy.remember_json(f'["text {i}"]')
    assert 0 < len(policy.clean_json) <= content._CLEAN_TEXTS
    policy.remember_json("x" * (content._CLEAN_CHARS // 16 + 1))
    assert all(len(text) <= content._CLEAN_CHARS // 16 for text in policy.clean_json)


def test_a_repeated_value_over_the_limit_is_not_encoded_first_again_and_again(settings):
    settings(capture_content=True, max_value_bytes=1000)
    big = [{"type": "text", "content": "word " * 1000}]
    small = [{"type": "text", "content": "You are terse."}]
    expected = _walker_encode(big)
    assert _encode(big, repeated=True) == expected and expected[2]  # cut, as before
    policy = content._policy()
    assert policy.skip_known == content._SKIP_KNOWN
    for _ in range(content._SKIP_KNOWN):
        assert _encode(big, repeated=True) == expected  # walked, not encoded whole first
    assert policy.skip_known == 0
    assert _encode(small, repeated=True) == _walker_encode(small) == _encode(small, repeated=True)
    assert '[{"type":"text","content":"You are terse."}]' in policy.clean_json


def _messages_encode(messages: Any) -> tuple[str | None, int, bool, int]:
    """encode_messages' text, redactions and truncation, and how many times it walked a value (`_as_is`)."""
    import sys

    walked = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is content._as_is.__code__:
            walked.append(1)

    payload = Payload()
    sys.setprofile(profile)
    try:
        text = payload.encode_messages(messages)
    finally:
        sys.setprofile(None)
    return text, payload.redactions, payload.truncated, len(walked)


def test_a_growing_conversation_walks_only_its_new_messages(settings):
    settings(capture_content=True)
    conversation: list[Any] = [{"role": "system", "parts": [{"type": "text", "content": "You plan trips."}]}]
    turns = [
        {"role": "user", "parts": [{"type": "text", "content": "Find a flight to Oslo on 3 May."}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "flights", "arguments": {"to": "OSL", "day": 3}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": {"flights": [{"no": "SK 4411", "eur": 129.5}]}}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "SK 4411 at 129.50 EUR."}]},
    ]
    for turn in turns:
        conversation.append(turn)
        fresh = json.loads(json.dumps(conversation))  # the adapter builds new dicts on every call
        text, redactions, truncated, walked = _messages_encode(fresh)
        assert (text, redactions, truncated) == _walker_encode(fresh)
        assert walked == (len(fresh) if len(fresh) == 2 else 1)  # the first call walks both, later ones the newest


def test_a_conversation_with_a_secret_is_redacted_on_every_call(settings):
    settings(capture_content=True)
    conversation = [
        {"role": "user", "parts": [{"type": "text", "content": "my key is sk-abcdefghijklmnopqrstuvwx1234"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "Noted."}]},
    ]
    for _ in range(3):
        text, redactions, _, _ = _messages_encode(json.loads(json.dumps(conversation)))
        assert "sk-abcdefghijklmnopqrstuvwx1234" not in text and redactions == 1
        assert json.loads(text)[1] == conversation[1]


@pytest.mark.parametrize("name", CASES)
def test_messages_made_of_each_case_encode_as_before(settings, name):
    settings(capture_content=True)
    messages = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}, {"role": "tool", "parts": [CASES[name]]}]
    policy = content._policy()
    room = policy.max_value_bytes
    # Before: the whole list's own text when the walker's test passes and it fits, else message by message.
    whole = content._as_is(messages, policy, room)
    if whole is not None and len(whole.encode("utf-8", "surrogatepass")) <= room:
        expected = whole
    else:
        parts = []
        for message in messages:
            try:
                parts.append(_walker_encode(message, budget=room)[0])
            except UnicodeEncodeError:
                parts.append("null")
        expected = "[" + ",".join(parts) + "]"
    for _ in range(2):
        assert _messages_encode(messages)[0] == expected


# --- Text-only messages and parts: matched by their shape, not walked (`_text_json`) ------------------------


_OUTPUT = [{"role": "assistant", "parts": [{"type": "text", "content": "one two three"}], "finish_reason": "stop"}]
_TEXT_SHAPES = {
    "an output message": _OUTPUT,
    "a message without finish reason": [{"role": "assistant", "parts": [{"type": "text", "content": "x"}], "finish_reason": None}],
    "reasoning and text": [{"role": "assistant", "parts": [{"type": "reasoning", "content": "hm"}, {"type": "text", "content": "x"}], "finish_reason": "stop"}],
    "system instructions": [{"type": "text", "content": "You are terse."}],
    "one message": {"role": "user", "parts": [{"type": "text", "content": "Count to thirty."}]},
    "a conversation": _MESSAGES[:2] * 3,
    "escapes and unicode": [{"role": "user", "parts": [{"type": "text", "content": 'a "quote" \\ back\nslash\t\u0001 é 日本語 \U0001f600'}]}],
    "a lone surrogate": [{"type": "text", "content": "a\ud800b"}],
    "no parts": [{"role": "user", "parts": []}],
    "an empty list": [],
    "many parts": [{"role": "user", "parts": [{"type": "text", "content": f"part {i}"} for i in range(300)]}],
}
# Shapes `_text_json` leaves to `_as_is` (None), whatever `_as_is` answers.
_OTHER_SHAPES = {
    "a tool call": [_MESSAGES[2]],
    "one part": {"type": "text", "content": "hi"},
    "empty dicts": [{}, {"role": "user", "parts": [{}]}],
    "keys in another order": [{"parts": [{"type": "text", "content": "x"}], "role": "user"}],
    "a part's keys in another order": [{"content": "x", "type": "text"}],
    "a third part field": [{"role": "assistant", "parts": [{"type": "reasoning", "content": "think", "signature": None}]}],
    "a number": [{"role": "user", "parts": [{"type": "text", "content": "x"}], "finish_reason": 1}],
    "a tuple": [{"role": "user", "parts": ({"type": "text", "content": "x"},)}],
    "a str subclass": [{"type": "text", "content": Text("x")}],
    "a nested part": [{"role": "user", "parts": [{"type": "text", "content": {"text": "x"}}]}],
    "deeper lists": [{"role": "user", "parts": [[{"type": "text", "content": "x"}]]}],
    "a secret": [{"role": "user", "parts": [{"type": "text", "content": "use sk-abcdefghijklmnopqrstuvwx1234"}]}],
    "a secret key": [{"role": "user", "parts": [{"type": "text", "content": "x"}], "api_key": "abc"}],
    "1001 messages": [{"role": "user", "parts": []}] * 1001,
    "1001 parts": [{"role": "user", "parts": [{"type": "text", "content": "x"}] * 1001}],
    "over 3,000 texts": [{"role": "user", "parts": [{"type": "text", "content": "x"}] * 900}] * 2,
    "a string": "x",
    "a long text": [{"type": "text", "content": "word " * 20_000}],
}


@pytest.mark.parametrize("name", [*_TEXT_SHAPES, *_OTHER_SHAPES])
def test_a_text_only_value_encodes_what_the_general_path_does(settings, name):
    settings(capture_content=True)
    value = {**_TEXT_SHAPES, **_OTHER_SHAPES}[name]
    policy = content._policy()
    room = policy.max_value_bytes
    content._as_is(_OUTPUT, policy, room)  # the keys of the shapes learnt (as by any call's first output)
    general = content._as_is(value, policy, room)
    assert content._as_is(value, policy, room) == general
    fast = content._text_json(value, policy, room)
    if name in _TEXT_SHAPES:
        assert fast is not None and fast == general == content._dumps(value)
    else:
        assert fast is None
    for repeated in (False, True):
        try:
            expected = _walker_encode(value)
        except UnicodeEncodeError:
            expected = (None, 0, False)
        assert _encode(value, repeated=repeated) == expected
    if name in _TEXT_SHAPES and type(value) is list:  # as input messages (`encode_messages`): the same text
        assert _messages_encode(value)[:3] == (fast, 0, False)


def test_text_shapes_matched_at_random_give_the_general_paths_text(settings):
    """`_text_json` (the shape match every model call's messages take) against `_as_is` and `_dumps` on
    2,000 seeded values, shapes and characters drawn at random (JSON escapes, control characters, lone
    surrogates, roles, kinds and finish reasons of any text): the same text whenever it answers, and
    no answer only where `_as_is` has none either or the value is not one of its shapes."""
    import random

    settings(capture_content=True)
    policy = content._policy()
    content._as_is(_OUTPUT, policy, policy.max_value_bytes)  # the shapes' keys learnt
    rng = random.Random(19)
    alphabet = ["a", "é", "\n", '"', "\\", "/", "\u2028", "\ud800", "\U0001f600", "\x00", "\x1f", "\x7f", " ", "日"]

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))

    def part() -> Any:
        if rng.random() < 0.9:
            return {"type": rng.choice(["text", "reasoning", text()]), "content": text()}
        return rng.choice([{"content": "x", "type": "text"}, {"type": "text", "content": 1}, {"type": "tool_call", "id": "c"}])

    def message() -> Any:
        value: dict[str, Any] = {"role": rng.choice(["user", "assistant", text()]), "parts": [part() for _ in range(rng.randint(0, 3))]}
        if rng.random() < 0.5:
            value["finish_reason"] = rng.choice(["stop", None, text(), 1])
        return value

    shapes = [lambda: [message() for _ in range(rng.randint(0, 3))], message, lambda: [part() for _ in range(rng.randint(0, 3))]]
    written = 0
    for _ in range(2000):
        value = rng.choice(shapes)()
        fast = content._text_json(value, policy, 10_000)
        general = content._as_is(value, policy, 10_000)
        if fast is not None:
            written += 1
            assert fast == general == content._dumps(value)
        else:
            assert general is None or not _is_text_shape(value)
    assert written > 500


def _is_text_shape(value: Any) -> bool:
    """Whether `value` is one of the shapes `_text_json` writes (messages of text parts, a message, text parts)."""

    def parts(items: Any) -> bool:
        return type(items) is list and all(type(p) is dict and tuple(p) == ("type", "content") and all(type(v) is str for v in p.values()) for p in items)

    def message(m: Any) -> bool:
        if type(m) is not dict or tuple(m) not in (("role", "parts"), ("role", "parts", "finish_reason")):
            return False
        return type(m["role"]) is str and parts(m["parts"]) and type(m.get("finish_reason")) in (str, type(None))

    if type(value) is dict:
        return message(value)
    if value and type(value[0]) is dict and "role" in value[0]:
        return all(message(m) for m in value)
    return parts(value)


@pytest.mark.parametrize("rule", ["pattern", "key"])
def test_a_text_only_value_follows_the_users_rules(settings, rule):
    value = [{"role": "user", "parts": [{"type": "text", "content": "Count to thirty."}]}]
    settings(capture_content=True)
    assert _encode(value) == _encode(value) == (json.dumps(value, separators=(",", ":")), 0, False)
    if rule == "pattern":
        settings(capture_content=True, redact_patterns=("thirty",))
    else:
        settings(capture_content=True, redact_keys=("content",))
    for _ in range(2):
        assert _encode(value) == _walker_encode(value)
        assert "thirty" not in _encode(value)[0] and _encode(value)[1] == 1


def test_an_output_message_of_text_is_not_walked(settings):
    """What every model call records as its output: matched by its shape, not walked by `_as_is`."""
    import sys

    settings(capture_content=True)
    output = [{"role": "assistant", "parts": [{"type": "text", "content": "one two three"}], "finish_reason": "stop"}]
    first = _encode(output)  # (its keys learnt: a key is known plain once the general path has seen it)
    walked = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in (content._as_is.__code__, content._Walker.walk.__code__):
            walked.append(frame.f_code.co_name)

    fresh = json.loads(json.dumps(output))
    sys.setprofile(profile)
    try:
        again = _encode(fresh)
    finally:
        sys.setprofile(None)
    assert again == first == (json.dumps(output, separators=(",", ":")), 0, False) and walked == []


def test_the_equivalence_corpus_encodes_what_the_walker_does(settings):
    """The hand-made edge cases and 600 of the random shapes `benchmarks.content_equivalence` runs against
    the previous content.py (secrets, user types in every slot, values at and past each limit, surrogates,
    cycles, big ints), here against the walker: `encode` (plain and repeated, twice: the second time with
    the texts found clean remembered) gives what the walker does."""
    from benchmarks.content_equivalence import edge_values, random_values

    settings(capture_content=True)
    content._as_is(_OUTPUT, content._policy(), content._policy().max_value_bytes)  # the shapes' keys learnt
    for value in [*edge_values(), *random_values(20, 600)]:
        try:
            expected = _walker_encode(value)
        except UnicodeEncodeError:  # a lone surrogate: no attribute, on every path
            expected = (None, 0, False)
        for repeated in (False, True, False, True):
            assert _encode(value, repeated=repeated) == expected, value


def test_a_long_value_with_a_lone_surrogate_is_recorded(settings):
    """Bytes decoded with surrogateescape (a tool's output of a binary file) leave lone surrogates, which strict
    UTF-8 refuses. A value long enough to be measured exactly was lost (an internal error, no attribute), and
    a conversation holding one made `encode_messages` raise: the model call then ran untraced."""
    settings(capture_content=True)
    output = "bad \udcff byte " * 2000  # 30,000 characters: over a quarter of the 64 KiB value limit
    conversation = [
        {"role": "user", "parts": [{"type": "text", "content": "cat data.bin"}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": output}]},
    ]
    text = Payload().encode_messages(conversation)
    assert text is not None and json.loads(text)[1]["parts"][0]["response"] == output
    text, redactions, truncated = _encode({"result": output})
    assert json.loads(text) == {"result": output} and (redactions, truncated) == (0, False)
    text, _, truncated = _encode({"result": output * 3})  # past the limit: cut, as any other value
    assert truncated and json.loads(text)["result"].startswith("bad \udcff byte")


# A prompt and an instruction of one text each, as an adapter builds them from plain strings, and texts
# around the limits that decide whether one is recorded as it is (a secret, a cut, non-ASCII, a lone surrogate).
_ONE_TEXTS = {
    "prose": "Count to thirty.",
    "a secret": "key sk-abcdefghijklmnopqrstuvwx1234",
    "non-ASCII": "Réponds en français, s'il te plaît: 日本",
    "JSON escapes": 'a "quoted"\n\\ path \u2028',
    "a lone surrogate": "x\ud800y",
    "long": "word " * 3_000,
}


def _one_text_values(text: str) -> tuple[Any, Any]:
    return [{"role": "user", "parts": [{"type": "text", "content": text}]}], [{"type": "text", "content": text}]


@pytest.mark.parametrize("name", _ONE_TEXTS)
@pytest.mark.parametrize("limits", [{}, {"max_value_bytes": 64}, {"max_span_payload_bytes": 200}])
def test_a_prompt_and_an_instruction_sent_again_encode_as_the_first_time(settings, name, limits):
    """The second time a prompt or an instruction of one text is sent (known by its text, `_Policy.one_texts`),
    it is recorded exactly as the first time: same text, redactions, truncation and span budget left."""
    settings(capture_content=True, **limits)
    messages, instructions = _one_text_values(_ONE_TEXTS[name])

    def record() -> tuple[Any, ...]:
        payload = Payload()
        first = payload.encode_messages(messages)
        second = payload.encode(instructions, repeated=True)
        third = payload.encode(instructions, repeated=True)  # the budget now smaller: a cut where the first fit
        return first, second, third, payload.redactions, payload.truncated, payload._budget

    fresh = record()
    for _ in range(2):
        assert record() == fresh
    # New objects of the same texts, and a new policy (a settings change) that knows none of them: the same.
    messages, instructions = _one_text_values("".join(_ONE_TEXTS[name]))
    assert record() == fresh
    settings(capture_content=True, **limits)
    assert record() == fresh


def test_a_prompt_and_an_instruction_sent_again_are_not_encoded_again(settings):
    """Known by their text, a prompt and an instruction sent again enter neither `_known_json` (the encoder)
    nor `_as_is` (the walk): what an agent sends on every call costs a look-up."""
    import sys

    settings(capture_content=True)
    messages, instructions = _one_text_values("You are terse.")
    first = Payload().encode_messages(messages), Payload().encode(instructions, repeated=True)
    entered = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in (content._known_json.__code__, content._as_is.__code__):
            entered.append(frame.f_code.co_name)

    again_messages, again_instructions = _one_text_values("You are " + "terse.")  # equal, not the same objects
    sys.setprofile(profile)
    try:
        again = Payload().encode_messages(again_messages), Payload().encode(again_instructions, repeated=True)
    finally:
        sys.setprofile(None)
    assert again == first == ('[{"role":"user","parts":[{"type":"text","content":"You are terse."}]}]', '[{"type":"text","content":"You are terse."}]')
    assert entered == []


def test_a_known_prompt_is_redacted_once_a_user_rule_covers_it(settings):
    settings(capture_content=True)
    messages, instructions = _one_text_values("You run on cluster-internal-7.")
    for _ in range(2):
        assert "internal-7" in Payload().encode_messages(messages) and "internal-7" in Payload().encode(instructions, repeated=True)
    settings(capture_content=True, redact_patterns=(r"internal-\d+",))
    payload = Payload()
    assert "internal-7" not in payload.encode_messages(messages) and "internal-7" not in payload.encode(instructions, repeated=True)
    assert payload.redactions == 2


def test_the_memory_of_prompts_and_instructions_is_bounded(settings):
    settings(capture_content=True)
    policy = content._policy()
    for i in range(300):
        Payload().encode_messages(_one_text_values(f"prompt {i}")[0])
    assert 0 < len(policy.one_texts) <= 256
    Payload().encode(_one_text_values("x" * (content._CLEAN_CHARS // 16))[1], repeated=True)
    assert all(len(text) <= content._CLEAN_CHARS // 16 for text in policy.one_texts.values())


def test_an_output_message_of_one_text_is_written_as_the_encoder_writes_it(settings):
    """`_text_json` writes one message of one text part around its text (`_output_pieces`): the encoder's own
    text, for roles, part types, finish reasons and texts drawn at random (JSON escapes, control characters,
    lone surrogates, the pieces' own `"content":""`)."""
    import random

    settings(capture_content=True)
    policy = content._policy()
    content._as_is(_OUTPUT, policy, policy.max_value_bytes)  # the shapes' keys learnt
    rng = random.Random(30)
    alphabet = ["a", "é", "\n", '"', "\\", ":", "\u2028", "\ud800", "\U0001f600", "\x00", "\x1f", " ", '"content":""', "content"]

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))

    for _ in range(2000):
        role, kind, body = rng.choice(["assistant", text()]), rng.choice(["text", "reasoning", text()]), text()
        finish = rng.choice(["stop", None, text()])
        value = [{"role": role, "parts": [{"type": kind, "content": body}], "finish_reason": finish}]
        for piece in (role, kind, body, finish):
            if piece is not None:
                policy.remember_clean(piece)  # (the straight path takes texts known clean)
        assert content._text_json(value, policy, 10_000) == content._dumps(value)
