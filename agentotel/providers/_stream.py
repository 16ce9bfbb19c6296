"""The one stream proxy (sync and async) and the proxies for raw responses and stream managers.

A streamed model call's span outlives the call that started it, so the proxy owns it and finishes
it exactly once (`ModelCall.finish` is idempotent), whichever way the stream ends: exhausted,
`close()` (on the stream or on its `.response`), `with` left normally or by `break` or an exception,
an error while reading, or a stream left unread: at its run's end or its garbage collection (below).

A plain `for` loop (no `with`) left early cannot tell a `break` from an exception in the loop's body:
the interpreter closes the loop's iterator while that exception unwinds, but stashes it first, so
neither the iterator's `GeneratorExit` nor the proxy's `__del__` can see it. The run can: such a
stream ends when its run ends (or when it is collected), at the time its reader left, as an error
(`abandoned_stream`) only when the run failed or no chunk was read, else with
`agentotel.stream.abandoned` (a deliberate `break`). Inside `with`, `__exit__` gets the exception.

No OTel context is attached while the user iterates, so no context token can ever be detached in a
different context (the async-generator finaliser bug): the span is only ended, never (de)activated.
"""

from __future__ import annotations

import inspect
from typing import Any

import wrapt
from opentelemetry import context as otel_context

from agentotel import _config
from agentotel._internal import internal_errors, report_internal_error
from agentotel.providers._core import ABANDONED_STREAM, Accumulator, ModelCall, Patch


def limits() -> tuple[int, int]:
    """How many characters of streamed text and of tool-call arguments to keep.

    Text: the per-value limit, or nothing when capture is off. Arguments are kept (in memory) even
    with capture off: `@tool` spans match on them.
    """
    settings = _config.current()
    return (settings.max_value_bytes if settings.capture_content else 0), settings.max_value_bytes


class Bounded:
    """Text assembled from stream deltas, kept up to `limit` characters.

    Per delta only an append while under the limit (the last one kept may run past it); the cut to
    exactly `limit` characters happens once, in `text()`. Memory stays within the limit plus a delta.
    A cut text is flagged truncated where it is encoded: cut to the per-value limit, its message no
    longer fits the limit and is fitted (content.Payload). The fields are public so that an
    accumulator's per-chunk path can do what `add` does inline.
    """

    __slots__ = ("parts", "size", "limit")

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit

    def add(self, text: str | None) -> None:
        if text and self.size < self.limit:
            self.parts.append(text)
            self.size += len(text)

    def text(self) -> str:
        text = "".join(self.parts)
        return text[: self.limit] if self.size > self.limit else text

    def __bool__(self) -> bool:
        return self.size > 0


def is_stream(value: Any) -> bool:
    return hasattr(value, "__next__") or hasattr(value, "__anext__")


def is_raw_response(value: Any) -> bool:
    return hasattr(value, "http_response") and callable(getattr(value, "parse", None))


def is_wrapped(value: Any) -> bool:
    return isinstance(value, (StreamProxy, RawResponseProxy, ManagerProxy))


def wrap_stream(stream: Any, call: ModelCall, patch: Patch) -> Any:
    if patch.accumulator is None:
        call.finish()
        return stream
    return StreamProxy(stream, call, patch.accumulator(call.request))


def wrap_raw_response(raw: Any, call: ModelCall, patch: Patch) -> Any:
    """`with_raw_response` / `with_streaming_response`: `.parse()`, `.headers` and the rest unchanged."""
    http_response = getattr(raw, "http_response", None)
    if not call.request.stream and getattr(http_response, "is_closed", False):
        # The body is already read (with_raw_response): parse now. The SDK caches the parsed value,
        # so the user's own `.parse()` returns this same object.
        parsed = raw.parse()
        if not inspect.isawaitable(parsed):
            call.finish(call.read_response(parsed))
            return raw
        parsed.close()  # an async parse we cannot await here: the proxy reads it when the user does
    return RawResponseProxy(raw, call, patch)


def wrap_manager(manager: Any, call: ModelCall, patch: Patch) -> Any:
    return ManagerProxy(manager, call, patch)


class StreamProxy(wrapt.ObjectProxy):
    """A provider stream (sync or async) that feeds an accumulator and finishes the call's span once."""

    def __init__(self, wrapped: Any, call: ModelCall, accumulator: Accumulator) -> None:
        super().__init__(wrapped)
        self._self_call = call
        self._self_accumulator = accumulator

    # -- hooks ------------------------------------------------------------------------------------
    def _self_chunk(self, chunk: Any) -> None:
        call = self._self_call
        if call.first_chunk is None:
            call.chunk_seen()
        try:  # per chunk: a plain try is far cheaper than the internal_errors context manager
            self._self_accumulator.chunk(chunk)
        except Exception as exc:  # noqa: BLE001 - telemetry must never break the user's loop
            report_internal_error("providers.stream_chunk", exc)

    def _self_end(self, error: BaseException | None = None, kind: str | None = None, abandoned: bool = False) -> None:
        call = self._self_call
        if abandoned:
            kind = ABANDONED_STREAM
        if call.ended:
            return
        try:  # once per stream, on the user's path: a plain try (the internal_errors context manager costs more)
            response = self._self_accumulator.response()
        except Exception as exc:  # noqa: BLE001
            report_internal_error("providers.stream_end", exc)
            response = None
        call.finish(response, error, kind)

    # -- sync ------------------------------------------------------------------------------------------
    def __iter__(self) -> Any:
        # A generator over the wrapped stream's own iterator: much cheaper per chunk than a Python
        # `__next__` per step. A generator closed early (the loop left by `break`) is not the end of
        # the stream: the user may iterate on, and close() / `with` / GC end the span.
        # An accumulator with its own `iterate` reads each chunk inline there (the same contract).
        iterate = getattr(self._self_accumulator, "iterate", None)
        if iterate is not None:
            return iterate(self.__wrapped__, self._self_call, self._self_end)
        return self._self_iterate()

    def _self_iterate(self) -> Any:
        # Per chunk only the accumulator's own call: the first-chunk time is taken once, before the loop.
        call, add = self._self_call, self._self_accumulator.chunk
        try:
            chunks = iter(self.__wrapped__)
            if call.first_chunk is None:
                for chunk in chunks:
                    call.chunk_seen()
                    try:
                        add(chunk)
                    except Exception as exc:  # noqa: BLE001 - telemetry must never break the user's loop
                        report_internal_error("providers.stream_chunk", exc)
                    yield chunk
                    break
            for chunk in chunks:
                try:
                    add(chunk)
                except Exception as exc:  # noqa: BLE001
                    report_internal_error("providers.stream_chunk", exc)
                yield chunk
        except GeneratorExit:
            call.stopped_reading(self._self_end)
            raise
        except BaseException as exc:
            self._self_end(exc)
            raise
        self._self_end()

    def __next__(self) -> Any:
        try:
            chunk = self.__wrapped__.__next__()
        except StopIteration:
            self._self_end()
            raise
        except BaseException as exc:
            self._self_end(exc)
            raise
        self._self_chunk(chunk)
        return chunk

    def __enter__(self) -> Any:
        self.__wrapped__.__enter__()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        if exc is not None:
            self._self_end(exc)
        try:
            return self.__wrapped__.__exit__(exc_type, exc, tb)
        finally:
            self._self_end()

    def close(self) -> Any:
        result = self.__wrapped__.close()
        if inspect.isawaitable(result):
            return self._self_after(result)
        self._self_end()
        return result

    # -- async -----------------------------------------------------------------------------------------
    def __aiter__(self) -> Any:
        return self

    def _self_events(self) -> Any:
        """What `__anext__` reads the next chunk from."""
        return self.__wrapped__

    async def __anext__(self) -> Any:
        try:
            chunk = await self._self_events().__anext__()
        except StopAsyncIteration:
            self._self_end()
            raise
        except BaseException as exc:
            self._self_end(exc)
            raise
        self._self_chunk(chunk)
        return chunk

    async def __aenter__(self) -> Any:
        await self.__wrapped__.__aenter__()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        if exc is not None:
            self._self_end(exc)
        try:
            return await self.__wrapped__.__aexit__(exc_type, exc, tb)
        finally:
            self._self_end()

    async def aclose(self) -> Any:
        return await self.close()

    async def _self_after(self, awaitable: Any) -> Any:
        try:
            return await awaitable
        finally:
            self._self_end()

    # -- the SDK helpers (ChatCompletionStream, ResponseStream) close through `.response.close()` --------
    @property
    def response(self) -> Any:
        return _ClosingResponse(self.__wrapped__.response, self)

    def __del__(self) -> None:
        call = getattr(self, "_self_call", None)
        if call is not None and not call.ended:
            self._self_end(kind=ABANDONED_STREAM)


class AsyncIterableProxy(StreamProxy):
    """A stream read with `async for` whose `__anext__` is no awaitable step of its own.

    aiobotocore's event stream defines `__anext__` as an async generator function (its `__aiter__`
    returns a fresh generator from it), so the proxy reads its events from the one iterator that
    `__aiter__` gives, made on the first event.
    """

    def __init__(self, wrapped: Any, call: ModelCall, accumulator: Accumulator) -> None:
        super().__init__(wrapped, call, accumulator)
        self._self_iterator: Any = None

    def _self_events(self) -> Any:
        if self._self_iterator is None:
            self._self_iterator = self.__wrapped__.__aiter__()
        return self._self_iterator


class _ClosingResponse(wrapt.ObjectProxy):
    """The stream's HTTP response; closing it ends the stream's span."""

    def __init__(self, wrapped: Any, stream: StreamProxy) -> None:
        super().__init__(wrapped)
        self._self_stream = stream

    def close(self) -> Any:
        try:
            return self.__wrapped__.close()
        finally:
            self._self_stream._self_end()

    async def aclose(self) -> Any:
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._self_stream._self_end()


class RawResponseProxy(wrapt.ObjectProxy):
    """A raw API response whose `.parse()` records the response (or hands the span to a stream proxy)."""

    def __init__(self, wrapped: Any, call: ModelCall, patch: Patch) -> None:
        super().__init__(wrapped)
        self._self_call = call
        self._self_patch = patch
        self._self_streams: dict[int, StreamProxy] = {}

    def parse(self, *args: Any, **kwargs: Any) -> Any:
        parsed = self.__wrapped__.parse(*args, **kwargs)
        if inspect.isawaitable(parsed):
            return self._self_parse_async(parsed)
        return self._self_parsed(parsed)

    async def _self_parse_async(self, awaitable: Any) -> Any:
        return self._self_parsed(await awaitable)

    def _self_parsed(self, parsed: Any) -> Any:
        with internal_errors("providers.raw_parse"):
            if is_stream(parsed):
                proxy = self._self_streams.get(id(parsed))
                if proxy is None and not self._self_call.ended:
                    proxy = self._self_streams[id(parsed)] = wrap_stream(parsed, self._self_call, self._self_patch)
                return proxy if proxy is not None else parsed
            self._self_call.finish(self._self_call.read_response(parsed))
        return parsed

    def close(self) -> Any:
        result = self.__wrapped__.close()
        if inspect.isawaitable(result):
            return self._self_after(result)
        self._self_closed()
        return result

    async def _self_after(self, awaitable: Any) -> Any:
        try:
            return await awaitable
        finally:
            self._self_closed()

    def _self_closed(self) -> None:
        if not self._self_streams:
            self._self_call.finish()

    def __del__(self) -> None:
        call = getattr(self, "_self_call", None)
        if call is not None and not call.ended and not getattr(self, "_self_streams", None):
            call.finish(error_kind=ABANDONED_STREAM)


class ManagerProxy(wrapt.ObjectProxy):
    """A stream manager (anthropic `messages.stream`): the request runs in `__enter__`, under our span."""

    def __init__(self, wrapped: Any, call: ModelCall, patch: Patch) -> None:
        super().__init__(wrapped)
        self._self_call = call
        self._self_patch = patch
        self._self_stream: StreamProxy | None = None

    def __enter__(self) -> Any:
        call = self._self_call
        token = otel_context.attach(call.context())
        try:
            helper = self.__wrapped__.__enter__()
        except BaseException as exc:
            call.finish(error=exc)
            raise
        finally:
            otel_context.detach(token)
        self._self_adopt(helper)
        return helper

    async def __aenter__(self) -> Any:
        call = self._self_call
        token = otel_context.attach(call.context())
        try:
            helper = await self.__wrapped__.__aenter__()
        except BaseException as exc:
            call.finish(error=exc)
            raise
        finally:
            otel_context.detach(token)
        self._self_adopt(helper)
        return helper

    def _self_adopt(self, helper: Any) -> None:
        """Put our proxy under the helper's raw event stream (read lazily on its first event)."""
        with internal_errors("providers.stream_manager"):
            raw = getattr(helper, "_raw_stream", None)
            if raw is not None and not isinstance(raw, StreamProxy) and self._self_patch.accumulator is not None:
                proxy = StreamProxy(raw, self._self_call, self._self_patch.accumulator(self._self_call.request))
                helper._raw_stream = proxy
                self._self_stream = proxy

    def _self_done(self, error: BaseException | None) -> None:
        if self._self_stream is not None:
            self._self_stream._self_end(error)
        else:
            self._self_call.finish(error=error)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        if exc is not None:
            self._self_done(exc)
        try:
            return self.__wrapped__.__exit__(exc_type, exc, tb)
        finally:
            self._self_done(None)

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        if exc is not None:
            self._self_done(exc)
        try:
            return await self.__wrapped__.__aexit__(exc_type, exc, tb)
        finally:
            self._self_done(None)

    def __del__(self) -> None:
        call = getattr(self, "_self_call", None)
        if call is not None and not call.ended and getattr(self, "_self_stream", None) is None:
            call.finish(error_kind=ABANDONED_STREAM)
