"""The OTLP/JSON mapping: requests in, responses and errors out.

OTLP/JSON is protobuf's JSON mapping with one exception that the generic parser gets wrong: trace
and span ids are hex strings, not base64. We rewrite the id fields to what `json_format` expects and
let it do the rest (camelCase or original field names, integer or named enums, 64-bit integers as
strings or numbers). Unknown fields are ignored, as the specification asks of receivers.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


class JsonError(ValueError):
    """The body is not an OTLP/JSON export request; the message says where."""


_SPAN_IDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")
_LINK_IDS = ("traceId", "spanId", "trace_id", "span_id")


def _hex_to_base64(obj: dict, keys: tuple[str, ...]) -> None:
    for key in keys:
        value = obj.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise JsonError(f"{key} must be a hex string, got {type(value).__name__}")
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            # An id that is not hex makes its span unusable (rejected with a reason), not the request.
            raw = b"\x00"
        obj[key] = base64.b64encode(raw).decode("ascii")


def _children(obj: Any, *keys: str) -> list:
    """The list under the first key present (camelCase or original field name), checked to be a list."""
    if not isinstance(obj, dict):
        raise JsonError(f"expected a JSON object, got {type(obj).__name__}")
    for key in keys:
        value = obj.get(key)
        if value is not None:
            if not isinstance(value, list):
                raise JsonError(f"{key} must be an array")
            return value
    return []


def parse_request(body: bytes) -> ExportTraceServiceRequest:
    """An ExportTraceServiceRequest from an OTLP/JSON body; JsonError says what is wrong with it."""
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise JsonError(f"body is not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise JsonError(f"body must be a JSON object, got {type(document).__name__}")
    for resource_spans in _children(document, "resourceSpans", "resource_spans"):
        for scope_spans in _children(resource_spans, "scopeSpans", "scope_spans"):
            for span in _children(scope_spans, "spans"):
                if not isinstance(span, dict):
                    raise JsonError("each span must be a JSON object")
                _hex_to_base64(span, _SPAN_IDS)
                for link in _children(span, "links"):
                    if not isinstance(link, dict):
                        raise JsonError("each link must be a JSON object")
                    _hex_to_base64(link, _LINK_IDS)
    request = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(document, request, ignore_unknown_fields=True)
    except (json_format.ParseError, binascii.Error, TypeError, ValueError, RecursionError) as exc:
        raise JsonError(f"body is not an OTLP/JSON trace export request: {exc}") from None
    return request


def dump_message(message: Message) -> bytes:
    """A response message in OTLP/JSON (camelCase names, 64-bit integers as strings)."""
    return json.dumps(
        json_format.MessageToDict(message, preserving_proto_field_name=False), separators=(",", ":")
    ).encode()
