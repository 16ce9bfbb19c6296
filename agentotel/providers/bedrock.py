"""How to read AWS Bedrock Runtime through botocore: Converse, ConverseStream, InvokeModel (with and without stream).

botocore builds its client methods at run time, so the patch sits on the one method they all call,
`BaseClient._make_api_call(operation_name, api_params)`: a call to another service or operation
passes straight through (one dictionary look-up by client class). boto3 goes through it, and
aiobotocore's client overrides it with an `async def` of its own, patched alike when aiobotocore is
imported: the same spans, its event streams behind the async stream proxy and its InvokeModel body
behind `_AsyncBody`.

InvokeModel bodies are read per model family, from the model id (an inference-profile prefix such as
`us.` and an ARN's path are looked through) or, for an id that names none, from the body's shape:
Anthropic Messages (read as the anthropic adapter reads them), Amazon Nova (the Converse shape),
Amazon Titan, Meta Llama, Mistral (prompt and chat forms), Cohere Command and Command R, and the old
Claude text completions. The response body is read once and handed back as a fresh stream with the
same bytes. Token counts missing from a body come from Bedrock's own counts (response headers, or
the stream's `amazon-bedrock-invocationMetrics`).

Tool calls (`toolUse`, Anthropic `tool_use`, Command R `tool_calls`) become pending tool calls of the
run, so a later `@agentotel.tool` links to them.
"""

from __future__ import annotations

import io
import json
from typing import Any

import wrapt

from agentotel._internal import report_internal_error
from agentotel.providers._bedrock_converse import PROVIDER, BedrockRequest, ConverseStream, converse_request, converse_response
from agentotel.providers._bedrock_invoke import InvokeStream, body_of, body_request, body_response, family_of
from agentotel.providers._core import ABANDONED_STREAM, ModelCall, Patch, field_of, server_attributes
from agentotel.providers._stream import AsyncIterableProxy, StreamProxy
from agentotel.semconv import GEN_AI_REQUEST_STREAM

_OPERATIONS = {"Converse": False, "ConverseStream": True, "InvokeModel": False, "InvokeModelWithResponseStream": True}


# --- The patch -------------------------------------------------------------------------------------------------

_bedrock_clients: dict[type, bool] = {}


def _request(instance: Any, kwargs: dict[str, Any]) -> BedrockRequest | None:
    cls = type(instance)
    bedrock = _bedrock_clients.get(cls)
    if bedrock is None:
        bedrock = _bedrock_clients[cls] = instance.meta.service_model.service_name == "bedrock-runtime"
    operation = kwargs.get("operation_name")
    if not bedrock or operation not in _OPERATIONS:
        return None
    params = kwargs.get("api_params") or {}
    model = params.get("modelId")
    stream = _OPERATIONS[operation]
    attributes = server_attributes(getattr(instance.meta, "endpoint_url", None))
    if stream:
        attributes[GEN_AI_REQUEST_STREAM] = True
    # Positional (operation, provider, model, attributes, stream, input messages, system instructions, tool
    # definitions, operation name): a class called with keywords gets them as a dict first, which costs
    # more than the rest of its constructor (every Bedrock call).
    request = BedrockRequest("chat", PROVIDER, model if isinstance(model, str) else None, attributes, stream, None, None, None, operation)
    try:
        if operation.startswith("Converse"):
            converse_request(params, attributes, request)
        else:
            body = body_of(params)
            request.family = family_of(request.model or "", body)
            if isinstance(body, dict):
                body_request(body, request.family, attributes, request)
    except Exception as exc:  # noqa: BLE001 - a body we cannot read: the call is still traced
        report_internal_error("providers.bedrock_request", exc)
    return request


def _header_counts(result: Any) -> tuple[int | None, int | None]:
    headers = field_of(field_of(result, "ResponseMetadata"), "HTTPHeaders") or {}

    def count(name: str) -> int | None:
        value = headers.get(name)
        return int(value) if isinstance(value, str) and value.isdigit() else None

    return count("x-amzn-bedrock-input-token-count"), count("x-amzn-bedrock-output-token-count")


def _returned(call: ModelCall, result: Any) -> Any:
    """What the caller gets: the result, its stream behind our proxy, or its body re-readable."""
    request: BedrockRequest = call.request  # type: ignore[assignment]
    operation = request.operation_name
    if operation == "Converse":
        call.finish(call.read_response(result))
        return result
    if operation == "ConverseStream":
        result["stream"] = StreamProxy(result["stream"], call, ConverseStream(request))
        return result
    if operation == "InvokeModelWithResponseStream":
        result["body"] = StreamProxy(result["body"], call, InvokeStream(request))
        return result
    # InvokeModel: read the body once, give the caller the same bytes as a fresh stream.
    from botocore.response import StreamingBody

    try:
        data = result["body"].read()
    except BaseException as exc:  # the body could not be read: the call failed after all
        call.finish(error=exc)
        raise
    result["body"] = StreamingBody(io.BytesIO(data), len(data))
    call.finish(_body_response(data, request, _header_counts(result)))
    return result


def _body_response(data: bytes, request: BedrockRequest, counts: tuple[int | None, int | None]) -> Any:
    try:
        return body_response(json.loads(data), request.family, counts)
    except Exception as exc:  # noqa: BLE001
        report_internal_error("providers.bedrock_response", exc)
        return None


# --- aiobotocore ---------------------------------------------------------------------------------------------


def _returned_async(call: ModelCall, result: Any) -> Any:
    """aiobotocore's result: event streams behind the async proxy, InvokeModel's body read as the caller reads it."""
    request: BedrockRequest = call.request  # type: ignore[assignment]
    operation = request.operation_name
    if operation == "Converse":
        call.finish(call.read_response(result))
    elif operation == "ConverseStream":
        result["stream"] = AsyncIterableProxy(result["stream"], call, ConverseStream(request))
    elif operation == "InvokeModelWithResponseStream":
        result["body"] = AsyncIterableProxy(result["body"], call, InvokeStream(request))
    else:
        # An async body cannot be read here (this runs inside the awaited call, before the caller has
        # it): the proxy keeps what the caller reads and records the response when the body ends.
        result["body"] = _AsyncBody(result["body"], call, _header_counts(result))
    return result


class _AsyncBody(wrapt.ObjectProxy):
    """aiobotocore's InvokeModel body, unchanged for the caller; the span ends with what it read.

    It ends at the end of the body (a `read()` of everything, or an empty read), on `close()` /
    `aclose()` / `async with`, or when the body is collected (unread: `abandoned_stream`). The
    body's own helpers (`iter_chunks`, `iter_lines`, `async for`) run with this proxy as `self`, so
    they read through it.
    """

    def __init__(self, wrapped: Any, call: ModelCall, counts: tuple[int | None, int | None]) -> None:
        super().__init__(wrapped)
        self._self_call = call
        self._self_counts = counts
        self._self_read: list[bytes] = []

    def _self_end(self, whole: bool = False, abandoned: bool = False) -> None:
        call = self._self_call
        if call.ended:
            return
        data = b"".join(self._self_read)
        if not whole:  # closed or dropped: whole only if all the announced bytes were read
            length = getattr(self.__wrapped__, "_content_length", None)
            whole = length is not None and str(length).isdigit() and int(length) == len(data) > 0
        response = _body_response(data, call.request, self._self_counts) if whole else None  # type: ignore[arg-type]
        call.finish(response, error_kind=ABANDONED_STREAM if abandoned and not whole else None)

    async def read(self, amt: int | None = None) -> bytes:
        try:
            chunk = await self.__wrapped__.read(amt)
        except BaseException as exc:
            self._self_call.finish(error=exc)
            raise
        self._self_read.append(chunk)
        if amt is None or amt < 0 or (not chunk and amt > 0):
            self._self_end(whole=True)
        return chunk

    async def readinto(self, b: Any) -> int:
        try:
            count = await self.__wrapped__.readinto(b)
        except BaseException as exc:
            self._self_call.finish(error=exc)
            raise
        self._self_read.append(bytes(memoryview(b)[:count]))
        if count == 0 and len(b) > 0:
            self._self_end(whole=True)
        return count

    def close(self) -> Any:
        try:
            return self.__wrapped__.close()
        finally:
            self._self_end()

    async def aclose(self) -> Any:
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._self_end()

    # The body's own helpers, read through this proxy (they call `self.read` / `self.aclose`).
    def iter_chunks(self, *args: Any, **kwargs: Any) -> Any:
        return type(self.__wrapped__).iter_chunks(self, *args, **kwargs)

    def iter_lines(self, *args: Any, **kwargs: Any) -> Any:
        return type(self.__wrapped__).iter_lines(self, *args, **kwargs)

    async def readlines(self) -> Any:
        return await type(self.__wrapped__).readlines(self)

    def __aiter__(self) -> Any:
        return type(self.__wrapped__).__aiter__(self)

    async def __anext__(self) -> Any:
        return await type(self.__wrapped__).__anext__(self)

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        await self.aclose()

    def __del__(self) -> None:
        call = getattr(self, "_self_call", None)
        if call is not None and not call.ended:
            self._self_end(abandoned=True)


PATCHES = [
    Patch(
        "botocore.client", "BaseClient._make_api_call", _request, converse_response,
        positional=("operation_name", "api_params"), returned=_returned,
    ),
    # aiobotocore's client overrides the method with its own `async def` (applied when it is imported).
    Patch(
        "aiobotocore.client", "AioBaseClient._make_api_call", _request, converse_response,
        positional=("operation_name", "api_params"), returned=_returned_async,
    ),
]  # fmt: skip
