// MCP servers that misbehave, for Hearth's MCP client tests: written with the official SDK, so
// what they do right is the real wire format and what they do wrong is on purpose.
//   node hostile.mjs tools      a server whose tools crash it, hang, or report progress
//   node hostile.mjs noisy      the same, after printing lines that are not MCP on stdout
//   node hostile.mjs garbage    prints only lines that are not MCP, then waits
//   node hostile.mjs silent     reads its input and never answers
//   node hostile.mjs exit       complains on stderr and exits with status 2 at start
//   node hostile.mjs kitchen    two plain tools for a chat's agent loop: find_item, and slow_search
//                               (answers after 60 s unless cancelled)
//   node hostile.mjs asks       book_table, which asks the user for the booking's details mid-call
//                               (elicitation) and answers with what it was given
//   node hostile.mjs links      link_account, which asks the user to open the bistro's page mid-call
//                               (elicitation by link) and says whether they did
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const mode = process.argv[2] ?? "tools";
const forever = () => setInterval(() => {}, 1 << 30);

if (mode === "exit") {
  console.error("fatal: the configuration file /nonexistent/config.json was not found");
  process.exit(2);
}
if (mode === "silent") {
  process.stdin.resume();
  forever();
} else if (mode === "garbage") {
  console.log("Welcome to a server that is not an MCP server");
  console.log("{ this is not json either");
  process.stdin.resume();
  forever();
} else {
  if (mode === "noisy") {
    console.log("starting up... (this line is not MCP)");
  }
  const server = new McpServer({ name: "hostile", version: "1.0.0" });
  if (mode === "asks") {
    server.registerTool(
      "book_table",
      { description: "Books a table at the bistro", inputSchema: { when: z.string() } },
      async ({ when }) => {
        const answer = await server.server.elicitInput({
          message: `To book the table for ${when}, the bistro needs:`,
          requestedSchema: {
            type: "object",
            properties: {
              name: { type: "string", title: "Your name" },
              guests: { type: "integer", title: "Guests", minimum: 1, maximum: 8, default: 2 },
              terrace: { type: "boolean", title: "On the terrace", default: false },
            },
            required: ["name"],
          },
        });
        const { name, guests, terrace } = answer.content ?? {};
        const text =
          answer.action === "accept" ? `Booked for ${name}: ${guests} guests, ${terrace ? "on the terrace" : "inside"}.` : `The booking was ${answer.action}d.`;
        return { content: [{ type: "text", text }] };
      },
    );
    await server.connect(new StdioServerTransport());
    await new Promise(() => {});
  }
  if (mode === "links") {
    server.registerTool(
      "link_account",
      { description: "Links the user's bistro account: they sign in on the bistro's own site", inputSchema: {} },
      async () => {
        const answer = await server.server.elicitInput({
          mode: "url",
          message: "Sign in on the bistro's site to link your account.",
          url: "https://bistro.example/link?session=7",
          elicitationId: "link-7",
        });
        const text = answer.action === "accept" ? "The user opened the bistro's page to link the account." : `The link was ${answer.action}d.`;
        return { content: [{ type: "text", text }] };
      },
    );
    await server.connect(new StdioServerTransport());
    await new Promise(() => {});
  }
  if (mode === "kitchen") {
    server.registerTool(
      "find_item",
      { description: "Says where an item is kept in the kitchen", inputSchema: { item: z.string() }, annotations: { readOnlyHint: true } },
      async ({ item }) => ({ content: [{ type: "text", text: `The ${item} is in the left cupboard.` }] }),
    );
    server.registerTool(
      "slow_search",
      { description: "Searches the whole house, slowly", inputSchema: { item: z.string() } },
      async (_args, extra) =>
        new Promise((resolve) => {
          const done = setTimeout(() => resolve({ content: [{ type: "text", text: "found nothing" }] }), 60000);
          extra.signal.addEventListener("abort", () => {
            clearTimeout(done);
            console.error("slow_search: cancelled by the client");
            resolve({ content: [{ type: "text", text: "cancelled" }] });
          });
        }),
    );
    await server.connect(new StdioServerTransport());
    await new Promise(() => {});
  }
  server.registerTool(
    "crash",
    { description: "Crashes the server mid-call", inputSchema: { why: z.string() } },
    async ({ why }) => {
      console.error(`panic: ${why}`);
      process.exit(3);
    },
  );
  server.registerTool(
    "hang",
    { description: "Never answers unless cancelled", inputSchema: {} },
    async (_args, extra) =>
      new Promise((resolve) => {
        extra.signal.addEventListener("abort", () => {
          console.error("hang: cancelled by the client");
          resolve({ content: [{ type: "text", text: "cancelled" }] });
        });
      }),
  );
  server.registerTool(
    "fail",
    { description: "A tool that reports an error", inputSchema: {} },
    async () => ({ isError: true, content: [{ type: "text", text: "the disk is full" }] }),
  );
  await server.connect(new StdioServerTransport());
}
