"""The OTLP/JSON mapping: requests in (agentotel's own parser, agentotel/store/otlp.py, shared with
`agentotel import`), responses out."""

from __future__ import annotations

import json

from google.protobuf import json_format
from google.protobuf.message import Message

from agentotel.store.otlp import JsonError, parse_request

__all__ = ["JsonError", "dump_message", "parse_request"]


def dump_message(message: Message) -> bytes:
    """A response message in OTLP/JSON (camelCase names, 64-bit integers as strings)."""
    return json.dumps(
        json_format.MessageToDict(message, preserving_proto_field_name=False), separators=(",", ":")
    ).encode()
