// A Node.js agent on the Vercel AI SDK (npm `ai`, `@ai-sdk/openai`), traced by the OpenTelemetry Node SDK
// and exported over OTLP/HTTP protobuf: MODEL_URL is the scripted model server, OTLP_URL agentotel-collector.
import { NodeSDK } from "@opentelemetry/sdk-node";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { generateText, streamText, tool, stepCountIs } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { z } from "zod";

const sdk = new NodeSDK({
  serviceName: "weather-node",
  traceExporter: new OTLPTraceExporter({ url: process.env.OTLP_URL }),
});
sdk.start();

const openai = createOpenAI({ baseURL: process.env.MODEL_URL, apiKey: "test-key" });
// STREAM=1: streamText (the model's replies streamed) instead of generateText.
const run = process.env.STREAM === "1" ? streamText : generateText;
const result = run({
  model: openai.chat("gpt-4o-mini"),
  prompt: process.env.PROMPT || "What is the weather in Paris?",
  tools: {
    get_weather: tool({
      description: "Weather in a city.",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => `sunny in ${city}`,
    }),
  },
  stopWhen: stepCountIs(3),
  experimental_telemetry: { isEnabled: true, functionId: "weather", metadata: { userId: "carol", sessionId: "s-9" } },
});
console.log(await (await result).text);
// streamText ends its outer span once the stream's last step is handled, a tick after the text resolves.
await new Promise((resolve) => setTimeout(resolve, 50));
await sdk.shutdown();
