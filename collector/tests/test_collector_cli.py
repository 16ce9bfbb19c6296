"""The command line, its environment variables, TLS, and the shipped Collector pipelines."""

from __future__ import annotations

import dataclasses
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
import requests
import yaml
from collector_support import COLLECTOR_ROOT, Collector, CollectorProcess, free_port, make_spans, stored_table, subprocess_env
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from agentotel._config import ConfigError
from agentotel_collector import Settings


def test_defaults_are_loopback_and_the_shared_store_default():
    settings = Settings.resolve(environ={})

    assert settings.http == ("127.0.0.1", 4318)
    assert settings.grpc == ("127.0.0.1", 4317)
    assert settings.dir == Path("agentotel-traces")
    assert settings.max_decompressed_bytes == 64 * 1024 * 1024


def test_options_win_over_environment_variables_which_win_over_defaults():
    environ = {
        "AGENTOTEL_COLLECTOR_HTTP": "0.0.0.0:14318",
        "AGENTOTEL_COLLECTOR_GRPC": "off",
        "AGENTOTEL_COLLECTOR_MAX_DECOMPRESSED_BYTES": "8MiB",
        "AGENTOTEL_COLLECTOR_WAL_MAX_AGE_S": "5",
        "AGENTOTEL_DIR": "/from/agentotel/dir",
    }

    settings = Settings.resolve(environ=environ, http="[::1]:9999")

    assert settings.http == ("::1", 9999)
    assert settings.grpc is None
    assert settings.max_decompressed_bytes == 8 * 1024 * 1024
    assert settings.wal_max_age_s == 5.0
    assert settings.dir == Path("/from/agentotel/dir")
    assert Settings.resolve(environ={**environ, "AGENTOTEL_COLLECTOR_DIR": "/mine"}).dir == Path("/mine")


@pytest.mark.parametrize(
    "options, phrase",
    [
        ({"http": "localhost"}, "expected HOST:PORT"),
        ({"grpc": "127.0.0.1:99999"}, "port out of range"),
        ({"max_request_bytes": "lots"}, "expected a size"),
        ({"tls_cert": "cert.pem"}, "TLS needs both"),
    ],
)
def test_bad_settings_say_which_and_why(options, phrase):
    with pytest.raises(ConfigError, match=phrase):
        Settings.resolve(environ={}, **options)


def run_cli(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agentotel_collector", *args],
        env={**subprocess_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_help_names_every_option_with_its_environment_variable():
    result = run_cli("--help")

    assert result.returncode == 0
    for option, variable in [("--dir", "AGENTOTEL_COLLECTOR_DIR"), ("--http", "AGENTOTEL_COLLECTOR_HTTP"),
                             ("--grpc", "AGENTOTEL_COLLECTOR_GRPC"), ("--token-file", "AGENTOTEL_COLLECTOR_TOKEN_FILE"),
                             ("--tls-cert", "AGENTOTEL_COLLECTOR_TLS_CERT"), ("--tls-key", "AGENTOTEL_COLLECTOR_TLS_KEY"),
                             ("--max-decompressed-bytes", "AGENTOTEL_COLLECTOR_MAX_DECOMPRESSED_BYTES"),
                             ("--wal-max-bytes", "AGENTOTEL_COLLECTOR_WAL_MAX_BYTES")]:
        assert option in result.stdout and variable in result.stdout
    assert "Example:" in result.stdout


def test_a_bad_setting_exits_2_with_a_message_and_no_traceback():
    result = run_cli("--http", "nonsense", env={"AGENTOTEL_COLLECTOR_GRPC": "off"})

    assert result.returncode == 2
    assert "expected HOST:PORT" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_command_sets_a_1_ms_switch_interval_and_an_embedding_program_keeps_its_own(tmp_path):
    # The command's process takes the GIL back from decoding threads sooner (the event loop and the WAL
    # writer wait for it after every system call); a program embedding Collector keeps its own interval.
    process = CollectorProcess(tmp_path / "cli", free_port(), "--log-level", "INFO").start()
    assert process.terminate() == 0
    started = process.process.stderr.read().decode()
    assert "thread switch interval 1 ms" in started and "HTTP/1.1 by h11" in started, started
    before = sys.getswitchinterval()
    with Collector(dir=tmp_path / "embedded", http=("127.0.0.1", 0), grpc="off"):
        assert sys.getswitchinterval() == before


_ALLOCATOR_PROBE = """
import os, sys
import agentotel_collector
loaded_with_the_package = "pyarrow" in sys.modules
import agentotel_collector.__main__
print(loaded_with_the_package, os.environ.get("MIMALLOC_PURGE_DELAY"), agentotel_collector.Collector.__name__)
"""


@pytest.mark.parametrize(("given", "expected"), [(None, "-1"), ("50", "50")])
def test_the_command_keeps_arrows_freed_pages_set_before_pyarrow_loads(given, expected):
    # Arrow's allocator reads its options once, as pyarrow loads: `python -m agentotel_collector` imports the
    # package first, so the package must not load pyarrow itself, and __main__ sets them before it does.
    # (Purged pages came back as 2 MB huge pages zeroed by the kernel: 9-10 % of the collector's CPU.)
    env = {k: v for k, v in subprocess_env().items() if k != "MIMALLOC_PURGE_DELAY"}
    if given is not None:
        env["MIMALLOC_PURGE_DELAY"] = given  # the operator's own choice wins
    result = subprocess.run([sys.executable, "-c", _ALLOCATOR_PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["False", expected, "Collector"], result.stderr


def test_console_script_is_declared():
    text = (COLLECTOR_ROOT / "pyproject.toml").read_text()
    assert 'agentotel-collector = "agentotel_collector.__main__:main"' in text


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )
    return cert, key


def test_tls_on_both_protocols_with_the_real_exporters(tmp_path, certificate, monkeypatch):
    cert, key = certificate
    # requests lets these variables override the exporter's own CA file; this test trusts only its certificate.
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    spans = make_spans(2)
    with Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc=("127.0.0.1", 0), tls_cert=cert, tls_key=key) as running:
        https = HttpExporter(endpoint=f"https://localhost:{running.http_address[1]}/v1/traces", certificate_file=str(cert),
                             compression=Compression.Gzip, timeout=10)
        assert https.export(spans[:7]) is SpanExportResult.SUCCESS
        credentials = grpc.ssl_channel_credentials(cert.read_bytes())
        secure = GrpcExporter(endpoint=f"localhost:{running.grpc_address[1]}", credentials=credentials, timeout=10)
        assert secure.export(spans[7:]) is SpanExportResult.SUCCESS
        # Plain HTTP to the TLS port is refused, and the server keeps serving.
        with pytest.raises(requests.ConnectionError):
            requests.post(f"http://127.0.0.1:{running.http_address[1]}/v1/traces", data=b"", timeout=5)
        assert requests.get(f"https://localhost:{running.http_address[1]}/health", verify=str(cert), timeout=5).ok
    assert len(stored_table(tmp_path / "store")) == len(spans)


def _otelcol(name: str) -> dict:
    return yaml.safe_load((COLLECTOR_ROOT / "otelcol" / name).read_text())


@pytest.mark.parametrize("name", ["forward.yaml", "load-balanced.yaml"])
def test_shipped_pipelines_reference_only_defined_components(name):
    config = _otelcol(name)
    traces = config["service"]["pipelines"]["traces"]

    assert traces["processors"][0] == "memory_limiter"  # first, as the Collector recommends
    for kind in ("receivers", "processors", "exporters"):
        for component in traces[kind]:
            assert component in config[kind], f"{name}: {component} is not defined under {kind}"
    for extension in config["service"].get("extensions", []):
        assert extension in config["extensions"]


def test_forward_pipeline_sends_gzip_protobuf_with_retries_and_a_queue():
    exporter = _otelcol("forward.yaml")["exporters"]["otlp_http/agentotel"]

    assert (exporter["encoding"], exporter["compression"]) == ("proto", "gzip")
    assert exporter["retry_on_failure"]["enabled"] and exporter["sending_queue"]["enabled"]
    assert exporter["headers"]["Authorization"].startswith("Bearer ")


def test_load_balanced_pipeline_routes_by_trace_id_over_grpc():
    exporter = _otelcol("load-balanced.yaml")["exporters"]["load_balancing/agentotel"]

    assert exporter["routing_key"] == "traceID"
    assert exporter["protocol"]["otlp"]["compression"] == "gzip"
    assert all(host.endswith(":4317") for host in exporter["resolver"]["static"]["hostnames"])


def test_the_readme_documents_every_option():
    readme = (COLLECTOR_ROOT / "README.md").read_text()

    for field in dataclasses.fields(Settings):
        assert f"`--{field.name.replace('_', '-')}" in readme, f"--{field.name} is missing from collector/README.md"


def test_the_forward_pipeline_never_points_back_at_its_own_receiver():
    config = _otelcol("forward.yaml")
    endpoint = config["exporters"]["otlp_http/agentotel"]["endpoint"]
    own_ports = {config["receivers"]["otlp"]["protocols"][p]["endpoint"].rsplit(":", 1)[1] for p in ("grpc", "http")}
    assert ":-" not in endpoint, "no default endpoint: any default on this host is this Collector's own receiver"
    assert not any(endpoint.rstrip("/").endswith(f":{port}") for port in own_ports)


def test_both_pipelines_keep_their_queue_on_disk_and_name_their_minimum_collector():
    for name, exporter_id, version in (("forward.yaml", "otlp_http/agentotel", "v0.144.0"),
                                       ("load-balanced.yaml", "load_balancing/agentotel", "v0.153.0")):
        config = _otelcol(name)
        queue = config["exporters"][exporter_id]["sending_queue"]
        assert queue["enabled"] and queue["storage"] in config["extensions"], name
        assert queue["storage"] in config["service"]["extensions"], name
        assert version in (COLLECTOR_ROOT / "otelcol" / name).read_text(), name


def test_tls_handshakes_count_against_the_connection_limits_and_the_header_deadline(tmp_path, certificate):
    """A connection still in its TLS handshake holds a place under --max-connections-per-address and is cut
    off at --header-timeout-s (asyncio alone would give it 60 s, uncounted); a real client is then served."""
    cert, key = certificate
    with Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off", tls_cert=cert, tls_key=key,
                   max_connections_per_address=4, header_timeout_s=1.0) as running:
        port = running.http_address[1]
        silent = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(4)]  # no ClientHello
        time.sleep(0.3)
        extra = socket.create_connection(("127.0.0.1", port), timeout=5)
        assert extra.recv(1) == b""  # the fifth from this address is closed at once
        extra.close()
        started = time.monotonic()
        for sock in silent:
            assert sock.recv(1) == b""  # closed at the header deadline, not after asyncio's 60 s
            sock.close()
        assert time.monotonic() - started < 4.5
        assert requests.get(f"https://localhost:{port}/health", verify=str(cert), timeout=5).ok
        samples = running.metrics.render().decode()
        assert 'agentotel_collector_requests_rejected_total{protocol="http",reason="too_many_connections"} 1' in samples
        assert 'agentotel_collector_requests_rejected_total{protocol="http",reason="slow_sender"} 4' in samples
