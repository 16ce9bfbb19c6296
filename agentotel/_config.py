"""Settings: a keyword argument wins, then an AGENTOTEL_* / OTEL_* environment variable, then the default.

This is the only module that reads agentotel's environment variables. `instrument()` resolves one
`Settings` and installs it with `configure()`; code that runs without `instrument()` (a `@tool` under
someone else's tracer provider, say) gets `current()`, resolved from the environment alone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

DEFAULT_DIRECTORY = "agentotel-traces"

# OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT values that turn capture off; the GenAI
# instrumentations also accept SPAN_ONLY / EVENT_ONLY / SPAN_AND_EVENT, which all mean "on" for us.
_CAPTURE_OFF = {"false", "0", "no", "off", "no_content", "none"}
_TRUE = {"true", "1", "yes", "on"}


class ConfigError(ValueError):
    """A setting has a value agentotel cannot use; the message names the setting and the value."""


def _bool(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in {"false", "0", "no", "off"}:
        return False
    raise ConfigError(f"{name}={raw!r}: expected true or false")


_SIZE_UNITS = (("gib", 1 << 30), ("mib", 1 << 20), ("kib", 1 << 10), ("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10),
               ("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10), ("b", 1))


def parse_size(name: str, raw: str) -> int:
    """A byte count from a setting: 1048576, 64MiB, 64M, 512KiB, 1G (units are powers of 1024)."""
    text = raw.strip().lower().replace(" ", "")
    scale = 1
    for suffix, factor in _SIZE_UNITS:
        if text.endswith(suffix):
            text, scale = text[: -len(suffix)], factor
            break
    try:
        value = int(float(text) * scale)
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected a size such as 65536 or 64MiB") from None
    if value <= 0:
        raise ConfigError(f"{name}={raw!r}: must be positive")
    return value


def _float(name: str, raw: str) -> float:
    try:
        return float(raw.strip())
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected a number") from None


def _list(sep: str) -> Callable[[str, str], tuple[str, ...]]:
    def parse(_name: str, raw: str) -> tuple[str, ...]:
        return tuple(item.strip() for item in raw.split(sep) if item.strip())

    return parse


# OTel's GenAI capture modes (opentelemetry-util-genai) besides true/false: any of them records content.
_CAPTURE_ON = _TRUE | {"span_only", "event_only", "span_and_event"}


def _capture(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in _CAPTURE_ON:
        return True
    if value in _CAPTURE_OFF:
        return False
    # A misspelt "off" must not leave capture on: say so instead of guessing.
    raise ConfigError(f"{name}={raw!r}: expected true or false (or NO_CONTENT, SPAN_ONLY, EVENT_ONLY, SPAN_AND_EVENT)")


def _exporters(name: str, raw: str) -> tuple[str, ...]:
    names = tuple(item.strip().lower() for item in raw.split(",") if item.strip())
    unknown = [n for n in names if n not in {"parquet", "otlp", "console", "none"}]
    if unknown:
        raise ConfigError(f"{name}={raw!r}: unknown exporter {unknown[0]!r} (use parquet, otlp, console or none)")
    return tuple(n for n in names if n != "none")


def _setting(env: str | tuple[str, ...], parse: Callable[[str, str], Any] | None, default: Any) -> Any:
    names = (env,) if isinstance(env, str) else env
    meta = {"env": names, "parse": parse or (lambda _n, raw: raw)}
    if callable(default):
        return field(default_factory=default, metadata=meta)
    return field(default=default, metadata=meta)


TRACES_EXPORTER_VARIABLE = "OTEL_TRACES_EXPORTER"


@contextlib.contextmanager
def parquet_only() -> Iterator[None]:
    """Within the block, `instrument()` exports to Parquet only, whatever the shell's OTEL_TRACES_EXPORTER
    says: for agentotel's own runs (the demo, a case replay) whose store is the point, not a user's
    OTLP endpoint."""
    previous = os.environ.get(TRACES_EXPORTER_VARIABLE)
    os.environ[TRACES_EXPORTER_VARIABLE] = "parquet"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(TRACES_EXPORTER_VARIABLE, None)
        else:
            os.environ[TRACES_EXPORTER_VARIABLE] = previous


@dataclass(frozen=True)
class Settings:
    """Every agentotel setting, resolved once. Field metadata names the environment variables read."""

    directory: Path = _setting("AGENTOTEL_DIR", lambda _n, raw: Path(raw), Path(DEFAULT_DIRECTORY))
    service_name: str | None = _setting("OTEL_SERVICE_NAME", None, None)
    traces_exporters: tuple[str, ...] = _setting(TRACES_EXPORTER_VARIABLE, _exporters, ("parquet",))
    # Which OTLP exporter `otlp` means; the exporter itself reads the other OTEL_EXPORTER_OTLP_* variables.
    otlp_protocol: str = _setting(
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"), lambda _n, raw: raw.strip().lower(), "http/protobuf"
    )
    capture_content: bool = _setting(
        ("AGENTOTEL_CAPTURE_CONTENT", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"), _capture, True
    )
    # Content policy: per-value and per-span payload limits keep a span far below OTLP's 4 MiB message.
    max_value_bytes: int = _setting("AGENTOTEL_MAX_VALUE_BYTES", parse_size, 64 * 1024)
    max_span_payload_bytes: int = _setting("AGENTOTEL_MAX_SPAN_PAYLOAD_BYTES", parse_size, 1024 * 1024)
    redact_patterns: tuple[str, ...] = _setting("AGENTOTEL_REDACT_PATTERNS", _list("\n"), ())
    redact_keys: tuple[str, ...] = _setting("AGENTOTEL_REDACT_KEYS", _list(","), ())
    # Runs and environment.
    propagate: bool = _setting("AGENTOTEL_PROPAGATE", _bool, False)
    # Inbound baggage is whatever the caller sent: any HTTP client could name the user or graft its spans onto
    # another run. Only a process behind trusted upstreams (which send it with propagate on) takes it.
    accept_baggage: bool = _setting("AGENTOTEL_ACCEPT_BAGGAGE", _bool, False)
    agent_version: str | None = _setting("AGENTOTEL_AGENT_VERSION", None, None)
    config_files: tuple[str, ...] = _setting("AGENTOTEL_CONFIG_FILES", _list(os.pathsep), ())
    credential_names: tuple[str, ...] = _setting("AGENTOTEL_CREDENTIAL_NAMES", _list(","), ())
    capture_environment: bool = _setting("AGENTOTEL_CAPTURE_ENVIRONMENT", _bool, True)
    # Cost: a JSON file of {model: {"input": usd_per_mtok, "output": usd_per_mtok, ...}} overriding the price library.
    prices_file: Path | None = _setting("AGENTOTEL_PRICES_FILE", lambda _n, raw: Path(raw), None)
    # Store: the WAL is folded into Parquet at this size or age, whichever comes first.
    wal_max_bytes: int = _setting("AGENTOTEL_WAL_MAX_BYTES", parse_size, 64 * 1024 * 1024)
    wal_max_age_s: float = _setting("AGENTOTEL_WAL_MAX_AGE_S", _float, 60.0)
    # A store in object storage (AGENTOTEL_DIR=s3://...) keeps its WAL on local disk: here, else a folder
    # derived from the URI under ~/.cache/agentotel/stores/ (store/fs.py).
    wal_dir: Path | None = _setting("AGENTOTEL_WAL_DIR", lambda _n, raw: Path(raw), None)

    @classmethod
    def resolve(cls, environ: dict[str, str] | None = None, **overrides: Any) -> "Settings":
        """Settings from keyword overrides (None means "not given"), then the environment, then defaults."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            given = overrides.pop(f.name, None)
            if given is not None:
                values[f.name] = Path(given) if f.name in {"directory", "prices_file"} else given
                continue
            for env in f.metadata["env"]:
                raw = environ.get(env)
                if raw is not None and raw.strip() != "":
                    values[f.name] = f.metadata["parse"](env, raw)
                    break
        if overrides:
            raise TypeError(f"unknown setting(s): {', '.join(sorted(overrides))}")
        return cls(**values)


_current: Settings | None = None


def configure(settings: Settings) -> None:
    """Install the settings `instrument()` resolved; later `current()` calls return them."""
    global _current
    _current = settings


def current() -> Settings:
    """The installed settings, or settings from the environment when `instrument()` was not called."""
    global _current
    if _current is None:
        _current = Settings.resolve()
    return _current


def reset() -> None:
    """Forget installed settings (tests, and `shutdown()`), so the environment is read again."""
    global _current
    _current = None
