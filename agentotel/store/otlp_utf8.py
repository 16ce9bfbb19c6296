"""OTLP protobuf requests whose strings hold invalid UTF-8: parsed anyway, each bad string repaired.

proto3 requires a `string` field to be UTF-8, and protobuf's parser refuses a whole request over one
bad byte in one attribute (a sender that cut text mid-character, or put raw bytes in a string). The
sender would be told its whole batch is malformed, and lose every good span in it. So a request the
strict parse refuses is parsed again as a mirror of the OTLP messages with every `string` field
declared `bytes` (the same wire format, so every other kind of damage is still refused); each string
that is not UTF-8 gets U+FFFD for its bad bytes, as `bytes.decode(errors="replace")` would, and the
repaired request is parsed strictly. Only refused requests pay for any of this.
"""

from __future__ import annotations

import functools
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def repaired(data: bytes) -> ExportTraceServiceRequest:
    """The request in `data` with every string made UTF-8; DecodeError when `data` is not a request even with
    its strings read as bytes, saying how it is damaged (not that a string is not UTF-8: that, it repairs)."""
    mirror, strings = _mirror()
    message = mirror.FromString(data)
    _repair(message, strings)
    data = message.SerializeToString()
    del message
    return ExportTraceServiceRequest.FromString(data)


def _repair(message: Any, strings: frozenset[str]) -> None:
    for field, value in message.ListFields():
        if field.message_type is not None:
            for child in value if field.is_repeated else (value,):
                _repair(child, strings)
        elif field.full_name in strings:
            if field.is_repeated:
                for i, text in enumerate(value):
                    if not _is_utf8(text):
                        value[i] = text.decode("utf-8", "replace").encode()
            elif not _is_utf8(value):
                setattr(message, field.name, value.decode("utf-8", "replace").encode())


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@functools.lru_cache(maxsize=1)
def _mirror() -> tuple[type, frozenset[str]]:
    """The request's message class in a pool of its own where every `string` field is `bytes`, and the
    full names of those fields. Built from the compiled descriptors when first needed (no protoc)."""
    pool = descriptor_pool.DescriptorPool()
    strings: set[str] = set()
    added: set[str] = set()

    def add(file: Any) -> None:
        if file.name in added:
            return
        added.add(file.name)
        for dependency in file.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        for message in proto.message_type:
            _bytes_for_strings(message, proto.package, strings)
        pool.Add(proto)

    add(ExportTraceServiceRequest.DESCRIPTOR.file)
    name = ExportTraceServiceRequest.DESCRIPTOR.full_name
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name)), frozenset(strings)


def _bytes_for_strings(message: descriptor_pb2.DescriptorProto, scope: str, strings: set[str]) -> None:
    full_name = f"{scope}.{message.name}" if scope else message.name
    for field in message.field:
        if field.type == FieldDescriptor.TYPE_STRING:
            field.type = FieldDescriptor.TYPE_BYTES
            strings.add(f"{full_name}.{field.name}")
    for nested in message.nested_type:
        _bytes_for_strings(nested, full_name, strings)
