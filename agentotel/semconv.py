"""Attribute names agentotel emits and reads.

GENERATED from semconv/registry/*.yaml - do not edit; regenerate with `python semconv/generate.py`.
"""

from __future__ import annotations

from typing import Final, Mapping

AGENTOTEL_RUN_ID: Final = "agentotel.run.id"
"""The run's identifier (the given run_id, else a new UUID). (string, development)"""

AGENTOTEL_RUN_NAME: Final = "agentotel.run.name"
"""The name the run was given in `agentotel.run(name)`. (string, development)"""

AGENTOTEL_RUN_TRIGGER: Final = "agentotel.run.trigger"
"""What started the run. When not given, inferred - `ci` when a CI variable is set, `cli` on an interactive terminal, else `api`. (string, development)"""

AGENTOTEL_RUN_PARENT_ID: Final = "agentotel.run.parent_id"
"""The run id of the enclosing run, on a nested (sub-agent) run's root span. (string, development)"""

AGENTOTEL_RUN_METADATA: Final = "agentotel.run.metadata"
"""User metadata given to `run()`, as a JSON object. (string, development)"""

AGENTOTEL_RUN_TASK: Final = "agentotel.run.task"
"""The task the run was given, as JSON. Content; absent when capture is off. (string, development)"""

AGENTOTEL_RUN_OUTPUT: Final = "agentotel.run.output"
"""The result the run recorded (`run.output = ...`), as JSON. Content; absent when capture is off. (string, development)"""

AGENTOTEL_REPLAY_CASE: Final = "agentotel.replay.case"
"""The regression case a replayed run was served from. Every span of a replay carries it; agentotel's exporters keep such spans out of the store (a replay is recorded in its own store, `<store>/replays/`). (string, development)"""

AGENTOTEL_REPLAY_FROZEN: Final = "agentotel.replay.frozen"
"""The step was answered from the case's recording (a frozen tool result or model answer), not run. (boolean, development)"""

AGENTOTEL_REPLAY_RECORDED_COST_USD: Final = "agentotel.replay.recorded_cost.usd"
"""What the recorded answer a replayed model call was served cost when it was recorded; the replayed call itself costs 0. (double, development)"""

AGENTOTEL_COST_USD: Final = "agentotel.cost.usd"
"""The cost of the call in US dollars, from the price library or the user's override. Absent (never 0) when the model's price is unknown. (double, development)"""

AGENTOTEL_PAYLOAD_TRUNCATED: Final = "agentotel.payload.truncated"
"""True when some payload on the span was cut to the size limits. (boolean, development)"""

AGENTOTEL_PAYLOAD_REDACTIONS: Final = "agentotel.payload.redactions"
"""How many secrets the content policy replaced in the span's payload. (int, development)"""

AGENTOTEL_REQUEST_TOOL_CHOICE: Final = "agentotel.request.tool_choice"
"""How the model was told to use the tools offered - `auto`, `none`, `required`, or a named tool as JSON. Absent when the request left it to the provider's default. `agentotel diff` compares it as a request parameter. (string, development)"""

AGENTOTEL_TOOL_SCHEMA_HASH: Final = "agentotel.tool.schema_hash"
"""SHA-256 (hex, first 16 characters) of the tool's canonical JSON schema. (string, development)"""

AGENTOTEL_TOOL_SERVER: Final = "agentotel.tool.server"
"""The server that ran the tool, when a client called it on one (an MCP server's name). (string, development)"""

AGENTOTEL_TOOL_ERROR_COUNT: Final = "agentotel.tool.error_count"
"""Reserved for detectors; number of errors a tool raised in a run. (int, development)"""

AGENTOTEL_ENV_HASH: Final = "agentotel.env.hash"
"""Hash of the whole environment snapshot, to group runs by identical environment. (string, development)"""

AGENTOTEL_ENV_SNAPSHOT: Final = "agentotel.env.snapshot"
"""The full environment snapshot as JSON, redacted by the content policy. Facts and names only (versions, hashes, file paths, credential names), never payload content, so it is recorded even when content capture is off. Read it back with `agentotel.environment.snapshot_from_attributes`. (string, development)"""

AGENTOTEL_ENV_COMMIT: Final = "agentotel.env.commit"
"""The git commit of the working directory. (string, development)"""

AGENTOTEL_ENV_BRANCH: Final = "agentotel.env.branch"
"""The git branch of the working directory. (string, development)"""

AGENTOTEL_ENV_DIRTY: Final = "agentotel.env.dirty"
"""Whether the working tree has uncommitted changes. From a `git status` run in the background at run start; set at run end, absent when git is missing or too slow (the snapshot's `missing` says why). (boolean, development)"""

AGENTOTEL_ENV_LOCKFILE_PATH: Final = "agentotel.env.lockfile.path"
"""The lockfile found, relative to the repository root. (string, development)"""

AGENTOTEL_ENV_LOCKFILE_HASH: Final = "agentotel.env.lockfile.hash"
"""SHA-256 of the lockfile. (string, development)"""

AGENTOTEL_ENV_PACKAGES_HASH: Final = "agentotel.env.packages.hash"
"""Hash of the installed Python distributions and their versions. (string, development)"""

AGENTOTEL_ENV_CONFIG_HASH: Final = "agentotel.env.config.hash"
"""Hash of the agent configuration files (AGENTS.md, CLAUDE.md, ...). (string, development)"""

AGENTOTEL_ENV_TOOL_SCHEMAS_HASH: Final = "agentotel.env.tool_schemas.hash"
"""Hash of the tool schemas known when the run started. (string, development)"""

AGENTOTEL_ENV_OS_IMAGE: Final = "agentotel.env.os.image"
"""OS image identity, `/etc/os-release` id and version or the platform name. (string, development)"""

AGENTOTEL_ENV_PYTHON_VERSION: Final = "agentotel.env.python.version"
"""Python implementation and version. (string, development)"""

AGENTOTEL_ENV_SANDBOX_ID: Final = "agentotel.env.sandbox.id"
"""Container or sandbox identity when detectable. (string, development)"""

AGENTOTEL_STREAM_ABANDONED: Final = "agentotel.stream.abandoned"
"""True when the caller stopped reading a streamed response before its end (a `break`) and the run went on normally. Not an error: the span keeps the chunks read so far and ends when the caller stopped. A stream left by an exception that failed the run, or never read at all, ends as `error.type=abandoned_stream`. (boolean, development)"""

GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
"""The name of the operation being performed. (string, development)"""

GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
"""The GenAI provider as identified by the client instrumentation. (string, development)"""

GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
"""The name of the model a request is being made to. (string, development)"""

GEN_AI_REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
"""The maximum number of tokens the model generates for a request. (int, development)"""

GEN_AI_REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
"""The temperature setting for the request. (double, development)"""

GEN_AI_REQUEST_TOP_P: Final = "gen_ai.request.top_p"
"""The top_p sampling setting for the request. (double, development)"""

GEN_AI_REQUEST_TOP_K: Final = "gen_ai.request.top_k"
"""The top_k sampling setting for the request. (double, development)"""

GEN_AI_REQUEST_FREQUENCY_PENALTY: Final = "gen_ai.request.frequency_penalty"
"""The frequency penalty setting for the request. (double, development)"""

GEN_AI_REQUEST_PRESENCE_PENALTY: Final = "gen_ai.request.presence_penalty"
"""The presence penalty setting for the request. (double, development)"""

GEN_AI_REQUEST_STOP_SEQUENCES: Final = "gen_ai.request.stop_sequences"
"""List of sequences that the model uses to stop generating further tokens. (string[], development)"""

GEN_AI_REQUEST_SEED: Final = "gen_ai.request.seed"
"""Requests with the same seed value are more likely to return the same result. (int, development)"""

GEN_AI_REQUEST_CHOICE_COUNT: Final = "gen_ai.request.choice.count"
"""The target number of candidate completions to return. Only recorded when it is not 1. (int, development)"""

GEN_AI_REQUEST_ENCODING_FORMATS: Final = "gen_ai.request.encoding_formats"
"""The encoding formats requested in an embeddings operation. (string[], development)"""

GEN_AI_REQUEST_STREAM: Final = "gen_ai.request.stream"
"""Whether the response was requested as a stream. (boolean, development)"""

GEN_AI_OUTPUT_TYPE: Final = "gen_ai.output.type"
"""Represents the content type requested by the client. (string, development)"""

GEN_AI_EMBEDDINGS_DIMENSION_COUNT: Final = "gen_ai.embeddings.dimension.count"
"""The number of dimensions the resulting output embeddings should have. (int, development)"""

GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
"""The unique identifier for the completion. (string, development)"""

GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
"""The name of the model that generated the response. (string, development)"""

GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
"""Array of reasons the model stopped generating tokens, one per choice. (string[], development)"""

GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK: Final = "gen_ai.response.time_to_first_chunk"
"""Seconds from the request to the first chunk of a streamed response. (double, development)"""

GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
"""The number of tokens used in the GenAI input (prompt), cache reads and writes included. (int, development)"""

GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
"""The number of tokens used in the GenAI response (completion), reasoning included. (int, development)"""

GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
"""The number of input tokens served from a provider-managed cache. (int, development)"""

GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
"""The number of input tokens written to a provider-managed cache. (int, development)"""

GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: Final = "gen_ai.usage.reasoning.output_tokens"
"""The number of output tokens spent on reasoning. (int, development)"""

GEN_AI_TOKEN_TYPE: Final = "gen_ai.token.type"
"""The type of token being counted (a metric attribute). (string, development)"""

GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
"""The unique identifier for a conversation (session, thread). (string, development)"""

GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
"""Human-readable name of the GenAI agent provided by the application. (string, development)"""

GEN_AI_AGENT_ID: Final = "gen_ai.agent.id"
"""The unique identifier of the GenAI agent. (string, development)"""

GEN_AI_AGENT_DESCRIPTION: Final = "gen_ai.agent.description"
"""Free-form description of the GenAI agent provided by the application. (string, development)"""

GEN_AI_AGENT_VERSION: Final = "gen_ai.agent.version"
"""The version of the agent, as `name@version` when the user gives one. (string, development)"""

GEN_AI_DATA_SOURCE_ID: Final = "gen_ai.data_source.id"
"""The data source identifier of a retrieval. (string, development)"""

GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
"""Name of the tool utilized by the agent. (string, development)"""

GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
"""The tool call identifier the model gave when it asked for this call. (string, development)"""

GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
"""Type of the tool utilized by the agent. (string, development)"""

GEN_AI_TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
"""The tool description. (string, development)"""

GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
"""Parameters passed to the tool call, as JSON. Content; absent when capture is off. (string, development)"""

GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
"""The result returned by the tool call, as JSON. Content; absent when capture is off. (string, development)"""

GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
"""The chat history provided to the model, as JSON in the GenAI input-messages shape. Content; absent when capture is off. (string, development)"""

GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
"""Messages returned by the model, as JSON in the GenAI output-messages shape. Content; absent when capture is off. (string, development)"""

GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
"""The system message or instructions given to the model apart from the chat history, as JSON parts. Content; absent when capture is off. (string, development)"""

GEN_AI_TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
"""The list of tool definitions available to the model, as JSON. Content; absent when capture is off. (string, development)"""

GEN_AI_RETRIEVAL_QUERY_TEXT: Final = "gen_ai.retrieval.query.text"
"""The query text of a retrieval. Content; absent when capture is off. (string, development)"""

GEN_AI_RETRIEVAL_DOCUMENTS: Final = "gen_ai.retrieval.documents"
"""The documents a retrieval returned, as JSON (id, score and, when capture is on, content). (string, development)"""

ERROR_TYPE: Final = "error.type"
"""Describes a class of error the operation ended with. The exception's fully qualified class name when an exception ended the span. (string, stable)"""

ENDUSER_ID: Final = "enduser.id"
"""Unique identifier of the person or service that started the run. (string, development)"""

SERVER_ADDRESS: Final = "server.address"
"""GenAI server address (host name or IP). (string, stable)"""

SERVER_PORT: Final = "server.port"
"""GenAI server port. (int, stable)"""

# Metric instrument names.
METRIC_GEN_AI_CLIENT_TOKEN_USAGE: Final = "gen_ai.client.token.usage"
"""Number of input and output tokens used, by gen_ai.token.type. (histogram, {token})"""

METRIC_GEN_AI_CLIENT_OPERATION_DURATION: Final = "gen_ai.client.operation.duration"
"""GenAI operation duration. (histogram, s)"""

METRIC_AGENTOTEL_CLIENT_COST: Final = "agentotel.client.cost"
"""Cost of model calls in US dollars. (counter, USD)"""

METRIC_AGENTOTEL_SPANS_DROPPED: Final = "agentotel.spans.dropped"
"""Spans dropped because the embedded exporter's queue was full and did not drain in time. (counter, {span})"""

ATTRIBUTE_TYPES: Final[Mapping[str, str]] = {
    AGENTOTEL_RUN_ID: "string",
    AGENTOTEL_RUN_NAME: "string",
    AGENTOTEL_RUN_TRIGGER: "string",
    AGENTOTEL_RUN_PARENT_ID: "string",
    AGENTOTEL_RUN_METADATA: "string",
    AGENTOTEL_RUN_TASK: "string",
    AGENTOTEL_RUN_OUTPUT: "string",
    AGENTOTEL_REPLAY_CASE: "string",
    AGENTOTEL_REPLAY_FROZEN: "boolean",
    AGENTOTEL_REPLAY_RECORDED_COST_USD: "double",
    AGENTOTEL_COST_USD: "double",
    AGENTOTEL_PAYLOAD_TRUNCATED: "boolean",
    AGENTOTEL_PAYLOAD_REDACTIONS: "int",
    AGENTOTEL_REQUEST_TOOL_CHOICE: "string",
    AGENTOTEL_TOOL_SCHEMA_HASH: "string",
    AGENTOTEL_TOOL_SERVER: "string",
    AGENTOTEL_TOOL_ERROR_COUNT: "int",
    AGENTOTEL_ENV_HASH: "string",
    AGENTOTEL_ENV_SNAPSHOT: "string",
    AGENTOTEL_ENV_COMMIT: "string",
    AGENTOTEL_ENV_BRANCH: "string",
    AGENTOTEL_ENV_DIRTY: "boolean",
    AGENTOTEL_ENV_LOCKFILE_PATH: "string",
    AGENTOTEL_ENV_LOCKFILE_HASH: "string",
    AGENTOTEL_ENV_PACKAGES_HASH: "string",
    AGENTOTEL_ENV_CONFIG_HASH: "string",
    AGENTOTEL_ENV_TOOL_SCHEMAS_HASH: "string",
    AGENTOTEL_ENV_OS_IMAGE: "string",
    AGENTOTEL_ENV_PYTHON_VERSION: "string",
    AGENTOTEL_ENV_SANDBOX_ID: "string",
    AGENTOTEL_STREAM_ABANDONED: "boolean",
    GEN_AI_OPERATION_NAME: "string",
    GEN_AI_PROVIDER_NAME: "string",
    GEN_AI_REQUEST_MODEL: "string",
    GEN_AI_REQUEST_MAX_TOKENS: "int",
    GEN_AI_REQUEST_TEMPERATURE: "double",
    GEN_AI_REQUEST_TOP_P: "double",
    GEN_AI_REQUEST_TOP_K: "double",
    GEN_AI_REQUEST_FREQUENCY_PENALTY: "double",
    GEN_AI_REQUEST_PRESENCE_PENALTY: "double",
    GEN_AI_REQUEST_STOP_SEQUENCES: "string[]",
    GEN_AI_REQUEST_SEED: "int",
    GEN_AI_REQUEST_CHOICE_COUNT: "int",
    GEN_AI_REQUEST_ENCODING_FORMATS: "string[]",
    GEN_AI_REQUEST_STREAM: "boolean",
    GEN_AI_OUTPUT_TYPE: "string",
    GEN_AI_EMBEDDINGS_DIMENSION_COUNT: "int",
    GEN_AI_RESPONSE_ID: "string",
    GEN_AI_RESPONSE_MODEL: "string",
    GEN_AI_RESPONSE_FINISH_REASONS: "string[]",
    GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK: "double",
    GEN_AI_USAGE_INPUT_TOKENS: "int",
    GEN_AI_USAGE_OUTPUT_TOKENS: "int",
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: "int",
    GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: "int",
    GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: "int",
    GEN_AI_TOKEN_TYPE: "string",
    GEN_AI_CONVERSATION_ID: "string",
    GEN_AI_AGENT_NAME: "string",
    GEN_AI_AGENT_ID: "string",
    GEN_AI_AGENT_DESCRIPTION: "string",
    GEN_AI_AGENT_VERSION: "string",
    GEN_AI_DATA_SOURCE_ID: "string",
    GEN_AI_TOOL_NAME: "string",
    GEN_AI_TOOL_CALL_ID: "string",
    GEN_AI_TOOL_TYPE: "string",
    GEN_AI_TOOL_DESCRIPTION: "string",
    GEN_AI_TOOL_CALL_ARGUMENTS: "string",
    GEN_AI_TOOL_CALL_RESULT: "string",
    GEN_AI_INPUT_MESSAGES: "string",
    GEN_AI_OUTPUT_MESSAGES: "string",
    GEN_AI_SYSTEM_INSTRUCTIONS: "string",
    GEN_AI_TOOL_DEFINITIONS: "string",
    GEN_AI_RETRIEVAL_QUERY_TEXT: "string",
    GEN_AI_RETRIEVAL_DOCUMENTS: "string",
    ERROR_TYPE: "string",
    ENDUSER_ID: "string",
    SERVER_ADDRESS: "string",
    SERVER_PORT: "int",
}
"""Every registered attribute with its registry type (string, int, double, boolean, string[])."""

PROMOTED_COLUMNS: Final[Mapping[str, tuple[str, str]]] = {
    AGENTOTEL_RUN_ID: ("run_id", "string"),
    AGENTOTEL_COST_USD: ("cost_usd", "float64"),
    GEN_AI_OPERATION_NAME: ("operation", "string"),
    GEN_AI_PROVIDER_NAME: ("provider", "string"),
    GEN_AI_REQUEST_MODEL: ("request_model", "string"),
    GEN_AI_RESPONSE_MODEL: ("response_model", "string"),
    GEN_AI_RESPONSE_FINISH_REASONS: ("finish_reasons", "list<string>"),
    GEN_AI_USAGE_INPUT_TOKENS: ("input_tokens", "int64"),
    GEN_AI_USAGE_OUTPUT_TOKENS: ("output_tokens", "int64"),
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: ("cache_read_tokens", "int64"),
    GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: ("cache_write_tokens", "int64"),
    GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: ("reasoning_tokens", "int64"),
    GEN_AI_CONVERSATION_ID: ("session_id", "string"),
    GEN_AI_AGENT_NAME: ("agent_name", "string"),
    GEN_AI_TOOL_NAME: ("tool_name", "string"),
    GEN_AI_TOOL_CALL_ID: ("tool_call_id", "string"),
    ERROR_TYPE: ("error_type", "string"),
    ENDUSER_ID: ("user_id", "string"),
}
"""Attribute -> (store column, Arrow type): typed copies of these attributes in the span row."""

PAYLOAD_COLUMNS: Final[Mapping[str, str]] = {
    AGENTOTEL_RUN_TASK: "input",
    AGENTOTEL_RUN_OUTPUT: "output",
    GEN_AI_TOOL_CALL_ARGUMENTS: "input",
    GEN_AI_TOOL_CALL_RESULT: "output",
    GEN_AI_INPUT_MESSAGES: "input",
    GEN_AI_OUTPUT_MESSAGES: "output",
    GEN_AI_RETRIEVAL_QUERY_TEXT: "input",
    GEN_AI_RETRIEVAL_DOCUMENTS: "output",
}
"""Payload attribute -> the store column (input or output) it moves to. A span carries at most one of each."""

SPAN_ATTRIBUTES: Final[Mapping[str, tuple[str, ...]]] = {
    "span.agentotel.invoke_agent": (GEN_AI_OPERATION_NAME, GEN_AI_AGENT_NAME, AGENTOTEL_RUN_ID, AGENTOTEL_RUN_NAME, AGENTOTEL_RUN_TRIGGER, AGENTOTEL_RUN_PARENT_ID, ENDUSER_ID, GEN_AI_CONVERSATION_ID, GEN_AI_AGENT_VERSION, AGENTOTEL_RUN_TASK, AGENTOTEL_RUN_OUTPUT, AGENTOTEL_RUN_METADATA, AGENTOTEL_ENV_HASH, AGENTOTEL_ENV_SNAPSHOT, ERROR_TYPE,),
    "span.agentotel.chat": (GEN_AI_OPERATION_NAME, GEN_AI_PROVIDER_NAME, GEN_AI_REQUEST_MODEL, SERVER_ADDRESS, SERVER_PORT, GEN_AI_REQUEST_MAX_TOKENS, GEN_AI_REQUEST_TEMPERATURE, GEN_AI_REQUEST_TOP_P, GEN_AI_REQUEST_STOP_SEQUENCES, GEN_AI_REQUEST_SEED, GEN_AI_REQUEST_CHOICE_COUNT, GEN_AI_REQUEST_STREAM, AGENTOTEL_REQUEST_TOOL_CHOICE, GEN_AI_RESPONSE_ID, GEN_AI_RESPONSE_MODEL, GEN_AI_RESPONSE_FINISH_REASONS, GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, AGENTOTEL_STREAM_ABANDONED, GEN_AI_USAGE_INPUT_TOKENS, GEN_AI_USAGE_OUTPUT_TOKENS, GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, AGENTOTEL_COST_USD, GEN_AI_INPUT_MESSAGES, GEN_AI_OUTPUT_MESSAGES, GEN_AI_SYSTEM_INSTRUCTIONS, GEN_AI_TOOL_DEFINITIONS, ERROR_TYPE,),
    "span.agentotel.embeddings": (GEN_AI_OPERATION_NAME, GEN_AI_PROVIDER_NAME, GEN_AI_REQUEST_MODEL, GEN_AI_REQUEST_ENCODING_FORMATS, GEN_AI_EMBEDDINGS_DIMENSION_COUNT, GEN_AI_USAGE_INPUT_TOKENS, AGENTOTEL_COST_USD, ERROR_TYPE,),
    "span.agentotel.execute_tool": (GEN_AI_OPERATION_NAME, GEN_AI_TOOL_NAME, GEN_AI_TOOL_TYPE, GEN_AI_TOOL_DESCRIPTION, GEN_AI_TOOL_CALL_ID, AGENTOTEL_TOOL_SCHEMA_HASH, AGENTOTEL_TOOL_SERVER, GEN_AI_TOOL_CALL_ARGUMENTS, GEN_AI_TOOL_CALL_RESULT, ERROR_TYPE,),
    "span.agentotel.retrieval": (GEN_AI_OPERATION_NAME, GEN_AI_DATA_SOURCE_ID, GEN_AI_RETRIEVAL_QUERY_TEXT, GEN_AI_RETRIEVAL_DOCUMENTS, ERROR_TYPE,),
}
"""Span group id -> the attributes it references, from semconv/registry/spans.yaml."""
