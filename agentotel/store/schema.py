"""The span row: the store's Arrow schema and the one place a span becomes a row.

The in-process exporter (from `ReadableSpan`) and the collector (from OTLP protobuf) both normalise a
span into plain Python values and append them to `SpanColumns`, so a span looks the same whichever way
it came. Which attributes are promoted to typed columns and which payload attributes move to
`input`/`output` comes from the generated registry (`agentotel.semconv`), not from this file.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any, Callable, Iterable, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute, for renormalise

from agentotel import semconv
from agentotel._tracing import SCOPE as _OWN_SCOPE
from agentotel.store import dialects

SCHEMA_VERSION = 5
"""Bumped when a column changes; written to every file's key-value metadata as `agentotel.schema_version`.
2 added `dialect`; 3 added the `input_chain`, `input_offset`, `input_added` columns (store/messages.py);
4 added `input_ranges` (a continuation may keep some of its conversation's messages, not all); 5 added
`input_borrowed` (a message that gives an earlier output back to the model refers to it)."""

METADATA_KEY = b"agentotel.schema_version"

_ARROW = {
    "string": pa.string(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "list<string>": pa.list_(pa.string()),
}

STRING_MAP = pa.map_(pa.string(), pa.string())
TIMESTAMP = pa.timestamp("ns", tz="UTC")

EVENT = pa.struct([("time", TIMESTAMP), ("name", pa.string()), ("attributes", STRING_MAP)])
LINK = pa.struct([("trace_id", pa.string()), ("span_id", pa.string()), ("attributes", STRING_MAP)])

_HEAD = [
    ("trace_id", pa.string()),
    ("span_id", pa.string()),
    ("parent_span_id", pa.string()),
    ("name", pa.string()),
    ("kind", pa.string()),
    ("status_code", pa.string()),
    ("status_message", pa.string()),
    ("start_time", TIMESTAMP),
    ("end_time", TIMESTAMP),
    ("duration_ns", pa.int64()),
    ("service_name", pa.string()),
    ("scope_name", pa.string()),
    ("scope_version", pa.string()),
]
# Promoted columns in a stable order (the contract fixes names and types, not order).
PROMOTED = {attr: (column, _ARROW[arrow]) for attr, (column, arrow) in semconv.PROMOTED_COLUMNS.items()}
_TAIL = [
    ("input", pa.string()),
    ("output", pa.string()),
    ("attributes", STRING_MAP),
    ("resource_attributes", STRING_MAP),
    ("events", pa.list_(EVENT)),
    ("links", pa.list_(LINK)),
]

DIALECT = ("dialect", pa.string())  # which normalisation rules filled the promoted columns (store/dialects.py)
# A model call's input stored as an earlier call's plus the messages it adds (store/messages.py): NULL in
# every other row. Readers see them folded back into `input` (query views); a plain glob sees them as they are.
CONVERSATION = [
    ("input_chain", pa.string()),  # the span id of the first call of the conversation this row continues
    ("input_offset", pa.int64()),  # characters of the conversation's messages before this row's (its base)
    ("input_added", pa.string()),  # the messages this call adds to its base's, as a JSON array
    # Which parts of the conversation's text (its messages so far and this row's) the input holds, in
    # order: NULL for all of it (an input that only appends), else the turns an agent kept when it dropped
    # or summarised others.
    ("input_ranges", pa.list_(pa.struct([("start", pa.int64()), ("length", pa.int64())]))),
    # Parts of input_added left out because an earlier span's output in the same trace holds them (the
    # model's reply, a tool's result given back): each the text `length` characters from `start` in the
    # output of `span_id` (as a JSON string without its quotes when `as_string`: a result given back
    # inside a message's string), put back at `at` (characters into input_added as stored), in order.
    # NULL: none.
    ("input_borrowed", pa.list_(pa.struct([("at", pa.int64()), ("span_id", pa.string()), ("start", pa.int64()),
                                           ("length", pa.int64()), ("as_string", pa.bool_())]))),
]
STORAGE_COLUMNS = tuple(name for name, _ in CONVERSATION)
"""Columns that say how a row is stored, not what the span was: the query views fold them away."""

SPAN_SCHEMA = pa.schema(
    _HEAD + [(column, arrow) for column, arrow in PROMOTED.values()] + [DIALECT] + _TAIL + CONVERSATION,
    metadata={METADATA_KEY: str(SCHEMA_VERSION).encode()},
)
"""The Arrow schema of a span row; Parquet files and WAL batches use exactly this."""

COLUMNS = tuple(SPAN_SCHEMA.names)

SERVICE_NAME = "service.name"  # resource attribute (OTel resource semconv), read for the service_name column


# One reusable encoder: json.dumps with non-default options builds a new encoder per call, which
# dominated per-span conversion time. allow_nan=False makes NaN/inf take the _json_safe path below.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_encode_str = json.encoder.encode_basestring  # a JSON string literal, non-ASCII kept as it is


def encode_value(value: Any) -> str:
    """One attribute value as a map string: strings as they are, everything else as JSON. Never raises."""
    if isinstance(value, str):
        return value
    kind = type(value)
    if kind is int or (kind is float and math.isfinite(value)):
        return repr(value)  # the same text JSON gives, without the encoder's overhead
    if kind is bool:
        return "true" if value else "false"
    if kind is tuple or kind is list:
        try:  # the common string array (finish reasons, stop sequences), in C
            return "[" + ",".join(map(_encode_str, value)) + "]"
        except TypeError:
            pass
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError):
        pass
    try:
        return _ENCODER.encode(_json_safe(value))
    except (TypeError, ValueError, RecursionError):  # e.g. a self-referencing list
        return f"<unencodable {type(value).__name__}>"


def _json_safe(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        # JSON has no NaN or infinity; keep them readable rather than emitting invalid JSON.
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a value that cannot even be printed still must not fail the batch
        return f"<unprintable {type(value).__name__}>"


def encode_attributes(attributes: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Attributes as map entries (key, string value)."""
    if not attributes:
        return []
    return [(str(key), encode_value(value)) for key, value in attributes.items()]


def _promote_string(value: Any) -> Any:
    return value if isinstance(value, str) else encode_value(value)


def _promote_int(value: Any) -> Any:
    if isinstance(value, bool):
        return None
    try:
        result = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return result if -(2**63) <= result < 2**63 else None


def _promote_float(value: Any) -> Any:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _promote_bool(value: Any) -> Any:
    return value if isinstance(value, bool) else None


def _promote_strings(value: Any) -> Any:
    if isinstance(value, str):
        return [value]
    try:
        return [v if isinstance(v, str) else encode_value(v) for v in value]
    except TypeError:  # not iterable
        return None


# Chosen once per column, not per value: comparing Arrow types costs ~0.2 us each (a C++ call), and a
# span's promoted numbers (tokens, cost) paid two or three such comparisons apiece.
_PROMOTERS = {pa.string(): _promote_string, pa.int64(): _promote_int, pa.float64(): _promote_float, pa.bool_(): _promote_bool}


def _promoter(arrow: pa.DataType) -> Callable[[Any], Any]:
    """The function giving a value's typed copy for a promoted column of type `arrow` (None when it does not fit)."""
    return _PROMOTERS.get(arrow, _promote_strings)  # the one other type: list<string> (finish reasons)


_PROMOTED_NAMES = [column for column, _ in PROMOTED.values()]
_PROMOTED_TYPES = [arrow for _, arrow in PROMOTED.values()]
_PROMOTED_BY_INDEX = [_promoter(arrow) for arrow in _PROMOTED_TYPES]
# One lookup per attribute decides where it goes: attribute -> (payload column or None, promoted
# column index or -1, its arrow type, True when a str value can be stored as it is). An attribute
# is never both (a payload attribute is routed as a payload, as the registry intends).
_ROUTE: dict[str, tuple[str | None, int, Callable[[Any], Any] | None, bool]] = {
    attr: (None, index, _promoter(arrow), arrow == pa.string()) for index, (attr, (_, arrow)) in enumerate(PROMOTED.items())
}
_ROUTE.update({attr: (column, -1, None, False) for attr, column in semconv.PAYLOAD_COLUMNS.items()})

_INDEX = {name: index for index, name in enumerate(_PROMOTED_NAMES)}
_OPERATION, _TOOL_NAME, _PROVIDER = _INDEX["operation"], _INDEX["tool_name"], _INDEX["provider"]
_TOOL_CALL_ID = _INDEX["tool_call_id"]
_REQUEST_MODEL, _RESPONSE_MODEL = _INDEX["request_model"], _INDEX["response_model"]
_INPUT, _OUTPUT, _CACHE_READ, _CACHE_WRITE = (_INDEX[c] for c in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
_COST = _INDEX["cost_usd"]
# What a call's record holds that a second record of the same call must not count again.
_USAGE = (_INPUT, _OUTPUT, _CACHE_READ, _CACHE_WRITE, _INDEX["reasoning_tokens"], _COST)
_OWN_PREFIX = _OWN_SCOPE + "."
_CALL_OPERATIONS = dialects.MODEL_OPERATIONS | {"execute_tool"}
OWN_DIALECT = "agentotel"
DUPLICATE = "duplicate"
"""In `dialect` (`openinference+duplicate`, say): the writer saw another span of the same call in the same
batch, agentotel's own or the outer one, and left this one's token and cost columns empty (its attributes
keep them), so a plain sum over the files counts the call once."""


class SpanColumns:
    """Columns of span rows under construction; `append` one normalised span, then `to_batch()`.

    Timestamps are integer nanoseconds since the epoch; ids are lower-case hex strings; kind and
    status are their OTel SDK names (CLIENT, ERROR, ...). Never raises on attribute values.
    """

    # The fixed fields of a span are kept as one tuple per row and transposed once in `to_batch`; the
    # attribute map is kept flat (keys, values, offsets) and promoted columns sparse (rows, values), so
    # a span costs one append per attribute and `to_batch` builds each Arrow column from a plain list.

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._rows: list[tuple] = []
        self._keys: list[str] = []
        self._values: list[str] = []
        self._offsets: list[int] = [0]
        self._promoted_rows: list[list[int]] = [[] for _ in _PROMOTED_NAMES]
        self._promoted_values: list[list[Any]] = [[] for _ in _PROMOTED_NAMES]
        self._dialects: list[str | None] = []
        # (row, trace, span, parent, start, end, attributes, own) of each model or tool call: what
        # `to_batch` finds two records of one call by (the rest of what it needs, it reads then).
        self._calls: list[tuple] = []
        self._foreign_calls = 0  # only a batch with another instrumentation's call can hold two records of one
        self.payload_chars = 0  # characters in the input/output values appended so far: what a caller chunks by

    def __len__(self) -> int:
        return len(self._rows)

    def append(
        self,
        *,
        trace_id: str,
        span_id: str,
        parent_span_id: str | None,
        name: str,
        kind: str,
        status_code: str,
        status_message: str | None,
        start_time_ns: int,
        end_time_ns: int,
        attributes: Mapping[str, Any] | None,
        resource_attributes: Mapping[str, Any] | None,
        encoded_resource: list[tuple[str, str]] | None = None,
        scope_name: str | None,
        scope_version: str | None,
        events: Sequence[tuple[int, str, Mapping[str, Any] | None]] = (),
        links: Sequence[tuple[str, str, Mapping[str, Any] | None]] = (),
    ) -> None:
        """Add one span. `encoded_resource` lets a caller reuse one resource's map entries across spans."""
        self.append_values(
            trace_id, span_id, parent_span_id, name, kind, status_code, status_message, start_time_ns, end_time_ns,
            attributes, resource_attributes, encoded_resource, scope_name, scope_version, events, links,
        )  # fmt: skip

    def append_values(
        self,
        trace_id: str,
        span_id: str,
        parent_span_id: str | None,
        name: str,
        kind: str,
        status_code: str,
        status_message: str | None,
        start_time_ns: int,
        end_time_ns: int,
        attributes: Mapping[str, Any] | None,
        resource_attributes: Mapping[str, Any] | None,
        encoded_resource: list[tuple[str, str]] | None,
        scope_name: str | None,
        scope_version: str | None,
        events: Sequence[tuple[int, str, Mapping[str, Any] | None]],
        links: Sequence[tuple[str, str, Mapping[str, Any] | None]],
    ) -> None:
        """`append` with positional arguments, in that order: a hot loop saves most of a call's cost."""
        service = (resource_attributes or {}).get(SERVICE_NAME)
        payload_in = payload_out = None
        if attributes:
            row = len(self._rows)
            keys, values = self._keys, self._values
            promoted_rows, promoted_values = self._promoted_rows, self._promoted_values
            route_get = _ROUTE.get
            for key, value in attributes.items():
                encoded = value if type(value) is str else None
                route = route_get(key)
                if route is not None:
                    column, index, promote, str_ok = route
                    if column is not None:  # a payload: the first one per column moves there
                        if encoded is None:
                            encoded = encode_value(value)
                        if column == "input":
                            if payload_in is None:
                                payload_in = encoded
                                continue
                        elif payload_out is None:
                            payload_out = encoded
                            continue
                    else:  # promoted: a typed copy in its column, and the attribute stays in the map
                        promoted_rows[index].append(row)
                        promoted_values[index].append(value if (str_ok and encoded is not None) else promote(value))
                keys.append(key)
                values.append(encode_value(value) if encoded is None else encoded)
        row = len(self._rows)
        own = scope_name is not None and (scope_name.startswith(_OWN_PREFIX) or scope_name == _OWN_SCOPE)
        if own:
            self._dialects.append(OWN_DIALECT)
        elif attributes:
            payload_in, payload_out = self._normalise(
                row, attributes, name, kind, scope_name, status_code, events, payload_in, payload_out
            )
        else:
            self._dialects.append(None)
        operation_rows = self._promoted_rows[_OPERATION]
        if operation_rows and operation_rows[-1] == row and self._promoted_values[_OPERATION][-1] in _CALL_OPERATIONS:
            self._calls.append((row, trace_id, span_id, parent_span_id or None, start_time_ns, end_time_ns, attributes, own))
            if not own:
                self._foreign_calls += 1
        self._offsets.append(len(self._keys))
        if payload_in is not None:
            self.payload_chars += len(payload_in)
        if payload_out is not None:
            self.payload_chars += len(payload_out)
        self._rows.append(
            (
                trace_id,
                span_id,
                parent_span_id or None,
                name,
                kind,
                status_code,
                status_message or None,
                start_time_ns,
                end_time_ns,
                end_time_ns - start_time_ns if start_time_ns and end_time_ns else None,
                None if service is None else encode_value(service),
                scope_name or None,
                scope_version or None,
                payload_in,
                payload_out,
                encoded_resource if encoded_resource is not None else encode_attributes(resource_attributes),
                [{"time": t, "name": n, "attributes": encode_attributes(a)} for t, n, a in events] if events else [],
                [{"trace_id": t, "span_id": s, "attributes": encode_attributes(a)} for t, s, a in links] if links else [],
            )
        )

    def _value(self, index: int, row: int) -> Any:
        """The row's value in promoted column `index` (None when it has none)."""
        rows = self._promoted_rows[index]
        return self._promoted_values[index][-1] if rows and rows[-1] == row else None

    def _normalise(
        self, row: int, attributes: Mapping[str, Any], name: str, kind: str, scope_name: str | None, status_code: str,
        events: Sequence[tuple[int, str, Mapping[str, Any] | None]], payload_in: str | None, payload_out: str | None,
    ) -> tuple[str | None, str | None]:
        """Fill the promoted columns another instrumentation's attributes mean (store/dialects.py), and cost."""
        derived = dialects.derive(attributes, name, kind, scope_name, status_code, events)
        if derived is None:
            self._dialects.append(None)
            return payload_in, payload_out
        self._dialects.append(derived.dialect)
        for key, value in derived.attributes.items():  # what the span means in GenAI attributes it lacks
            self._keys.append(key)
            self._values.append(value)
        promoted_rows, promoted_values = self._promoted_rows, self._promoted_values
        for column, value in derived.columns.items():
            index = _INDEX.get(column)
            if index is None or (promoted_rows[index] and promoted_rows[index][-1] == row):
                continue  # the span's GenAI attribute says it already
            value = _PROMOTED_BY_INDEX[index](value)
            if value is not None:
                promoted_rows[index].append(row)
                promoted_values[index].append(value)
        operation = self._value(_OPERATION, row)
        if operation == dialects.TOOL_OPERATION and (payload_in is not None or payload_out is not None):
            # GenAI tool attributes set by another instrumentation may hold the framework's wrapper.
            payload_in, payload_out = dialects.tool_arguments(payload_in), dialects.tool_result(payload_out)
        if derived.input_from is not None and payload_in is not None:
            payload_in = self._reroute(attributes, derived.input_from, payload_in)
        if derived.mends:
            payload_in = self._mend(attributes, "input", payload_in, derived.input)
            payload_out = self._mend(attributes, "output", payload_out, derived.output)
        if payload_in is None:
            payload_in = derived.input
        if payload_out is None:
            payload_out = derived.output
        if operation is not None and operation not in dialects.MODEL_OPERATIONS:
            # An agent or tool span's usage is the sum of its model calls: counted there, not again here.
            for index in _USAGE:
                if promoted_rows[index] and promoted_rows[index][-1] == row:
                    promoted_rows[index].pop()
                    promoted_values[index].pop()
        elif operation is not None and self._value(_COST, row) is None:
            self._cost(row)
        return payload_in, payload_out

    def _mend(self, attributes: Mapping[str, Any], column: str, payload: str | None, mended: str | None) -> str | None:
        """The mended payload in the column, and the span's own back in its attribute map: nothing it sent is lost."""
        if payload is None or mended is None:
            return payload if payload is not None else mended
        displaced = _payload_key(attributes, column)
        if displaced is not None:
            self._keys.append(displaced)
            self._values.append(payload)
        return mended

    def _reroute(self, attributes: Mapping[str, Any], wanted: str, payload_in: str) -> str:
        """`wanted`'s value (kept in this row's attribute map) as the input, and the payload attribute that took
        its place back in the map in its stead: each stays in one place, so the span still rebuilds from its row."""
        displaced = _payload_key(attributes, "input")
        keys, values = self._keys, self._values
        for i in range(self._offsets[-1] if self._offsets else 0, len(keys)):
            if keys[i] == wanted and displaced is not None and displaced != wanted:
                value, keys[i], values[i] = values[i], displaced, payload_in
                return value
        return payload_in

    def _cost(self, row: int) -> None:
        input_tokens = self._value(_INPUT, row)
        if input_tokens is None:
            return
        from agentotel.cost import cost_usd  # imported here: the store must not need the price data to load

        try:
            cost = cost_usd(
                self._value(_PROVIDER, row),
                self._value(_RESPONSE_MODEL, row) or self._value(_REQUEST_MODEL, row),
                input_tokens=input_tokens,
                output_tokens=self._value(_OUTPUT, row) or 0,
                cache_read_tokens=self._value(_CACHE_READ, row) or 0,
                cache_write_tokens=self._value(_CACHE_WRITE, row) or 0,
            )
        except Exception:  # noqa: BLE001 - a price problem must never cost the span
            cost = None
        if cost is not None:
            self._promoted_rows[_COST].append(row)
            self._promoted_values[_COST].append(cost)

    def _duplicates(self) -> set[int]:
        """The rows that are a second record of a call another row of this batch records (`duplicate_calls`)."""
        def column(index: int) -> dict[int, Any]:
            return dict(zip(self._promoted_rows[index], self._promoted_values[index]))

        operation, tool, inputs, outputs = column(_OPERATION), column(_TOOL_NAME), column(_INPUT), column(_OUTPUT)
        call_ids = column(_TOOL_CALL_ID)
        calls = []
        for row, trace_id, span_id, parent, start, end, attributes, own in self._calls:
            model = operation.get(row) in dialects.MODEL_OPERATIONS
            response_id = (attributes or {}).get(semconv.GEN_AI_RESPONSE_ID) if model else None
            calls.append((row, trace_id, span_id, parent, start, end, "model" if model else tool.get(row),
                          inputs.get(row), outputs.get(row), response_id, own, None if model else call_ids.get(row)))
        return duplicate_calls(calls)

    def to_batch(self, *, inputs: list[str | None] | None = None, outputs: list[str | None] | None = None) -> pa.RecordBatch:
        """The appended spans as one record batch of `SPAN_SCHEMA`; the builder is left empty.

        With `inputs` (a list), the rows' `input` values are appended to it instead, as they are (`storable`
        gives what Arrow holds of each), and the batch's input column is NULL: for `StoreWriter.append(inputs=)`,
        which stores each conversation once without first converting all of it to Arrow and back. With
        `outputs` (a list), the rows' `output` values are appended to it as the column holds them (for
        `StoreWriter.append(outputs=)`, which looks for them in later inputs without reading them back).
        """
        rows, keys, values, offsets = self._rows, self._keys, self._values, self._offsets
        promoted_rows, promoted_values = self._promoted_rows, self._promoted_values
        dialect_of = self._dialects
        duplicates = self._duplicates() if self._foreign_calls and len(self._calls) > 1 else ()
        self._reset()
        for row in duplicates:
            dialect_of[row] = f"{dialect_of[row]}+{DUPLICATE}" if dialect_of[row] else DUPLICATE
        n = len(rows)
        columns: dict[str, pa.Array] = {}
        transposed = list(zip(*rows)) if rows else [[] for _ in range(18)]
        for (name, arrow), values_of in zip(_HEAD, transposed[:13]):
            columns[name] = _array(list(values_of), arrow)
        for name, arrow, at, got in zip(_PROMOTED_NAMES, _PROMOTED_TYPES, promoted_rows, promoted_values):
            if len(at) == n:  # on every span (run id, user): the values are the column
                dense = got
            else:
                dense = [None] * n
                for row, value in zip(at, got):
                    dense[row] = value
            if duplicates and name in _USAGE_NAMES:
                dense = list(dense)
                for row in duplicates:
                    dense[row] = None
            columns[name] = _array(dense, arrow)
        columns["dialect"] = _array(dialect_of, pa.string())
        if inputs is None:
            columns["input"] = _array(list(transposed[13]), pa.string())
        else:
            if rows:
                inputs.extend(transposed[13])
            columns["input"] = pa.nulls(n, pa.string())
        output = list(transposed[14])
        try:
            columns["output"] = pa.array(output, pa.string())
        except (pa.ArrowException, UnicodeError, TypeError, ValueError, OverflowError):
            # Rare: a value Arrow cannot hold (a lone surrogate), repaired in the column (`storable`), so too in `outputs`.
            columns["output"], output = _array(output, pa.string()), [storable(v) for v in output]
        if outputs is not None:
            outputs.extend(output)
        columns["attributes"] = _map(offsets, keys, values)
        columns["resource_attributes"] = _shared(transposed[15], STRING_MAP) if rows else _array([], STRING_MAP)
        columns["events"] = _array(list(transposed[16]), SPAN_SCHEMA.field("events").type)
        columns["links"] = _array(list(transposed[17]), SPAN_SCHEMA.field("links").type)
        for name, arrow in CONVERSATION:  # filled by the writer, which knows the earlier calls (messages.py)
            columns[name] = pa.nulls(n, arrow)
        return pa.RecordBatch.from_arrays([columns[name] for name in SPAN_SCHEMA.names], schema=SPAN_SCHEMA)


_USAGE_NAMES = frozenset(_PROMOTED_NAMES[index] for index in _USAGE)


def _overlap(a: tuple, b: tuple) -> bool:
    return a[4] <= b[5] and b[4] <= a[5]


def duplicate_calls(calls: Sequence[tuple]) -> set[int]:
    """The rows that are a second record of a model, tool or agent call another row of the batch records.

    `calls`: (row, trace, span, parent, start, end, what was called ("model", a tool's name, or a key naming
    it: `tool:<name>`, `agent:<name>`), input tokens, output tokens, response id, whether agentotel recorded
    it, tool call id). One call recorded twice, by agentotel and another instrumentation or by two others,
    shows as: the same response id in one trace; a call span directly inside another of the same kind (the
    same tool); or siblings that overlap in time with the same token counts. Another instrumentation's
    record of a call agentotel recorded need not sit next to ours (LangChain callbacks open their spans
    beside the client's, not around them), so against an agentotel record it is also a twin anywhere in
    the trace when it is a tool call with the same call id (with none: of the same tool, inside ours in time), a
    model call overlapping in time with the same token counts, or an agent span of the same agent inside ours. Kept: agentotel's own record, else the
    outer one, else the earliest. The query views apply the same rules across batches
    (query/sql/_duplicate_spans.sql).
    """
    by_span = {(c[1], c[2]): c for c in calls}
    duplicates: set[int] = set()
    for c in calls:  # nested
        parent = by_span.get((c[1], c[3])) if c[3] else None
        if parent is None or parent[6] != c[6] or c[6] is None:
            continue
        if c[10] and not parent[10]:
            duplicates.add(parent[0])
        elif not c[10]:
            duplicates.add(c[0])
    ours: dict[tuple, list[tuple]] = {}
    for c in calls:
        if c[10] and c[6] is not None:
            ours.setdefault((c[1], c[6]), []).append(c)
    if ours:
        for c in calls:  # another instrumentation's record of a call agentotel recorded, wherever it sits
            if c[10] or c[6] is None or c[0] in duplicates:
                continue
            if any(_twin_of_ours(c, k) for k in ours.get((c[1], c[6]), ())):
                duplicates.add(c[0])
    groups: dict[tuple, list[tuple]] = {}
    for c in calls:
        if c[6] == "model":
            if c[9] is not None:
                groups.setdefault((c[1], "id", c[9]), []).append(c)
            if c[7] is not None and c[8] is not None:
                groups.setdefault((c[1], c[3], c[7], c[8]), []).append(c)
    for key, members in groups.items():
        if len(members) < 2:
            continue
        members.sort(key=lambda c: (not c[10], c[4], c[2]))
        # Each record against the records kept before it, pair by pair: a run of calls with equal token counts
        # (a scripted model, one prompt asked again) is many calls, each recorded twice.
        kept: list[tuple] = []
        for m in members:
            twin = next((k for k in kept if not (m[10] and k[10])
                         # two calls that got the same counts (a fan-out of one prompt) have their own ids
                         and not (m[9] is not None and k[9] is not None and m[9] != k[9])
                         and (key[1] == "id" or _overlap(m, k))), None)
            if twin is not None:
                duplicates.add(m[0])
            elif m[0] not in duplicates:
                kept.append(m)
    return duplicates


def _twin_of_ours(c: tuple, k: tuple) -> bool:
    """Whether another instrumentation's call `c` is a second record of agentotel's call `k` (the same thing
    called, in one trace): see duplicate_calls."""
    if c[6] == "model":
        return (c[7] is not None and c[7] == k[7] and c[8] == k[8] and _overlap(c, k)
                and not (c[9] is not None and k[9] is not None and c[9] != k[9]))
    if c[6].startswith("agent:"):
        return k[4] <= c[4] and c[5] <= k[5]
    if c[11] is None:  # no call id (an MCP server's span of the call, from its own process): inside ours in time
        return k[4] <= c[4] and c[5] <= k[5]
    return c[11] == k[11]


def _map(offsets: list[int], keys: list[str], values: list[str]) -> pa.Array:
    """A map<string, string> column from its flat entries: far cheaper than converting lists of pairs."""
    try:
        return pa.MapArray.from_arrays(
            pa.array(offsets, type=pa.int32()), _array(keys, pa.string()), _array(values, pa.string()), type=STRING_MAP
        )
    except (pa.ArrowException, TypeError, ValueError):
        # A key Arrow cannot hold even after repair (not a string): convert span by span, as pairs.
        pairs = list(zip(keys, values))
        return _array([pairs[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)], STRING_MAP)


def _shared(values: Sequence[Any], arrow: pa.DataType) -> pa.Array:
    """A column whose rows mostly share one object (every span of a provider has one resource): convert each once."""
    index: dict[int, int] = {}
    unique: list[Any] = []
    positions = []
    for value in values:
        key = id(value)
        position = index.get(key)
        if position is None:
            position = index[key] = len(unique)
            unique.append(value)
        positions.append(position)
    if len(unique) == len(values):
        return _array(list(values), arrow)
    return _array(unique, arrow).take(pa.array(positions, type=pa.int32()))


def _array(values: list[Any], arrow: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=arrow)
    except (pa.ArrowException, UnicodeError, TypeError, ValueError, OverflowError):
        # Rare: a string Arrow cannot hold (lone surrogates from undecodable bytes) or an out-of-range
        # number; repair the column value by value instead of losing the batch.
        try:
            return pa.array([_repair(v) for v in values], type=arrow)
        except (pa.ArrowException, UnicodeError, TypeError, ValueError, OverflowError):
            # Unreachable for the normalised values SpanColumns builds; never fail the whole batch anyway.
            return pa.array([_or_none(v, arrow) for v in values], type=arrow)


def storable(value: Any) -> str | None:
    """A payload as a string column stores it (`_array`): a string Arrow cannot hold (lone surrogates) repaired."""
    if value is None or (type(value) is str and value.isascii()):  # isascii is O(1): most need no look at all
        return value
    if type(value) is str:
        try:
            value.encode("utf-8")
            return value
        except UnicodeError:
            pass
    return _or_none(_repair(value), pa.string())


def _or_none(value: Any, arrow: pa.DataType) -> Any:
    try:
        pa.array([value], type=arrow)
        return value
    except (pa.ArrowException, UnicodeError, TypeError, ValueError, OverflowError):
        return None


def _payload_key(attributes: Mapping[str, Any], column: str) -> str | None:
    """The span's attribute that went to payload column `column`."""
    return next((k for k in attributes if (_ROUTE.get(k) or (None,))[0] == column), None)


def _repair(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return None
    if isinstance(value, dict):
        return {k: _repair(v) for k, v in value.items()}
    if isinstance(value, tuple):  # map entries are (key, value) tuples and must stay tuples
        return tuple(_repair(v) for v in value)
    if isinstance(value, list):
        return [_repair(v) for v in value]
    return value


def payload_attribute(operation: str | None, column: str, span_attributes: Iterable[str] = ()) -> str | None:
    """Which payload attribute a span's `input`/`output` column came from, for rebuilding the span.

    A span carries at most one payload attribute per column; its operation's span group in the
    registry says which one it is.
    """
    group = semconv.SPAN_ATTRIBUTES.get(f"span.agentotel.{operation}", ())
    for attr in group:
        if semconv.PAYLOAD_COLUMNS.get(attr) == column:
            return attr
    return None


def renormalise(table: pa.Table) -> pa.Table:
    """Rows written before the dialect rules (schema version 1), brought up to date: the promoted columns
    other instrumentations' attributes mean filled in, `dialect` set, cost computed, and a second record
    of a call within the table marked (store/dialects.py). What was stored stays where it was set.

    `table` has SPAN_SCHEMA's columns (conformed). Costs a Python pass over the rows: it runs once per
    old file, when `agentotel compact` rewrites it (readers upgrade old files in memory meanwhile).
    """
    if table.num_rows == 0:
        return table
    table = table.combine_chunks()
    read = table.select(["trace_id", "span_id", "parent_span_id", "name", "kind", "status_code", "scope_name",
                         "attributes", "events"])
    # Event times as integers: a nanosecond timestamp is no Python datetime (to_pylist would refuse it).
    events_type = read.schema.field("events").type
    plain_times = pa.list_(pa.struct([(f.name, pa.int64()) if f.name == "time" else f for f in events_type.value_type]))
    read = read.set_column(read.schema.get_field_index("events"), "events", read.column("events").cast(plain_times))
    starts = table.column("start_time").cast(pa.int64()).to_pylist()
    ends = table.column("end_time").cast(pa.int64()).to_pylist()
    columns = SpanColumns()
    for i, row in enumerate(read.to_pylist()):
        attributes = dict(row["attributes"] or ())
        events = [(0, e["name"], dict(e["attributes"] or ())) for e in row["events"] or ()]
        columns.append_values(
            row["trace_id"], row["span_id"], row["parent_span_id"], row["name"], row["kind"], row["status_code"], None,
            starts[i] or 0, ends[i] or 0, attributes, {}, [], row["scope_name"], None, events, (),
        )
    fresh = columns.to_batch()
    out = []
    for field in SPAN_SCHEMA:
        old = table.column(field.name)
        if field.name == "dialect" or field.name in _USAGE_NAMES:
            # Usage re-read from the attributes, so a second record of a call and an agent span's sum drop out.
            out.append(fresh.column(field.name))
        elif field.name in _PROMOTED_NAMES or field.name in ("input", "output"):
            out.append(pa.compute.coalesce(old.chunk(0) if old.num_chunks else old, fresh.column(field.name)))
        else:
            out.append(old)
    return pa.Table.from_arrays(out, schema=SPAN_SCHEMA)


def conform(table: pa.Table) -> pa.Table:
    """The table with exactly SPAN_SCHEMA's columns: matched by name, cast, missing ones as nulls."""
    columns = []
    for f in SPAN_SCHEMA:
        if f.name in table.column_names:
            column = table.column(f.name)
            try:
                columns.append(column.cast(f.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:  # say which column: a foreign file's
                raise type(exc)(f"its column {f.name} ({column.type}) cannot be read as {f.type}: {exc}") from exc
        else:
            columns.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(columns, schema=SPAN_SCHEMA)


IDENTITY_COLUMNS = ("trace_id", "span_id", "start_time")  # a table without one of these holds no spans of any run


def not_spans(names: Sequence[str]) -> str | None:
    """Why a table with these columns is no span table (another tool's output in spans/), or None."""
    missing = [name for name in IDENTITY_COLUMNS if name not in names]
    if not missing:
        return None
    return f"not a span table: it has no {', '.join(missing)} column{'s' if len(missing) > 1 else ''}"


def foreign_columns(file_schema: pa.Schema) -> list[str]:
    """The columns of a file's schema that SPAN_SCHEMA lacks, or has with another type (another tool's
    file, or one rewritten with other types): DuckDB cannot read such a file together with the store's."""
    return [f.name for f in file_schema
            if SPAN_SCHEMA.get_field_index(f.name) < 0 or not f.type.equals(SPAN_SCHEMA.field(f.name).type)]


def file_version(metadata: Mapping[bytes, bytes] | None) -> int:
    """The schema version a Parquet file's key-value metadata names (0: none, a file another tool rewrote)."""
    raw = (metadata or {}).get(METADATA_KEY)
    return int(raw) if raw is not None else 0


def upgrade(table: pa.Table, version: int) -> pa.Table:
    """Rows of an older schema version as the current writer would store them (every input whole: version 3's
    columns NULL; `agentotel compact` stores their conversations once)."""
    table = conform(table)
    return renormalise(table) if version < 2 else table
