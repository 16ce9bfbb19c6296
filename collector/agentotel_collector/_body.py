"""Request bodies: bounded decompression (gzip, deflate, zstd); reading a body is the front door's (`_http`).

A compression bomb is stopped after producing at most `limit + 1` bytes, whatever the
compressed size claims, so memory per request stays within the configured limits.
"""

from __future__ import annotations

import io

import zstandard

# ISA-L's inflate, with zlib's interface: the same bounded decompression at 2.4x zlib's speed (a
# 512-span request with content, 3 MB of gzip, inflates in 15 ms of CPU instead of 36 ms).
from isal import isal_zlib as zlib

_CHUNK = 256 * 1024
# zstd frames may ask for a huge window; a legitimate OTLP sender never needs more than this.
_ZSTD_MAX_WINDOW = 32 * 1024 * 1024


class BodyError(ValueError):
    """A request body the collector will not use; `status` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def too_large(limit: int) -> BodyError:
    return BodyError(413, f"request body exceeds {limit} bytes after decompression")


def decompress(body: bytes, encoding: str, limit: int) -> bytes:
    """The decoded body for a Content-Encoding (identity, gzip, deflate, zstd); BodyError past `limit` bytes or when corrupt."""
    if encoding in ("", "identity"):
        if len(body) > limit:
            raise too_large(limit)
        return body
    if encoding in ("gzip", "x-gzip"):
        return _inflate(body, limit, "gzip", 16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        # HTTP's deflate is zlib-wrapped (RFC 9110 8.4.1.2; what OpenTelemetry's Python exporter sends
        # for OTEL_EXPORTER_OTLP_COMPRESSION=deflate); some clients send the bare deflate stream instead.
        try:
            return _inflate(body, limit, "deflate", zlib.MAX_WBITS)
        except BodyError as exc:
            if exc.status == 413:
                raise
            return _inflate(body, limit, "deflate", -zlib.MAX_WBITS)
    if encoding == "zstd":
        return _unzstd(body, limit)
    raise BodyError(415, f"unsupported Content-Encoding {encoding!r} (use gzip, deflate, zstd or none)")


def _inflate(body: bytes, limit: int, name: str, wbits: int) -> bytes:
    try:
        inflater = zlib.decompressobj(wbits)
        # The usual body is one gzip member: one call inflates it into the bytes that are returned,
        # with no intermediate copies (a 512-span request is tens of MB once inflated).
        out = inflater.decompress(body, limit + 1)
        if len(out) > limit:
            raise too_large(limit)
        if inflater.eof and not inflater.unused_data:
            return out
        buffer = bytearray(out)
        del out
        data = inflater.unconsumed_tail if not inflater.eof else inflater.unused_data
        # Otherwise: several members back to back (each gets a fresh decompressor), or a stream cut short.
        while True:
            while data and not inflater.eof:
                buffer += inflater.decompress(data, limit + 1 - len(buffer))
                if len(buffer) > limit:
                    raise too_large(limit)
                data = inflater.unconsumed_tail
            if not inflater.eof:
                raise BodyError(400, f"{name} body is truncated")
            data = inflater.unused_data
            if not data:
                return bytes(buffer)
            inflater = zlib.decompressobj(wbits)
    except zlib.error as exc:
        raise BodyError(400, f"{name} body is corrupt: {exc}") from None


def _unzstd(body: bytes, limit: int) -> bytes:
    out = bytearray()
    try:
        reader = zstandard.ZstdDecompressor(max_window_size=_ZSTD_MAX_WINDOW).stream_reader(
            io.BytesIO(body), read_across_frames=True
        )
        while True:
            chunk = reader.read(min(_CHUNK, limit + 1 - len(out)))
            if not chunk:
                break
            out += chunk
            if len(out) > limit:
                raise too_large(limit)
    except zstandard.ZstdError as exc:
        raise BodyError(400, f"zstd body is corrupt: {exc}") from None
    return bytes(out)

