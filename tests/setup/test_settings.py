"""Settings from the environment: each accepted spelling, and a clear error for anything else."""

from __future__ import annotations

import pytest

from agentotel._config import ConfigError, Settings


@pytest.mark.parametrize("raw, expected", [
    ("true", True), ("1", True), ("SPAN_ONLY", True), ("span_and_event", True), ("event_only", True),
    ("false", False), ("0", False), ("NO_CONTENT", False), ("off", False), (" No ", False),
])
def test_the_capture_switch_takes_true_false_and_the_otel_genai_modes(monkeypatch, raw, expected):
    monkeypatch.setenv("AGENTOTEL_CAPTURE_CONTENT", raw)
    assert Settings.resolve().capture_content is expected


@pytest.mark.parametrize("variable", ["AGENTOTEL_CAPTURE_CONTENT", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"])
def test_a_misspelt_capture_switch_is_an_error_not_capture_on(monkeypatch, variable):
    monkeypatch.delenv("AGENTOTEL_CAPTURE_CONTENT", raising=False)
    monkeypatch.setenv(variable, "disabled")
    with pytest.raises(ConfigError, match=f"{variable}='disabled': expected true or false"):
        Settings.resolve()


@pytest.mark.parametrize("raw, expected", [
    ("65536", 65536), ("64KiB", 64 * 1024), ("64 MiB", 64 << 20), ("64M", 64 << 20), ("1g", 1 << 30), ("1.5k", 1536),
])
def test_byte_sizes_take_units(monkeypatch, raw, expected):
    monkeypatch.setenv("AGENTOTEL_WAL_MAX_BYTES", raw)
    monkeypatch.setenv("AGENTOTEL_MAX_VALUE_BYTES", raw)
    settings = Settings.resolve()
    assert settings.wal_max_bytes == expected and settings.max_value_bytes == expected


@pytest.mark.parametrize("raw", ["lots", "-5", "0", "64 parsecs"])
def test_a_bad_size_names_the_variable(monkeypatch, raw):
    monkeypatch.setenv("AGENTOTEL_WAL_MAX_BYTES", raw)
    with pytest.raises(ConfigError, match="AGENTOTEL_WAL_MAX_BYTES="):
        Settings.resolve()
