"""OTLP spans → store rows, exactly as the in-process exporter would write the same spans.

Used by agentotel-collector (OTLP/HTTP and gRPC) and `agentotel import` (OTLP JSON and protobuf files).

Each OTLP `AnyValue` becomes the Python value the SDK held before its OTLP exporter encoded it
(strings, bools, ints, floats, bytes, sequences, mappings), and the span goes through the shared
`SpanColumns`, so a row is identical column by column whichever way the span came.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Iterator, Sequence

import pyarrow as pa
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentotel._json import whole_characters
from agentotel.store.otlp_utf8 import repaired
from agentotel.store.schema import SpanColumns, encode_attributes

# OTLP enum numbers → the SDK's names (SpanKind.X.name, StatusCode.X.name). The spec lets a receiver
# read SPAN_KIND_UNSPECIFIED as INTERNAL, which is also what the SDK defaults to.
_KINDS = dict(enumerate(("INTERNAL", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")))
_STATUSES = dict(enumerate(("UNSET", "OK", "ERROR")))  # unknown numbers: INTERNAL / UNSET

# Rows are turned into Arrow once their payloads (prompts, tool results) reach this many characters,
# or this many spans, so the Python objects of only that many are alive at once (a big request
# carrying whole conversations would otherwise hold one more copy of every prompt; the input texts
# stay the Python strings the request decoded to, handed to the writer as they are). Chunks are not
# made smaller than that: every batch costs the WAL one compression call per Arrow buffer, so 512
# small spans in four batches cost three times as much to log as in one (measured), and
# concatenating batches instead would copy every prompt once more.
_CHUNK_CHARS = 16 * 1024 * 1024
_MIN_CHUNK_SPANS = 128
_MAX_CHUNK_SPANS = 4096

_NONE: tuple = ()
_EVENTS_PER_SPAN = 10  # events and links a request may hold, per span it may hold (OTel's SDK keeps 128 a span)
# Attribute values a request may hold, per span it may hold. An attribute an agent records takes 20 bytes or more
# on the wire (a key such as gen_ai.usage.input_tokens, and its value), so a request within the byte limit
# (64 MiB) reaches this only when its values average under 21 bytes; a 2-byte empty one costs ~55 bytes parsed.
_VALUES_PER_SPAN = 32
_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)


class TooManySpans(ValueError):
    """The request holds more spans than the collector accepts in one request (`spans` of them, at least)."""

    def __init__(self, message: str, spans: int) -> None:
        super().__init__(message)
        self.spans = spans


def _too_many(spans: int, limit: int, *, counted_to_the_limit: bool = False) -> TooManySpans:
    held = f"more than {limit}" if counted_to_the_limit else str(spans)
    return TooManySpans(f"request holds {held} spans; at most {limit} are accepted per request", spans)


def _too_many_parts(spans: int, limit: int) -> TooManySpans:
    most = _EVENTS_PER_SPAN * limit
    return TooManySpans(f"request holds more than {most} span events and links; at most {most} are accepted per "
                        f"request ({_EVENTS_PER_SPAN} for each span of the {limit} a request may hold)", spans)


def _too_many_values(spans: int, limit: int) -> TooManySpans:
    most = _VALUES_PER_SPAN * limit
    return TooManySpans(f"request holds more than {most} attribute values; at most {most} are accepted per request "
                        f"({_VALUES_PER_SPAN} for each span of the {limit} a request may hold, counting the attributes of "
                        "spans, events, links, resources and scopes, and each value in an array or key-value list)", spans)


class InvalidRequest(ValueError):
    """The request holds a value no span can have (answered 400 / INVALID_ARGUMENT: resending cannot help)."""


# Timestamps are stored as signed 64-bit nanoseconds (up to the year 2262); OTLP's fixed64 goes further.
_MAX_NS = 1 << 63


def _check_times(span: Any) -> None:
    for time_ns in (span.start_time_unix_nano, span.end_time_unix_nano, *(e.time_unix_nano for e in span.events)):
        if time_ns >= _MAX_NS:
            raise InvalidRequest(
                f"span {span.name!r}: timestamp {time_ns} is out of range (at most {_MAX_NS - 1} ns since 1970)"
            )

@dataclass
class Converted:
    """What one export request became: the rows to store, and the spans that could not be used.

    Store them with `StoreWriter.append(batches, inputs=inputs, outputs=outputs)`: the batches' input
    columns are NULL and `inputs` holds their values as Python strings (`SpanColumns.to_batch(inputs=)`),
    so a conversation's repeated history is never converted to Arrow and back, only what is stored of it.
    """

    batches: list[pa.RecordBatch]  # stored as they are: concatenating them would copy every prompt once more
    accepted: int
    rejected: int
    error_message: str
    inputs: list[list[str | None]] = field(default_factory=list)  # per batch, its rows' input values
    outputs: list[list[str | None]] = field(default_factory=list)  # per batch, its rows' output values as stored

    @property
    def size(self) -> int:
        """Bytes the rows hold: the batches' buffers and the input texts (Python strings, not yet in them)."""
        # get_total_buffer_size: RecordBatch.nbytes walks every column's offsets (~0.1 ms per 512 spans).
        return sum(b.get_total_buffer_size() for b in self.batches) + sum(
            sys.getsizeof(text) for values in self.inputs for text in values if text is not None
        )


def _array(value: Any) -> list[Any]:
    return [_value(v) for v in value.array_value.values]


def _kvlist(value: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}


_READERS = {
    "string_value": lambda v: v.string_value,
    "bool_value": lambda v: v.bool_value,
    "int_value": lambda v: v.int_value,
    "double_value": lambda v: v.double_value,
    "bytes_value": lambda v: v.bytes_value,
    "array_value": _array,
    "kvlist_value": _kvlist,
    None: lambda v: None,
}


def _value(value: Any) -> Any:
    """An OTLP AnyValue as the Python value the SDK attribute had."""
    return _READERS[value.WhichOneof("value")](value)


def _attributes(key_values: Any) -> dict[str, Any]:
    # Strings dominate agent spans: a non-empty string_value can only be a string, so only the rest
    # (other types, and the empty string) pay for the WhichOneof dispatch.
    out: dict[str, Any] = {}
    for kv in key_values:
        v = kv.value
        text = v.string_value
        out[kv.key] = text if text else _READERS[v.WhichOneof("value")](v)
    return out


def _links(links: Any) -> list[tuple[str, str, dict[str, Any]]]:
    # A link's ids of another length than a trace's (16 bytes) and a span's (8) name nothing: the link is
    # left out, the span kept. All-zero ids are kept: the SDK records such a link when it has attributes.
    return [(k.trace_id.hex(), k.span_id.hex(), _attributes(k.attributes)) for k in links
            if len(k.trace_id) == 16 and len(k.span_id) == 8]


def _problem(span: Any) -> str:
    """Why a span cannot be stored (called only for a span that failed the quick checks)."""
    if len(span.trace_id) != 16 or span.trace_id == _ZERO_TRACE:
        return "trace_id must be 16 bytes (32 hex characters) and not all zero"
    if len(span.span_id) != 8 or span.span_id == _ZERO_SPAN:
        return "span_id must be 8 bytes (16 hex characters) and not all zero"
    if span.parent_span_id and len(span.parent_span_id) != 8:
        return "parent_span_id must be empty or 8 bytes (16 hex characters)"
    return "invalid ids"


def convert(request: ExportTraceServiceRequest, *, max_spans: int | None = None) -> Converted:
    """Rows for every usable span of an export request; unusable spans are counted, with the first reason.

    With `max_spans`, TooManySpans past that many spans, or past _EVENTS_PER_SPAN times that many events
    and links in all (one span of 30 million empty events, 60 KB gzipped, took 14 GB and 97 s to convert).
    """
    total = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
    if max_spans is not None and total > max_spans:
        raise _too_many(total, max_spans)
    parts_left = _EVENTS_PER_SPAN * max_spans if max_spans is not None else -1
    columns = SpanColumns()
    append = columns.append_values  # positional: the hot loop saves most of a keyword call's cost
    rejected = 0
    first_problem = ""
    batches: list[pa.RecordBatch] = []
    inputs: list[list[str | None]] = []
    outputs: list[list[str | None]] = []

    def chunk() -> None:
        inputs_of: list[str | None] = []
        outputs_of: list[str | None] = []
        batches.append(columns.to_batch(inputs=inputs_of, outputs=outputs_of))
        inputs.append(inputs_of)
        outputs.append(outputs_of)

    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        encoded_resource = encode_attributes(resource)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope
            scope_name = scope.name
            scope_version = scope.version
            for span in scope_spans.spans:
                trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
                if (
                    len(trace_id) != 16 or len(span_id) != 8 or (parent and len(parent) != 8)
                    or trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN
                ):  # fmt: skip
                    rejected += 1
                    first_problem = first_problem or f"span {span.name!r}: {_problem(span)}"
                    continue
                if (columns.payload_chars >= _CHUNK_CHARS and len(columns) >= _MIN_CHUNK_SPANS) or len(columns) == _MAX_CHUNK_SPANS:
                    chunk()
                # Each field read once: every read is a lookup of the field by name in upb.
                status = span.status
                start, end = span.start_time_unix_nano, span.end_time_unix_nano
                events, links = span.events, span.links
                if start >= _MAX_NS or end >= _MAX_NS or events or links:
                    if parts_left >= 0:
                        parts_left -= len(events) + len(links)
                        if parts_left < 0:
                            raise _too_many_parts(total, max_spans)
                    _check_times(span)
                append(
                    trace_id.hex(),
                    span_id.hex(),
                    parent.hex() if parent and parent != _ZERO_SPAN else None,
                    span.name,
                    _KINDS.get(span.kind, "INTERNAL"),
                    _STATUSES.get(status.code, "UNSET"),
                    status.message,
                    start,
                    end or start,  # as the in-process exporter does for an unended span
                    _attributes(span.attributes),
                    resource,
                    encoded_resource,
                    scope_name,
                    scope_version,
                    [(e.time_unix_nano, e.name, _attributes(e.attributes)) for e in events] if events else _NONE,
                    _links(links) if links else _NONE,
                )
    if len(columns):
        chunk()
    accepted = sum(b.num_rows for b in batches)
    if rejected:
        first_problem = f"{rejected} span(s) rejected; first: {first_problem}"
    return Converted(batches, accepted, rejected, first_problem, inputs, outputs)


# -- OTLP/JSON --------------------------------------------------------------------------------------
# The OTLP/JSON mapping of an export request.
#
# OTLP/JSON is protobuf's JSON mapping with one exception that the generic parser gets wrong: trace
# and span ids are hex strings, not base64. We rewrite the id fields to what `json_format` expects and
# let it do the rest (camelCase or original field names, integer or named enums, 64-bit integers as
# strings or numbers). Unknown fields are ignored, as the specification asks of receivers.


# -- protobuf requests ------------------------------------------------------------------------------
def parse_protobuf(data: bytes, *, max_spans: int | None = None) -> ExportTraceServiceRequest:
    """The ExportTraceServiceRequest of a protobuf body (DecodeError when it is none); TooManySpans, before
    any span is built, when it holds more than `max_spans`, more than _EVENTS_PER_SPAN times that many
    span events and links, or more than _VALUES_PER_SPAN times that many attribute values.

    A span, an event, a link or an attribute value costs protobuf ~55-170 bytes of memory once parsed, and
    as little as 2 bytes on the wire (an empty one): 60 MB of empty spans (60 KB gzipped) took 5 GB and
    19 s to parse before convert() could count them, 64 MiB of empty events in one span 2 GB and 7 s, of
    empty attributes (or empty values in one attribute's array) 1.7-1.9 GB to parse and 8-15 s to convert.
    So a body that could hold more than the limits has its spans, events and links, and attribute values
    (those of spans, events, links, resources and scopes, and every value nested in an array or a key-value
    list) counted on the wire first, each up to one past its limit.

    A string that is not UTF-8 (which protobuf refuses the whole request for) gets U+FFFD for its bad bytes.
    """
    if max_spans is not None and len(data) > 2 * max_spans:
        most_parts, most_values = _EVENTS_PER_SPAN * max_spans, _VALUES_PER_SPAN * max_spans
        try:
            counted = _Count(data, max_spans, most_parts if len(data) > 2 * most_parts else -1,
                             most_values if len(data) > 2 * most_values else -1)
        except (IndexError, ValueError, RecursionError):
            # Broken where protobuf would find it broken too (the walk reads every wire type it reads, groups
            # included, nested no deeper than it allows): refused as it would be, and never parsed, so a walk
            # that stopped early can let nothing past the limits.
            raise DecodeError("Error parsing message: not a well-formed OTLP protobuf request") from None
        if counted.spans > max_spans:
            raise _too_many(counted.spans, max_spans, counted_to_the_limit=True)
        if counted.parts > most_parts:
            raise _too_many_parts(counted.spans, max_spans)
        if counted.values > most_values:
            raise _too_many_values(counted.spans, max_spans)
    try:
        return ExportTraceServiceRequest.FromString(data)
    except DecodeError:
        return repaired(data)


# Messages nested deeper than this are no request protobuf reads (its upb parser stops at 100 levels).
_MAX_DEPTH = 100

# Wire tags (field number << 3 | wire type 2) of the messages walked below.
_SPAN_ATTRIBUTE, _EVENT_TAG, _LINK_TAG = 9 << 3 | 2, 11 << 3 | 2, 13 << 3 | 2  # Span.attributes, .events, .links
_KEY, _VALUE = 1 << 3 | 2, 2 << 3 | 2  # KeyValue.key, KeyValue.value
_STRING, _BOOL, _INT, _DOUBLE = 1 << 3 | 2, 2 << 3, 3 << 3, 4 << 3 | 1  # AnyValue's scalars


class _Count:
    """A serialized request's spans, span events and links, and attribute values, counted on the wire.

    Each count stops one past its limit (a limit of -1: not counted). Spans are walked largest first, and
    only until the rest could not hold enough to pass a limit (a value, an event or a link takes 2 bytes at
    least): in a request of agent spans, the few holding whole conversations, each crossed in a few hops.
    Raises ValueError or IndexError where the wire format is broken.
    """

    def __init__(self, data: bytes, max_spans: int, max_parts: int, max_values: int) -> None:
        self.data = data
        self.spans = self.parts = self.values = 0
        self.max_parts, self.max_values = max_parts, max_values
        spans: list[tuple[int, int]] = []
        for start, end in _fields(data, 0, len(data), 1):  # ExportTraceServiceRequest.resource_spans
            for number, start2, end2 in _all_fields(data, start, end):
                if number == 1 and max_values >= 0:  # ResourceSpans.resource: its attributes (field 1)
                    self._attributes_of(start2, end2, 1)
                elif number == 2:  # ResourceSpans.scope_spans
                    for number3, start3, end3 in _all_fields(data, start2, end2):
                        if number3 == 2:  # ScopeSpans.spans
                            spans.append((start3, end3))
                            if len(spans) > max_spans:
                                self.spans = len(spans)
                                return
                        elif number3 == 1 and max_values >= 0:  # ScopeSpans.scope: its attributes (field 3)
                            self._attributes_of(start3, end3, 3)
            if self._past():
                break
        self.spans = len(spans)
        if max_parts < 0 and max_values < 0:
            return
        could_hold = sum(end - start for start, end in spans) // 2
        for start, end in sorted(spans, key=lambda span: span[0] - span[1]):
            if self._past():
                break
            parts = max_parts >= 0 and self.parts + could_hold > max_parts
            values = max_values >= 0 and self.values + could_hold > max_values  # each limit walks only as far as it must
            if not (parts or values):
                break
            could_hold -= (end - start) // 2
            self._span(start, end, values)

    def _past(self) -> bool:
        return (0 <= self.max_parts < self.parts) or (0 <= self.max_values < self.values)

    def _span(self, at: int, end: int, values: bool) -> None:
        """Count the events and links of the span in data[at:end], and with `values` its attribute values."""
        data = self.data
        counted = 0  # its attributes of one scalar value (most of them): added at the end
        # One hop a field (an attribute holding a whole conversation is crossed at once), and for an attribute
        # of one scalar value (most of them) a look at its value's first bytes: a few us a span.
        while at < end:
            tag = data[at]
            at += 1
            if tag & 0x80:
                tag, at = _varint(data, at - 1)
            kind = tag & 7
            if kind == 2:
                length = data[at]
                at += 1
                if length & 0x80:
                    length, at = _varint(data, at - 1)
                stop = at + length
                if stop > end:
                    raise ValueError("truncated")
                if tag == _SPAN_ATTRIBUTE:
                    if values:
                        if _one_scalar(data, at, stop):
                            counted += 1
                        else:
                            self._key_value(at, stop, 1)
                elif tag == _EVENT_TAG or tag == _LINK_TAG:
                    self.parts += 1
                    if values:  # Span.Event.attributes (field 3), Span.Link.attributes (field 4)
                        self._attributes_of(at, stop, 3 if tag == _EVENT_TAG else 4)
                    if self._past():
                        break
                at = stop
                if values and self.values + counted > self.max_values:
                    break
            else:
                at = _skip(data, at, end, tag)
        else:
            if at != end:
                raise ValueError("truncated")
        self.values += counted

    def _attributes_of(self, at: int, end: int, number: int) -> None:
        """Count the attribute values of the message in data[at:end] whose KeyValues are field `number`."""
        for found, start, stop in _all_fields(self.data, at, end):
            if found == number:
                self._key_value(start, stop, 1)
                if self.values > self.max_values:
                    return

    def _key_value(self, at: int, end: int, depth: int) -> None:
        """Count a KeyValue in data[at:end]: one value, and the values nested in its AnyValue."""
        self.values += 1
        if _one_scalar(self.data, at, end):
            return
        if depth > _MAX_DEPTH:
            raise ValueError("nested too deep")
        for number, start, stop in _all_fields(self.data, at, end):
            if number == 2:  # KeyValue.value
                self._any_value(start, stop, depth + 1)

    def _any_value(self, at: int, end: int, depth: int) -> None:
        """Count the values nested in the AnyValue in data[at:end] (it is counted by its holder)."""
        if depth > _MAX_DEPTH:
            raise ValueError("nested too deep")
        for number, start, stop in _all_fields(self.data, at, end):
            if number == 5:  # AnyValue.array_value: ArrayValue.values (field 1), each an AnyValue
                for inner, start2, stop2 in _all_fields(self.data, start, stop):
                    if inner == 1:
                        self.values += 1
                        if self.values > self.max_values:
                            return
                        self._any_value(start2, stop2, depth + 2)
            elif number == 6:  # AnyValue.kvlist_value: KeyValueList.values (field 1), each a KeyValue
                for inner, start2, stop2 in _all_fields(self.data, start, stop):
                    if inner == 1:
                        self._key_value(start2, stop2, depth + 2)
                        if self.values > self.max_values:
                            return


def _one_scalar(data: bytes, at: int, end: int) -> bool:
    """Whether the KeyValue in data[at:end] is a short key and one string, int, bool or double value, nothing
    else (then it holds one value): most attributes, told apart from the rest by a look at a few bytes."""
    if end - at < 4 or data[at] != _KEY or data[at + 1] & 0x80:
        return False
    value = at + 2 + data[at + 1]
    if value + 2 >= end or data[value] != _VALUE:
        return False
    length, inner = data[value + 1], value + 2  # varints inlined where one byte: this runs for every attribute
    if length & 0x80:
        length, inner = _varint(data, value + 1)
    if inner + length != end or inner == end:
        return False
    kind = data[inner]
    if kind == _STRING:
        string, start = data[inner + 1], inner + 2
        if string & 0x80:
            string, start = _varint(data, inner + 1)
        return start + string == end
    if kind == _INT or kind == _BOOL:
        return _varint(data, inner + 1)[1] == end
    return kind == _DOUBLE and inner + 9 == end


def _all_fields(data: bytes, at: int, end: int) -> Iterator[tuple[int, int, int]]:
    """(number, start, end) of each length-delimited field of the message in data[at:end]; other fields,
    groups included, are stepped over."""
    while at < end:
        tag, at = _varint(data, at)
        if tag & 7 == 2:
            length, at = _varint(data, at)
            if at + length > end:
                raise ValueError("truncated")
            yield tag >> 3, at, at + length
            at += length
        else:
            at = _skip(data, at, end, tag)
    if at != end:
        raise ValueError("truncated")


def _fields(data: bytes, at: int, end: int, number: int) -> Iterator[tuple[int, int]]:
    """Where each length-delimited field `number` of the message in data[at:end] starts and ends."""
    for found, start, stop in _all_fields(data, at, end):
        if found == number:
            yield start, stop


def _skip(data: bytes, at: int, end: int, tag: int) -> int:
    """Where the field whose `tag` was read before `at` ends: a varint, fixed-size, length-delimited value, or a
    group (OTLP has none, but protobuf reads an unknown one: not stepping over it would let it hide the rest)."""
    kind = tag & 7
    if kind == 0:
        _value, at = _varint(data, at)
    elif kind == 1 or kind == 5:
        at += 8 if kind == 1 else 4
    elif kind == 2:
        length, at = _varint(data, at)
        at += length
    elif kind == 3:
        depth = 1
        while depth:
            inner, at = _varint(data, at)
            if inner & 7 == 4:
                if inner >> 3 != tag >> 3 and depth == 1:
                    raise ValueError("group ends with another field's end tag")
                depth -= 1
            elif inner & 7 == 3:
                depth += 1
                if depth > _MAX_DEPTH:
                    raise ValueError("nested too deep")
            else:
                at = _skip(data, at, end, inner)
    else:
        raise ValueError("invalid wire type")
    if at > end:
        raise ValueError("truncated")
    return at


def _varint(data: bytes, at: int) -> tuple[int, int]:
    byte = data[at]
    if byte < 0x80:  # one byte: every tag here, and most lengths
        return byte, at + 1
    value, shift = byte & 0x7F, 7
    while True:
        at += 1
        byte = data[at]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at + 1
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


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


def _scopes(document: dict) -> Iterator[Any]:
    for resource_spans in _children(document, "resourceSpans", "resource_spans"):
        yield from _children(resource_spans, "scopeSpans", "scope_spans")


class _PastTheObjects(Exception):
    """Raised out of json.loads once a body holds more objects than allowed (not a ValueError: no JSON error)."""


def _load_json(body: bytes | str, most: int | None) -> Any:
    """json.loads(body), stopped by _PastTheObjects once it has read more than `most` JSON objects.

    Every span, event, link, attribute and value of a request is an object in OTLP/JSON, each costing Python
    64 bytes or more once read and protobuf as much again once parsed: 64 MiB of empty attributes (`{},` each)
    took 3 GB and 53 s to read and parse, 3.2 million of them 0.5 GB and 7 s. A body with no more than `most`
    braces is read as it is (counting them is a pass in C, and agent requests' strings hold few); any other is
    read with a count of its objects as they are made, so reading stops one past the limit."""
    raw = body.encode("utf-8") if isinstance(body, str) else body
    if most is None or len(raw) <= 2 * most or raw.count(b"{") <= most:  # an object takes `{}` at least
        return json.loads(body)
    made = 0

    def count(obj: dict) -> dict:
        nonlocal made
        made += 1
        if made > most:
            raise _PastTheObjects
        return obj

    return json.loads(body, object_hook=count)


def parse_request(body: bytes, *, max_spans: int | None = None) -> ExportTraceServiceRequest:
    """An ExportTraceServiceRequest from an OTLP/JSON body; JsonError says what is wrong with it, TooManySpans
    that it holds more than `max_spans` (counted before any is converted: 20 million empty spans took 95 s).
    Bytes that are not UTF-8 become U+FFFD, as in a protobuf request's strings. TooManySpans, before the body
    is read, too, once it is found to hold more than _VALUES_PER_SPAN times `max_spans` JSON objects (`_load_json`)."""
    most_objects = _VALUES_PER_SPAN * max_spans if max_spans is not None else None
    try:
        try:
            document = _load_json(body, most_objects)
        except UnicodeDecodeError:
            document = _load_json(bytes(body).decode("utf-8", "replace"), most_objects)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise JsonError(f"body is not valid JSON: {exc}") from None
    except _PastTheObjects:
        raise TooManySpans(f"request holds more than {most_objects} JSON objects; at most {most_objects} are accepted per "
                           f"request ({_VALUES_PER_SPAN} for each span of the {max_spans} a request may hold: spans, events, "
                           "links, and two for each attribute value, its key-value and its value)", 0) from None
    if not isinstance(document, dict):
        raise JsonError(f"body must be a JSON object, got {type(document).__name__}")
    if max_spans is not None:
        spans = [span for scope_spans in _scopes(document) for span in _children(scope_spans, "spans")]
        if len(spans) > max_spans:
            raise _too_many(len(spans), max_spans)
        parts = sum(len(_children(span, "events")) + len(_children(span, "links")) for span in spans if isinstance(span, dict))
        if parts > _EVENTS_PER_SPAN * max_spans:
            raise _too_many_parts(len(spans), max_spans)
        del spans
    document = whole_characters(document, body)  # protobuf refuses a string holding half of a UTF-16 pair
    for scope_spans in _scopes(document):
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



# -- files ----------------------------------------------------------------------------------------------
# What one request may hold, in a file as from a sender: the collector's defaults (--max-decompressed-bytes,
# --max-spans-per-request). A file is no more trusted than a sender: a request past them is skipped, with
# its place in the file, instead of read whole (a line of 5 GB, or 64 MiB of empty events, would need GBs).
MAX_REQUEST_BYTES = 64 * 1024 * 1024
MAX_SPANS_PER_REQUEST = 100_000

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_GZIP_MAGIC = b"\x1f\x8b"
_DISCARD_CHUNK = 1024 * 1024


def _open_file(path: Path) -> IO[bytes]:
    """The file's bytes, decompressed when it is gzip or zstd (by its first bytes, whatever its name)."""
    raw = open(path, "rb")  # noqa: SIM115 - returned to the caller, closed there
    head = raw.peek(4)[:4] if hasattr(raw, "peek") else b""
    if head.startswith(_GZIP_MAGIC):
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if head.startswith(_ZSTD_MAGIC):
        try:
            import zstandard
        except ImportError:
            raw.close()
            raise ImportError(f"{path} is zstd-compressed: `pip install zstandard` to read it") from None
        return zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)  # type: ignore[return-value]
    return raw


def _requests(path: Path, max_bytes: int = MAX_REQUEST_BYTES,
              max_spans: int = MAX_SPANS_PER_REQUEST) -> Iterator[tuple[str, ExportTraceServiceRequest | JsonError]]:
    """The export requests in one file, each with where it is ("<path>, line 3"), or in its place the error
    that made it unusable (the file's other requests are still read): OTLP/JSON lines (the Collector's file
    exporter; a file holding one pretty-printed request works too), the Collector's `format: proto` files
    (each message after its length in 4 bytes), or one OTLP protobuf message. Read a request at a time."""
    with _open_file(path) as stream:
        reader = io.BufferedReader(stream) if not isinstance(stream, io.BufferedReader) else stream
        head = reader.peek(64)[:64]
        # A protobuf request opens with byte 0x0a, which is also a newline: JSON is text with a "{" first.
        if head.lstrip()[:1] == b"{" and not any(byte < 0x20 and byte not in b"\t\n\r" for byte in head):
            yield from _json_lines(path, reader, max_bytes, max_spans)
        elif head[:1] == b"\x00":  # a length first: no request of under 16 MiB starts with a zero byte otherwise
            yield from _length_prefixed(path, reader, max_bytes, max_spans)
        else:
            where = f"{path}"
            data = reader.read(max_bytes + 1)
            if len(data) > max_bytes:
                yield where, JsonError(f"{where}: a protobuf message of more than {max_bytes} bytes: not read")
                return
            yield where, _protobuf(where, data, max_spans)


def _protobuf(where: str, data: bytes, max_spans: int) -> ExportTraceServiceRequest | JsonError:
    try:
        return parse_protobuf(data, max_spans=max_spans)
    except DecodeError as exc:
        return JsonError(f"{where}: neither OTLP/JSON nor an OTLP protobuf message ({exc})")
    except TooManySpans as exc:
        return JsonError(f"{where}: {exc}")


def _length_prefixed(path: Path, reader: io.BufferedReader, max_bytes: int,
                     max_spans: int) -> Iterator[tuple[str, ExportTraceServiceRequest | JsonError]]:
    at, number = 0, 0
    while size_bytes := reader.read(4):
        number += 1
        where = f"{path}, message {number} (byte {at})"
        if len(size_bytes) < 4:
            yield where, JsonError(f"{where}: the file ends inside a message's length")
            return
        size = int.from_bytes(size_bytes, "big")
        if size > max_bytes:
            yield where, JsonError(f"{where}: {size} bytes, more than the {max_bytes} a request may have: skipped")
            if _discard(reader, size) < size:
                return
        else:
            data = reader.read(size)
            if len(data) < size:
                yield where, JsonError(f"{where}: the file ends {size - len(data)} bytes before the message does")
                return
            yield where, _protobuf(where, data, max_spans)
        at += 4 + size


def _discard(reader: io.BufferedReader, size: int) -> int:
    """Read and drop `size` bytes a chunk at a time; how many there were."""
    left = size
    while left and (chunk := reader.read(min(left, _DISCARD_CHUNK))):
        left -= len(chunk)
    return size - left


def _json_lines(path: Path, reader: io.BufferedReader, max_bytes: int,
                max_spans: int) -> Iterator[tuple[str, ExportTraceServiceRequest | JsonError]]:
    # A line that is not JSON on its own starts a request written over several lines (pretty-printed).
    # What is gathered is parsed again only at a line that starts at column 0, where a pretty-printed
    # request closes: parsing it at every line took time growing with the square of its length. A
    # line opening a new request ("{" at column 0) meanwhile means the gathered one was cut short (a
    # torn line of a crashed writer): that is an error naming its line, found there, not at the end.
    pending, start, problem = bytearray(), 0, None
    skipping = False  # past a request too large to read: until the next one opens
    number = 0
    while line := reader.readline(max_bytes + 1):
        number += 1
        if len(line) > max_bytes and not line.endswith(b"\n"):
            yield f"{path}, line {number}", JsonError(f"{path}, line {number}: more than {max_bytes} bytes: skipped")
            while (rest := reader.readline(_DISCARD_CHUNK)) and not rest.endswith(b"\n"):
                pass
            pending.clear()
            skipping = True
            continue
        if skipping:
            if line[:1] != b"{":
                continue
            skipping = False
        if pending:
            if line[:1] == b"{":
                yield f"{path}, line {start}", JsonError(f"{path}, line {start}: {problem}")
                pending.clear()
            else:
                pending += line
                if len(pending) > max_bytes:
                    yield f"{path}, line {start}", JsonError(f"{path}, line {start}: more than {max_bytes} bytes: skipped")
                    pending.clear()
                    skipping = True
                    continue
                if line[:1].isspace():
                    continue
        if pending:
            text = pending
        elif line.strip():
            start, text = number, line
        else:
            continue
        where = f"{path}, line {start}"
        try:
            request = parse_request(text, max_spans=max_spans)
        except TooManySpans as exc:
            pending.clear()
            yield where, JsonError(f"{where}: {exc}")
            continue
        except JsonError as exc:
            if "not valid JSON" not in str(exc):
                pending.clear()
                yield where, JsonError(f"{where}: {exc}")
                continue
            if not pending:
                pending += text
            problem = exc
            continue
        pending.clear()
        yield where, request
    if pending.strip():
        yield f"{path}, line {start}", JsonError(f"{path}, line {start}: {problem}")


def import_files(directory: str | os.PathLike[str], paths: Sequence[str | os.PathLike[str]], *,
                 max_request_bytes: int = MAX_REQUEST_BYTES, max_spans: int = MAX_SPANS_PER_REQUEST) -> dict[str, Any]:
    """Store the spans of OTLP files (JSON lines or protobuf; plain, .gz or .zst) in the store at
    `directory`, through the same conversion and within the same limits as the collector. Returns files,
    spans, rejected (spans without usable ids), skipped (requests that could not be used: a malformed line,
    a request past the limits; the others are stored) and problems: what was wrong with the first
    _KEPT_PROBLEMS skipped, each saying where it is."""
    from agentotel.store.writer import StoreWriter

    stats: dict[str, Any] = {"files": 0, "spans": 0, "rejected": 0, "skipped": 0, "problems": []}

    def skip(problem: str) -> None:
        stats["skipped"] += 1
        if len(stats["problems"]) < _KEPT_PROBLEMS:  # a file of a million bad lines is not a million messages
            stats["problems"].append(problem)

    writer = StoreWriter(directory)
    try:
        for path in paths:
            for where, request in _requests(Path(path), max_request_bytes, max_spans):
                if isinstance(request, JsonError):
                    skip(str(request))
                    continue
                try:
                    converted = convert(request, max_spans=max_spans)
                except (TooManySpans, InvalidRequest) as exc:
                    skip(f"{where}: {exc}")
                    continue
                del request
                writer.append(converted.batches, inputs=converted.inputs, outputs=converted.outputs)
                stats["spans"] += converted.accepted
                stats["rejected"] += converted.rejected
            stats["files"] += 1
    finally:
        writer.close()
    return stats


_KEPT_PROBLEMS = 100
