"""How to read AWS Bedrock Runtime through botocore: Converse, ConverseStream, InvokeModel (with and without stream).

botocore builds its client methods at run time, so the patch sits on the one method they all call,
`BaseClient._make_api_call(operation_name, api_params)`: a call to another service or operation
passes straight through (one dictionary look-up by client class). boto3 and aiobotocore-free code
alike go through it.

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

from agentotel._internal import report_internal_error
from agentotel.providers._bedrock_converse import PROVIDER, BedrockRequest, ConverseStream, converse_request, converse_response
from agentotel.providers._bedrock_invoke import InvokeStream, body_of, body_request, body_response, family_of
from agentotel.providers._core import ModelCall, Patch, field_of, server_attributes
from agentotel.providers._stream import StreamProxy
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
    request = BedrockRequest(
        operation="chat", provider=PROVIDER, model=model if isinstance(model, str) else None,
        attributes=attributes, stream=stream, operation_name=operation,
    )  # fmt: skip
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
    response = None
    try:
        response = body_response(json.loads(data), request.family, _header_counts(result))
    except Exception as exc:  # noqa: BLE001
        report_internal_error("providers.bedrock_response", exc)
    call.finish(response)
    return result


PATCHES = [
    Patch(
        "botocore.client", "BaseClient._make_api_call", _request, converse_response,
        positional=("operation_name", "api_params"), returned=_returned,
    ),
]  # fmt: skip
