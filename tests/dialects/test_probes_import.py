"""`agentotel import` of files as they are found: pretty-printed requests, and JSON lines with a torn line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import agentotel
from agentotel.cli import main
from agentotel.store import otlp


def request(first: int, count: int) -> dict:
    spans = [{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": f"{i:016x}", "name": f"step {i}",
              "startTimeUnixNano": str(1_764_000_000_000_000_000 + i)} for i in range(first, first + count)]
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


@pytest.fixture
def parsed(monkeypatch) -> list[int]:
    """The size of every text handed to the OTLP/JSON parser."""
    sizes: list[int] = []
    parse = otlp.parse_request

    def counting(text, **limits):
        sizes.append(len(text))
        return parse(text, **limits)

    monkeypatch.setattr(otlp, "parse_request", counting)
    return sizes


def test_pretty_printed_requests_are_parsed_once_each(tmp_path: Path, parsed: list[int]) -> None:
    # Two requests of 400 spans each, indented: about 5,600 lines. Before, the gathered text was parsed
    # again at every line (about 2,800 parses of ~100 KB each for one request: minutes for a few MB).
    path = tmp_path / "export.json"
    path.write_text(json.dumps(request(1, 400), indent=2) + "\n" + json.dumps(request(401, 400), indent=2) + "\n")
    assert sum(1 for _ in otlp._requests(path)) == 2
    assert sum(parsed) < 2 * path.stat().st_size  # each request once, and each opening line alone


def test_a_torn_line_is_an_error_naming_its_file_and_line_found_when_the_next_line_starts(tmp_path: Path, parsed: list[int]) -> None:
    lines = [json.dumps(request(i * 10 + 1, 10)) for i in range(300)]
    lines[1] = lines[1][: len(lines[1]) // 2]  # a writer killed mid-line
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(lines) + "\n")
    read = list(otlp._requests(path))
    assert [where for where, _ in read[:3]] == [f"{path}, line 1", f"{path}, line 2", f"{path}, line 3"]
    assert isinstance(read[1][1], otlp.JsonError) and f"{path}, line 2: body is not valid JSON" in str(read[1][1])
    assert len(read) == 300 and len(parsed) == 300  # every line once: line 3 was not gathered behind line 2


def test_a_torn_last_line_names_its_line_and_the_lines_before_it_are_stored(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(request(1, 3)) + "\n" + json.dumps(request(4, 3))[:40] + "\n")
    err = io.StringIO()
    assert main(["import", str(path), "--dir", str(tmp_path / "store")], stdout=io.StringIO(), stderr=err) == 1
    assert f"{path}, line 2: body is not valid JSON" in err.getvalue()
    assert agentotel.open(tmp_path / "store").sql("SELECT count(*) FROM spans").fetchall() == [(3,)]


def _import_file(tmp_path: Path, path: Path, *args: str) -> tuple[int, str]:
    err = io.StringIO()
    status = main(["import", str(path), "--dir", str(tmp_path / "store"), *args], stdout=io.StringIO(), stderr=err)
    return status, err.getvalue()


def _stored(tmp_path: Path) -> list[str]:
    return [name for (name,) in agentotel.open(tmp_path / "store").sql("SELECT name FROM spans ORDER BY name").fetchall()]


def test_a_malformed_line_is_reported_with_its_number_and_the_lines_after_it_are_stored_too(tmp_path: Path) -> None:
    # Before, the import stopped at the bad line: the lines after it were never stored.
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join([json.dumps(request(1, 1)), "{not json", json.dumps({"resourceSpans": "no"}),
                               json.dumps(request(2, 1))]) + "\n")
    status, err = _import_file(tmp_path, path)
    assert status == 1
    assert f"skipped {path}, line 2: body is not valid JSON" in err
    assert f"skipped {path}, line 3: resourceSpans must be an array" in err
    assert _stored(tmp_path) == ["step 1", "step 2"]


def test_a_line_past_the_size_limit_is_skipped_without_being_read_whole(tmp_path: Path, parsed: list[int]) -> None:
    # Before, every line was read whole and parsed, whatever its size: one line of GBs took GBs of memory.
    path = tmp_path / "traces.jsonl"
    huge = json.dumps(request(2, 400))
    path.write_text("\n".join([json.dumps(request(1, 1)), huge, json.dumps(request(500, 1))]) + "\n")
    status, err = _import_file(tmp_path, path, "--max-request-bytes", "4KiB")
    assert status == 1 and f"skipped {path}, line 2: more than 4096 bytes: skipped" in err
    assert _stored(tmp_path) == ["step 1", "step 500"]
    assert max(parsed) < 4096  # the long line never reached the parser


def _varint(n: int) -> bytes:
    out = b""
    while True:
        out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            return out


def _protobuf_request(first: int, count: int, *, events: int = 0) -> bytes:
    message = otlp.parse_request(json.dumps(request(first, count)).encode())
    for span in message.resource_spans[0].scope_spans[0].spans:
        for _ in range(events):
            span.events.add(name="e")
    return message.SerializeToString()


def test_the_collectors_length_prefixed_protobuf_files_are_imported_a_message_at_a_time(tmp_path: Path) -> None:
    # The OpenTelemetry Collector's file exporter with `format: proto` writes each message after its length
    # in 4 bytes (big-endian). Before, such a file was read whole as one message, and refused.
    path = tmp_path / "traces.pb"
    messages = [_protobuf_request(1, 2), _protobuf_request(3, 1, events=200), _protobuf_request(4, 1)]
    path.write_bytes(b"".join(len(m).to_bytes(4, "big") + m for m in messages))
    status, err = _import_file(tmp_path, path)
    assert status == 0, err
    assert _stored(tmp_path) == ["step 1", "step 2", "step 3", "step 4"]


def test_a_protobuf_request_past_the_span_limits_is_skipped_and_the_others_stored(tmp_path: Path) -> None:
    # Before, `agentotel import` had no limits: 64 MiB of empty events took GBs to parse.
    path = tmp_path / "traces.pb"
    messages = [_protobuf_request(1, 2), _protobuf_request(3, 1, events=30), _protobuf_request(4, 1)]
    path.write_bytes(b"".join(len(m).to_bytes(4, "big") + m for m in messages))
    stats = otlp.import_files(tmp_path / "store", [path], max_spans=2)
    assert stats["skipped"] == 1 and stats["spans"] == 3
    assert stats["problems"] == [f"{path}, message 2 (byte {4 + len(messages[0])}): request holds more than 20 span events "
                                 "and links; at most 20 are accepted per request (10 for each span of the 2 a request may hold)"]
    assert _stored(tmp_path) == ["step 1", "step 2", "step 4"]


def test_a_protobuf_file_whose_strings_are_not_utf8_is_stored_with_replacements(tmp_path: Path) -> None:
    path = tmp_path / "traces.pb"
    path.write_bytes(_protobuf_request(1, 1).replace(b"step 1", b"step \xff"))
    status, err = _import_file(tmp_path, path)
    assert status == 0, err
    assert _stored(tmp_path) == ["step \ufffd"]
