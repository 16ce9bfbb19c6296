"""`agentotel import`: archived OTLP files (JSON lines, protobuf; plain, gzip, zstd) become the same runs."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
import zstandard

import agentotel
from agentotel.cli import main
from test_dialects import IN, assert_weather_steps, glob_sum, only_run, produce


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """OTLP files of one OpenInference-instrumented LangChain agent run, as an archive would keep them."""
    folder = tmp_path_factory.mktemp("archive")
    produce(folder / "unused", instrumentations=["openinference-langchain"], flow="langchain", root_span="weather-job",
            otlp_files=str(folder / "traces"))
    return folder


def _import(store: Path, *paths: Path) -> str:
    out = io.StringIO()
    assert main(["import", *map(str, paths), "--dir", str(store)], stdout=out, stderr=io.StringIO()) == 0
    return out.getvalue()


@pytest.mark.parametrize("compression", ["", ".gz", ".zst"])
def test_otlp_json_lines_import_as_the_run_the_collector_would_store(archive: Path, tmp_path: Path, compression: str) -> None:
    lines = (archive / "traces.jsonl").read_bytes()
    path = tmp_path / f"traces.jsonl{compression}"
    path.write_bytes({"": lambda b: b, ".gz": gzip.compress, ".zst": zstandard.ZstdCompressor().compress}[compression](lines))
    printed = _import(tmp_path / "store", path)
    assert "Imported 4 span(s) from 1 file(s)" in printed  # the root span and three steps
    traces = agentotel.open(tmp_path / "store")
    assert_weather_steps(traces, only_run(traces))
    assert glob_sum(tmp_path / "store", "input_tokens") == IN


def test_otlp_protobuf_files_import_too(archive: Path, tmp_path: Path) -> None:
    files = sorted(archive.glob("traces-*.pb"))
    _import(tmp_path / "store", *files)
    traces = agentotel.open(tmp_path / "store")
    assert_weather_steps(traces, only_run(traces))


def test_a_file_that_is_not_otlp_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text('{"resourceSpans": "nope"}\n')
    err = io.StringIO()
    assert main(["import", str(path), "--dir", str(tmp_path / "store")], stdout=io.StringIO(), stderr=err) == 1
    assert "notes.jsonl" in err.getvalue() and "resourceSpans must be an array" in err.getvalue()
