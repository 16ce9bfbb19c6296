"""Patching behaves: one layer whatever the repetition, fully removable, suppressible, never nested."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import anthropic
import httpx2
import openai
from openai.resources.chat.completions.completions import AsyncCompletions, Completions
from opentelemetry.instrumentation.utils import suppress_instrumentation

from agentotel.providers import _core, instrument_providers, uninstrument_providers
from agentotel.providers import openai as openai_adapter
from tests.providers.conftest import cassette

ROOT = Path(__file__).resolve().parents[2]
USER = [{"role": "user", "content": "Say this is a test"}]
COMPLETION = {
    "id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}  # fmt: skip
EMBEDDING = {"object": "list", "model": "text-embedding-3-small", "data": [{"object": "embedding", "index": 0, "embedding": [0.1]}],
             "usage": {"prompt_tokens": 1, "total_tokens": 1}}  # fmt: skip


def test_instrument_and_uninstrument_100_times_leave_one_layer(telemetry):
    uninstrument_providers()
    original = Completions.__dict__["create"]
    assert not isinstance(original, _core._Patched)
    for _ in range(100):
        instrument_providers()
        instrument_providers()
        uninstrument_providers()
    assert Completions.__dict__["create"] is original
    instrument_providers()
    patched = Completions.__dict__["create"]
    assert isinstance(patched, _core._Patched) and patched.__wrapped__ is original
    assert isinstance(AsyncCompletions.__dict__["create"], _core._Patched)
    with cassette("openai/test_chat_completion_with_content"):
        openai.OpenAI(api_key="k").chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert len(telemetry.model_spans()) == 1


def test_uninstrument_removes_every_patch(telemetry):
    patched = _core.patched_methods()
    assert "openai.resources.chat.completions.completions.Completions.create" in patched
    assert "anthropic.resources.beta.messages.messages.AsyncMessages.stream" in patched
    targets = list(_core.iter_patches())
    uninstrument_providers()
    assert _core.patched_methods() == []
    assert all(not isinstance(cls.__dict__[name], _core._Patched) for cls, name, _ in targets)
    with cassette("openai/test_chat_completion_with_content"):
        openai.OpenAI(api_key="k").chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert telemetry.model_spans() == []


def test_suppress_instrumentation_is_honoured(telemetry):
    with cassette("openai/test_chat_completion_with_content"), suppress_instrumentation():
        openai.OpenAI(api_key="k").chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert telemetry.model_spans() == []


def test_the_legacy_suppression_key_is_honoured_too(telemetry):
    from opentelemetry import context

    token = context.attach(context.set_value("suppress_instrumentation", True))  # what older instrumentations set
    try:
        with cassette("openai/test_chat_completion_with_content"):
            openai.OpenAI(api_key="k").chat.completions.create(model="gpt-4o-mini", messages=USER)
    finally:
        context.detach(token)
    assert telemetry.model_spans() == []
    with cassette("openai/test_chat_completion_with_content"):
        openai.OpenAI(api_key="k").chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert len(telemetry.model_spans()) == 1


def test_a_call_made_inside_one_of_ours_gets_no_second_span(telemetry):
    inner = openai.OpenAI(api_key="k", http_client=httpx2.Client(transport=httpx2.MockTransport(
        lambda request: httpx2.Response(200, json=EMBEDDING))))  # fmt: skip

    def handler(request: httpx2.Request) -> httpx2.Response:
        inner.embeddings.create(model="text-embedding-3-small", input="nested")  # runs inside our chat span
        return httpx2.Response(200, json=COMPLETION)

    outer = openai.OpenAI(api_key="k", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    outer.chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert [s.name for s in telemetry.model_spans()] == ["chat gpt-4o-mini"]


def test_missing_sdk_method_is_skipped_with_a_debug_log(telemetry, caplog, monkeypatch):
    uninstrument_providers()
    bogus = _core.Patch(openai_adapter._CHAT, "Completions.no_such_method", openai_adapter._chat_request, openai_adapter._chat_response)
    monkeypatch.setattr(openai_adapter, "PATCHES", [bogus, *openai_adapter.PATCHES])
    caplog.set_level(logging.DEBUG, logger="agentotel.providers")
    instrument_providers()
    assert "no_such_method" in caplog.text
    assert isinstance(Completions.__dict__["create"], _core._Patched)


def test_internal_failure_in_an_adapter_never_reaches_the_user(telemetry, monkeypatch):
    monkeypatch.setenv("AGENTOTEL_RAISE_INTERNAL_ERRORS", "0")

    def broken(result):
        raise ValueError("adapter bug")

    uninstrument_providers()
    broken_patches = [
        _core.Patch(p.module, p.target, p.request, broken, p.accumulator, p.kind) for p in openai_adapter.PATCHES
    ]
    monkeypatch.setattr(openai_adapter, "PATCHES", broken_patches)
    instrument_providers()
    with cassette("openai/test_chat_completion_with_content"):
        result = openai.OpenAI(api_key="k").chat.completions.create(model="gpt-4o-mini", messages=USER)
    assert result.choices[0].message.content
    assert len(telemetry.model_spans()) == 1  # the span still ended


def test_patches_apply_when_the_sdk_is_imported_later(tmp_path):
    script = textwrap.dedent(
        """
        import sys
        from agentotel.providers import instrument_providers, uninstrument_providers
        instrument_providers()
        assert "openai" not in sys.modules
        import openai
        from openai.resources.chat.completions.completions import Completions
        assert type(Completions.__dict__["create"]).__name__ == "_Patched"
        uninstrument_providers()
        assert type(Completions.__dict__["create"]).__name__ == "function"
        instrument_providers()
        assert type(Completions.__dict__["create"]).__name__ == "_Patched"
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert out.stdout.strip() == "ok", out.stderr


def test_opentelemetry_instrument_loads_our_entry_point(tmp_path):
    """`opentelemetry-instrument python agent.py` finds the `agentotel` instrumentor and patches the SDKs."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'agentotel = "agentotel._instrumentor:AgentotelInstrumentor"' in pyproject
    # Make the entry point discoverable without installing the package: a minimal dist-info.
    dist = tmp_path / "site" / "agentotel-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: agentotel\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[opentelemetry_instrumentor]\nagentotel = agentotel._instrumentor:AgentotelInstrumentor\n")
    agent = tmp_path / "agent.py"
    agent.write_text(
        "from anthropic.resources.messages.messages import Messages\n"
        "f, seen = Messages.__dict__['create'], []\n"
        "while f is not None and len(seen) < 10:\n"
        "    seen.append(type(f).__name__)\n"
        "    f = getattr(f, '__wrapped__', None)\n"
        "print(','.join(seen))\n"
    )
    # Every other installed instrumentation (openai's three, langchain's, google's) would load too, ~9 s of CPU for
    # nothing this test looks at: only the ones that wrap the method it reads stay on.
    others = {ep.name for ep in entry_points(group="opentelemetry_instrumentor")} - {"agentotel", "anthropic"}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)]),
           "AGENTOTEL_DIR": str(tmp_path / "traces"), "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none",
           "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": ",".join(sorted(others))}  # fmt: skip
    out = subprocess.run(["opentelemetry-instrument", sys.executable, str(agent)], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=120)  # fmt: skip
    # Other instrumentations installed beside agentotel (the dev extra has OpenLLMetry's and OpenInference's
    # anthropic ones) load too and may wrap the same method outside ours: ours must be in the chain.
    assert "_Patched" in out.stdout.strip().splitlines()[-1].split(","), out.stdout[-500:] + out.stderr[-2000:]


def test_instrumentor_class_round_trip(telemetry):
    from agentotel import _setup
    from agentotel._instrumentor import AgentotelInstrumentor

    uninstrument_providers()
    instrumentor = AgentotelInstrumentor()
    instrumentor.instrument(tracer_provider=telemetry.tracer_provider)
    try:
        assert isinstance(anthropic.resources.messages.messages.Messages.__dict__["create"], _core._Patched)
    finally:
        instrumentor.uninstrument()
        _setup.shutdown()
    assert not isinstance(anthropic.resources.messages.messages.Messages.__dict__["create"], _core._Patched)
