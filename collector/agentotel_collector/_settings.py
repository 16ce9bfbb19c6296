"""Collector settings: a command-line option wins, then AGENTOTEL_COLLECTOR_* variables, then the default.

The only module of the collector that reads environment variables.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from agentotel._config import DEFAULT_DIRECTORY, ConfigError
from agentotel._config import parse_size as _size  # one size syntax (64MiB) for agentotel and its collector
from agentotel.store.otlp import MAX_REQUEST_BYTES, MAX_SPANS_PER_REQUEST  # `agentotel import` keeps the same limits

ENV_PREFIX = "AGENTOTEL_COLLECTOR_"
MiB = 1024 * 1024


def _address(name: str, raw: str) -> tuple[str, int] | None:
    """HOST:PORT (IPv6 as [::1]:PORT); "off" or "" disables the listener."""
    raw = raw.strip()
    if raw.lower() in {"", "off", "none", "false", "0"}:
        return None
    host, sep, port = raw.rpartition(":")
    if not sep:
        raise ConfigError(f"{name}={raw!r}: expected HOST:PORT (or off)")
    host = host.strip("[]") or "0.0.0.0"
    try:
        number = int(port)
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: port must be a number") from None
    if not 0 <= number <= 65535:
        raise ConfigError(f"{name}={raw!r}: port out of range")
    return host, number


def _count(name: str, raw: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected a whole number") from None
    if value <= 0:
        raise ConfigError(f"{name}={raw!r}: must be positive")
    return value


def _seconds(name: str, raw: str) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected seconds") from None
    if value <= 0:
        raise ConfigError(f"{name}={raw!r}: must be positive")
    return value


def _path(_name: str, raw: str) -> Path:
    return Path(raw)


def _text(_name: str, raw: str) -> str:
    return raw


def _opt(parse: Callable[[str, str], Any], default: Any, help: str, *, env: tuple[str, ...] = ()) -> Any:
    return field(default=default, metadata={"parse": parse, "help": help, "env": env})


@dataclass(frozen=True)
class Settings:
    """Every collector setting; each field is the option --field-name and the variable AGENTOTEL_COLLECTOR_FIELD_NAME."""

    dir: Path = _opt(_path, Path(DEFAULT_DIRECTORY), "store directory (also $AGENTOTEL_DIR)", env=("AGENTOTEL_DIR",))
    http: tuple[str, int] | None = _opt(_address, ("127.0.0.1", 4318), "OTLP/HTTP listen address, or off")
    grpc: tuple[str, int] | None = _opt(_address, ("127.0.0.1", 4317), "OTLP/gRPC listen address, or off")
    token: str | None = _opt(_text, None, "bearer token senders must present (prefer --token-file)")
    token_file: Path | None = _opt(_path, None, "file of accepted bearer tokens, one a line")
    tls_cert: Path | None = _opt(_path, None, "TLS certificate chain (PEM); enables TLS on both listeners")
    tls_key: Path | None = _opt(_path, None, "TLS private key (PEM)")
    max_request_bytes: int = _opt(_size, 32 * MiB, "largest request body as sent (compressed)")
    max_decompressed_bytes: int = _opt(_size, MAX_REQUEST_BYTES, "largest request body after decompression")
    max_spans_per_request: int = _opt(_count, MAX_SPANS_PER_REQUEST, "most spans accepted in one request")
    max_concurrent_requests: int = _opt(_count, 2, "requests decoded at once; others wait, then get 503")
    # An idle or slow connection costs a few KB on the event loop (no thread): room for many peers.
    max_connections: int = _opt(_count, 4096, "open HTTP connections; more are refused")
    max_connections_per_address: int = _opt(_count, 64, "open HTTP connections from one client address; more are refused")
    header_timeout_s: float = _opt(_seconds, 10.0, "longest an HTTP request's line and headers may take to arrive")
    body_timeout_s: float = _opt(_seconds, 10.0, "time an HTTP body gets before --min-body-rate applies")
    min_body_rate: int = _opt(_size, 64 * 1024, "slowest accepted HTTP body upload, bytes per second (after --body-timeout)")
    # Room for several realistic requests (512 agent spans carrying whole conversations convert to
    # ~12 MB each): with less, a fold's burst on the disk turns into 503s and one-second client waits.
    queue_bytes: int = _opt(_size, 256 * MiB, "converted spans waiting for the store; beyond it 503")
    write_timeout_s: float = _opt(_seconds, 10.0, "longest wait for the store before answering 503")
    admission_timeout_s: float = _opt(_seconds, 2.0, "longest wait for a decoding slot before answering 503")
    retry_after_s: int = _opt(_count, 1, "Retry-After seconds sent with 503 / UNAVAILABLE")
    wal_max_bytes: int | None = _opt(_size, None, "fold the WAL into Parquet at this size ($AGENTOTEL_WAL_MAX_BYTES)")
    wal_max_age_s: float | None = _opt(_seconds, None, "fold the WAL into Parquet at this age ($AGENTOTEL_WAL_MAX_AGE_S)")
    writer_id: str | None = _opt(_text, None, "name of this instance's WAL file (default: unique per process)")
    # -- processes (issue 20) --
    workers: int = _opt(_count, 1, "processes sharing the listening ports (Linux); each writes its own WAL files")
    # Object storage (--dir s3://bucket/prefix, gs://, az://): the WAL stays on local disk.
    wal_dir: Path | None = _opt(_path, None, "local folder for the WAL when --dir is an object-storage URI "
                                "(also $AGENTOTEL_WAL_DIR; default under ~/.cache/agentotel/stores/)", env=("AGENTOTEL_WAL_DIR",))

    @classmethod
    def resolve(cls, environ: Mapping[str, str] | None = None, **given: Any) -> "Settings":
        """Settings from keyword arguments (None means not given), then the environment, then defaults."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            value = given.pop(f.name, None)
            if value is not None:
                values[f.name] = f.metadata["parse"](f"--{f.name.replace('_', '-')}", value) if isinstance(value, str) else value
                continue
            for env in (env_name(f.name), *f.metadata["env"]):
                raw = environ.get(env)
                if raw is not None and raw.strip() != "":
                    values[f.name] = f.metadata["parse"](env, raw)
                    break
        if given:
            raise TypeError(f"unknown setting(s): {', '.join(sorted(given))}")
        settings = cls(**values)
        if (settings.tls_cert is None) != (settings.tls_key is None):
            raise ConfigError("TLS needs both --tls-cert and --tls-key")
        if settings.workers > 1 and any(address is not None and address[1] == 0 for address in (settings.http, settings.grpc)):
            raise ConfigError("--workers needs fixed ports: port 0 would give each worker a port of its own")
        return settings

    def tokens(self) -> tuple[bytes, ...]:
        """Accepted bearer tokens (empty: no authentication); the token file is read now."""
        tokens = [self.token] if self.token else []
        if self.token_file is not None:
            text = self.token_file.read_text(encoding="utf-8")
            tokens += [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
            if not tokens:
                raise ConfigError(f"token file {self.token_file} holds no token")
        return tuple(t.encode("utf-8") for t in tokens)


def env_name(field_name: str) -> str:
    return ENV_PREFIX + field_name.upper()
