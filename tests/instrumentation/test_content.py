"""The content policy: JSON-safe conversion, redaction, truncation, and capture on/off."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import decimal
import enum
import json
import uuid
from pathlib import PurePosixPath

import numpy as np
import pydantic
import pytest

from agentotel import _config
from agentotel.content import REDACTED, Payload, capture_enabled, redact, redact_text, to_json_safe
from agentotel.semconv import AGENTOTEL_PAYLOAD_REDACTIONS, AGENTOTEL_PAYLOAD_TRUNCATED

# --- JSON-safe conversion ---------------------------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    tags: set[str]


class Model(pydantic.BaseModel):
    name: str
    when: dt.date
    secret: pydantic.SecretStr


class RaisingRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr is broken")


class Plain:
    def __init__(self) -> None:
        self.visible = 1
        self._hidden = 2
        self.me = self


Pair = collections.namedtuple("Pair", "left right")


def test_to_json_safe_converts_every_common_python_value():
    cyclic: list = [1]
    cyclic.append(cyclic)
    value = {
        "dataclass": Point(1, {"b", "a"}),
        "model": Model(name="m", when=dt.date(2024, 5, 1), secret="hunter2"),
        "bytes": b"text",
        "binary": b"\xff\x00",
        "set": {3, 1, 2},
        "datetime": dt.datetime(2024, 5, 1, 12, 30),
        "delta": dt.timedelta(seconds=90),
        "np_float": np.float32(1.5),
        "np_int": np.int64(7),
        "np_array": np.arange(3),
        "enum": Colour.RED,
        "uuid": uuid.UUID(int=1),
        "decimal": decimal.Decimal("1.10"),
        "path": PurePosixPath("/tmp/x"),
        "nan": float("nan"),
        "cycle": cyclic,
        "raising_repr": RaisingRepr(),
        "plain": Plain(),
        "namedtuple": Pair(1, 2),
        "exception": ValueError("boom"),
        (1, 2): "tuple key",
    }
    safe = to_json_safe(value)
    assert json.loads(json.dumps(safe, allow_nan=False)) == safe  # strict JSON round trip
    assert safe["dataclass"] == {"x": 1, "tags": ["a", "b"]}
    assert safe["model"] == {"name": "m", "when": "2024-05-01", "secret": "**********"}
    assert safe["bytes"] == "text"
    assert safe["binary"] == "base64:/wA="
    assert safe["set"] == [1, 2, 3]
    assert safe["datetime"] == "2024-05-01T12:30:00"
    assert safe["delta"] == 90.0
    assert safe["np_float"] == 1.5 and safe["np_int"] == 7 and safe["np_array"] == [0, 1, 2]
    assert safe["enum"] == "red"
    assert safe["uuid"] == "00000000-0000-0000-0000-000000000001"
    assert safe["decimal"] == "1.10"
    assert safe["path"] == "/tmp/x"
    assert safe["nan"] == "nan"
    assert safe["cycle"] == [1, "[cycle]"]
    assert safe["raising_repr"] == f"<unrepresentable {__name__}.RaisingRepr>"
    assert safe["plain"]["visible"] == 1 and "_hidden" not in safe["plain"] and safe["plain"]["me"] == "[cycle]"
    assert safe["namedtuple"] == {"left": 1, "right": 2}
    assert safe["exception"] == "ValueError: boom"
    assert safe["(1, 2)"] == "tuple key"


def test_to_json_safe_is_deterministic_for_objects_with_default_repr():
    class Opaque:
        __slots__ = ()

    assert to_json_safe(Opaque()) == to_json_safe(Opaque())  # no memory address in the output
    assert "0x" not in json.dumps(to_json_safe(lambda: None))


def test_to_json_safe_bounds_depth_and_width():
    deep: list = []
    cursor = deep
    for _ in range(500):
        cursor.append([])
        cursor = cursor[0]
    text = json.dumps(to_json_safe(deep))
    assert "[max depth]" in text
    wide = to_json_safe(list(range(5000)))
    assert len(wide) == 1001 and wide[-1] == "[4000 more items]"


def test_to_json_safe_survives_a_model_dump_that_raises():
    class Broken(pydantic.BaseModel):
        x: int

        def model_dump(self, **kwargs):
            raise RuntimeError("no dump")

    assert to_json_safe(Broken(x=1)) == "Broken(x=1)"  # falls back to the repr


# --- Redaction ------------------------------------------------------------------------------------

SECRETS = {
    "openai": "sk-" + "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsT",
    "openai_project": "sk-proj-" + "Ab12Cd34Ef56Gh78Ij90KlMnOpQr_-x",
    "anthropic": "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1HgFeDcBa-AAAA",
    "aws_access_key": "AKIA" + "IOSFODNN7EXAMPLE",
    "github": "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a",
    "github_fine_grained": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "slack": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOp",
    "google": "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "huggingface": "hf_" + "abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "jwt": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_provider_tokens_are_redacted(configure, kind):
    secret = SECRETS[kind]
    text, count = redact_text(f"use {secret} now")
    assert secret not in text and secret[-8:] not in text
    assert text == f"use {REDACTED} now" and count == 1


@pytest.mark.parametrize(
    ("text", "secret", "expected"),
    [
        ("Authorization: Bearer abc.def-ghi_jkl123", "abc.def-ghi_jkl123", "Authorization: Bearer [REDACTED]"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED]"),
        ("password=hunter2 user=bob", "hunter2", "password=[REDACTED] user=bob"),
        ("DB_PASSWORD: 'hunter2'", "hunter2", "DB_PASSWORD: '[REDACTED]'"),
        ('{"api_key": "abc123", "n": 1}', "abc123", '{"api_key": "[REDACTED]", "n": 1}'),
        ('client.login(dbPassword="p w")', "p w", 'client.login(dbPassword="[REDACTED]")'),
        ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI", "export AWS_SECRET_ACCESS_KEY=[REDACTED]"),
        ("GET /x?q=1&access_token=abcd1234&y=2", "abcd1234", "GET /x?q=1&access_token=[REDACTED]&y=2"),
        ("postgres://bob:s3cret@db:5432/app", "s3cret", "postgres://bob:[REDACTED]@db:5432/app"),
        ("redis://:s3cret@cache:6379/0", "s3cret", "redis://:[REDACTED]@cache:6379/0"),
        ("secret: topsecretvalue", "topsecretvalue", "secret: [REDACTED]"),
    ],
)
def test_auth_headers_key_values_and_connection_strings_are_redacted(configure, text, secret, expected):
    redacted, count = redact_text(text)
    assert secret not in redacted
    assert redacted == expected and count == 1


def test_private_keys_are_redacted_whole_even_when_cut(configure):
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq83v\n-----END RSA PRIVATE KEY-----"
    assert redact_text(f"key:\n{pem}\ndone") == (f"key:\n{REDACTED}\ndone", 1)
    cut = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"
    assert redact_text(cut) == (REDACTED, 1)


@pytest.mark.parametrize(
    "text",
    [
        "the author passed 5 tokens; max_tokens=100",
        "Basic usage of the library",
        "task-abcdefghijklmnopqrstuvwxyz0123",
        "https://example.com/a:b/c",
        "a key insight",
        "password reset email sent",
    ],
)
def test_ordinary_text_is_left_alone(configure, text):
    assert redact_text(text) == (text, 0)


def test_secret_keys_in_structures_are_redacted_and_counted(configure):
    value = {
        "password": "hunter2",
        "apiKey": "abc",
        "x-api-key": "def",
        "nested": {"access_token": "tok", "max_tokens": 100, "token_count": 5},
        "headers": [{"Authorization": "Bearer abcdefghijkl"}],
    }
    safe, count = redact(value)
    assert safe == {
        "password": REDACTED,
        "apiKey": REDACTED,
        "x-api-key": REDACTED,
        "nested": {"access_token": REDACTED, "max_tokens": 100, "token_count": 5},
        "headers": [{"Authorization": REDACTED}],
    }
    assert count == 5


def test_extra_patterns_and_keys_from_settings(configure):
    configure(redact_patterns=(r"ACME-\d{6}",), redact_keys=("ssn", "internal_id"))
    text, count = redact_text("ticket ACME-123456, ssn=123-45-6789")
    assert text == f"ticket {REDACTED}, ssn={REDACTED}" and count == 2
    safe, count = redact({"internal_id": "u-1", "other": "ok"})
    assert safe == {"internal_id": REDACTED, "other": "ok"} and count == 1


def test_already_redacted_text_is_not_counted_again(configure):
    once, first = redact_text('{"Authorization": "Bearer abcdefghijkl", "password": "x"}')
    twice, second = redact_text(once)
    assert first == 2 and second == 0 and twice == once


def test_payload_counts_redactions_and_marks_the_span(recorded):
    payload = Payload()
    span = recorded.tracer().start_span("s")
    payload.set(span, "a", {"password": "hunter2", "note": "key " + SECRETS["openai"]})
    payload.apply_markers(span)
    span.end()
    attributes = recorded.one("s").attributes
    assert "hunter2" not in attributes["a"] and SECRETS["openai"] not in attributes["a"]
    assert attributes[AGENTOTEL_PAYLOAD_REDACTIONS] == 2
    assert AGENTOTEL_PAYLOAD_TRUNCATED not in attributes


# --- Truncation -----------------------------------------------------------------------------------


def test_values_over_the_limit_are_cut_to_valid_json(configure):
    configure(max_value_bytes=300)
    payload = Payload()
    value = {"text": "x" * 10_000, "rows": list(range(2000)), "nested": {"deep": ["é" * 500] * 50}}
    text = payload.encode(value)
    assert len(text.encode()) <= 300
    parsed = json.loads(text)
    assert set(parsed) == {"text", "rows", "nested"}  # the structure survives
    assert parsed["text"].startswith("xxx") and parsed["text"].endswith("…[truncated]")
    assert payload.truncated


def test_a_huge_string_is_cut_and_stays_a_json_string(configure):
    configure(max_value_bytes=1000)
    payload = Payload()
    text = payload.encode("€" * 1_000_000)
    assert len(text.encode()) <= 1000
    assert json.loads(text).endswith("…[truncated]")


def test_a_conversation_over_the_limit_is_each_message_within_it_on_every_call(configure):
    """A long run's conversation is over the per-value limit on every call: each message is what it
    would be alone (redacted, cut when over the limit itself), call after call as the conversation
    grows - also for the messages a call before had already seen."""
    configure(max_value_bytes=2000)
    conversation = [{"role": "system", "parts": [{"type": "text", "content": "You are careful."}]}]
    for k in range(12):
        conversation = conversation + [
            {"role": "assistant", "parts": [{"type": "text", "content": f"step {k} é✓ " * 40}]},  # ~600 bytes
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{k}",
                                        "response": ("é" * 1500) if k % 4 == 1 else f"password=hunter{k}" if k % 4 == 2 else "x" * 900}]},
        ]
        payload = Payload()
        text = payload.encode_messages(conversation)
        alone = [Payload() for _ in conversation]
        assert text == "[" + ",".join(p.encode(m) for p, m in zip(alone, conversation)) + "]", k
        assert payload.redactions == sum(p.redactions for p in alone) and payload.truncated == any(p.truncated for p in alone)
    assert payload.truncated and payload.redactions == 3  # 'é' * 1500 is 3000 bytes: cut; three passwords


def test_the_span_budget_is_shared_by_its_values(configure):
    configure(max_value_bytes=1000, max_span_payload_bytes=1500)
    payload = Payload()
    first = payload.encode("a" * 5000)
    second = payload.encode("b" * 5000)
    third = payload.encode("c" * 5000)
    sizes = [len(t.encode()) for t in (first, second, third)]
    assert sizes[0] <= 1000 and sum(sizes) <= 1500
    for t in (first, second, third):
        json.loads(t)
    assert payload.truncated


@pytest.mark.parametrize("offset", range(0, 200, 9))
def test_truncation_never_reveals_part_of_a_secret(configure, offset):
    configure(max_value_bytes=100)
    for secret in (SECRETS["anthropic"], "postgres://bob:s3cretpassw0rd@db:5432/app"):
        value = ["y" * offset + " " + secret + " tail"] * 3
        text = Payload().encode(value)
        assert "sk-ant" not in text and "s3cret" not in text, text
        json.loads(text)


def test_enormous_values_are_bounded_quickly(configure):
    import time

    values = [
        {f"k{i}": "word " * 20_000 for i in range(500)},
        [[f"item {i} {j}" for j in range(1000)] for i in range(300)],
        "x" * 20_000_000,
    ]
    for value in values:
        started = time.perf_counter()
        text = Payload().encode(value)
        assert time.perf_counter() - started < 2.0  # generous: a shared CI machine
        assert len(text.encode()) <= 64 * 1024
        json.loads(text)


def test_small_values_are_not_marked_truncated(recorded):
    payload = Payload()
    span = recorded.tracer().start_span("s")
    payload.set(span, "a", {"q": "hello"})
    payload.apply_markers(span)
    span.end()
    assert recorded.one("s").attributes == {"a": '{"q":"hello"}'}


# --- Capture on / off -----------------------------------------------------------------------------


def test_capture_is_on_by_default(configure):
    assert capture_enabled()
    assert Payload().encode({"a": 1}) == '{"a":1}'


@pytest.mark.parametrize("raw", ["false", "NO_CONTENT", "no_content", "0"])
def test_capture_off_by_environment_variable(raw):
    _config.configure(_config.Settings.resolve(environ={"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": raw}))
    try:
        assert not capture_enabled()
        assert Payload().encode("anything") is None
        # Values that are not content (document ids, scores) are still recorded.
        assert Payload().encode({"id": "d1"}, content=False) == '{"id":"d1"}'
    finally:
        _config.reset()


def test_capture_off_by_setting(configure):
    configure(capture_content=False)
    payload = Payload()
    assert payload.encode({"a": 1}) is None
    assert not payload.capture


# --- Randomised: any structure, any limit, any place for a secret -------------------------------------


def _random_value(rng, secrets: list[str], depth: int = 0):
    kind = rng.randrange(7 if depth < 4 else 3)
    if kind == 0:
        return rng.choice([None, True, 3, -1.5, 10**20, "", "é€😀"])
    if kind in (1, 2):
        words = [rng.choice(["alpha", "beta", "x=1", "key:", "note", "http://h/p", "\n", "\"quoted\"", "\\"]) for _ in range(rng.randrange(12))]
        if rng.random() < 0.5:
            words.insert(rng.randrange(len(words) + 1), rng.choice(secrets))
        return rng.choice([" ", "_", ",", "\t", "/"]).join(words)
    if kind in (3, 4):
        return [_random_value(rng, secrets, depth + 1) for _ in range(rng.randrange(6))]
    if kind == 5:
        return {rng.choice(["a", "b", "password", "note", "id", "text"]) + str(i): _random_value(rng, secrets, depth + 1) for i in range(rng.randrange(5))}
    return (rng.choice(secrets), _random_value(rng, secrets, depth + 1))


def test_random_values_always_encode_to_valid_bounded_json_without_secrets(configure):
    import random

    rng = random.Random(20261130)
    secrets = [SECRETS[k] for k in ("openai", "anthropic", "github", "stripe", "huggingface", "jwt", "slack")]
    secrets += ["password=hunter2hunter2", "Authorization: Bearer zzTOPzzTOPzzTOP", "postgres://u:pw0rdpw0rd@db/x"]
    tells = ["1B2c3D4e5F6g7H8", "Zx9Yw8Vu7Ts6", "16C7e42F292c", "4eC39HqLyjWD", "abcdefghijklmnop", "dozjgNryP4J3", "AbCdEfGhIjKlMnOp",
             "hunter2hunter2", "zzTOPzzTOPzzTOP", "pw0rdpw0rd"]  # fmt: skip
    for _ in range(300):
        limit = rng.choice([16, 40, 100, 300, 2000, 64 * 1024])
        configure(max_value_bytes=limit)
        value = _random_value(rng, secrets)
        text = Payload().encode(value)
        assert len(text.encode()) <= limit, (limit, text)
        json.loads(text)
        for tell in tells:
            assert tell not in text, (tell, text)


@pytest.mark.parametrize("text,kept", [
    ("Your temporary password is Nw-7Tq4-kR2x.", False),
    ('The new password is "abc123XYZ", please change it.', False),
    ("Your password is incorrect.", True),  # prose about a password, no password
    ("The password was reset on 2026-11-02.", True),
    ("The password is required for login.", True),
])
def test_a_password_told_in_prose_is_redacted_and_prose_about_one_is_not(text, kept):
    from agentotel.content import redact_text

    redacted, count = redact_text(text)
    assert (redacted == text and count == 0) if kept else ("[REDACTED]" in redacted and count == 1), redacted


def test_when_a_password_was_set_or_changed_is_a_date_not_a_secret():
    from agentotel.content import redact

    value, count = redact({"last_password_reset": "2026-11-02", "password_changed_at": "2026-11-02T08:12:00Z",
                           "temporary_password": "Nw-7Tq4-kR2x", "password_reset_token": "abcdef123456"})
    assert value["last_password_reset"] == "2026-11-02" and value["password_changed_at"] == "2026-11-02T08:12:00Z"
    assert value["temporary_password"] == "[REDACTED]" and value["password_reset_token"] == "[REDACTED]" and count == 2
