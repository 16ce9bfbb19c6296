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

    def counting(text):
        sizes.append(len(text))
        return parse(text)

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
    with pytest.raises(otlp.JsonError, match=r"traces\.jsonl, line 2: body is not valid JSON"):
        list(otlp._requests(path))
    assert len(parsed) == 2  # stopped at line 3, not after gathering the 298 lines behind it


def test_a_torn_last_line_names_its_line_and_the_lines_before_it_are_stored(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(request(1, 3)) + "\n" + json.dumps(request(4, 3))[:40] + "\n")
    err = io.StringIO()
    assert main(["import", str(path), "--dir", str(tmp_path / "store")], stdout=io.StringIO(), stderr=err) == 1
    assert f"{path}, line 2: body is not valid JSON" in err.getvalue()
    assert agentotel.open(tmp_path / "store").sql("SELECT count(*) FROM spans").fetchall() == [(3,)]
