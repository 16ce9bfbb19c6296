"""OTLP protobuf spans → store rows: agentotel's own conversion (agentotel/store/otlp.py), shared with `agentotel import`."""

from agentotel.store.otlp import Converted, InvalidRequest, TooManySpans, convert, parse_protobuf

__all__ = ["Converted", "InvalidRequest", "TooManySpans", "convert", "parse_protobuf"]
