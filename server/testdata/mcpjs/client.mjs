// Drives trellis's /mcp endpoint with the official MCP TypeScript SDK's client: lists the
// assistants as tools, calls one statelessly with progress, twice on a thread, and checks that
// a wrong key is refused. Usage: node client.mjs <server URL> <API key>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { randomUUID } from "node:crypto";

const [base, key] = process.argv.slice(2);
if (!base || !key) {
  console.error("usage: node client.mjs <server URL> <API key>");
  process.exit(2);
}

function check(cond, what) {
  if (!cond) {
    console.error("mcp e2e: FAILED: " + what);
    process.exit(1);
  }
}

async function connect(apiKey) {
  const client = new Client({ name: "trellis-mcp-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(base + "/mcp"), {
    requestInit: { headers: { "x-api-key": apiKey } },
  });
  await client.connect(transport);
  return client;
}

let refused = false;
try {
  await connect("not-a-key-of-this-server");
} catch (e) {
  refused = true;
}
check(refused, "a wrong API key connected");

const client = await connect(key);
const { tools } = await client.listTools();
const steps = tools.find((t) => t.name === "steps");
check(steps, "no tool steps among " + tools.map((t) => t.name).join(", "));
check(steps.description === "three steps in a row", "steps' description is " + steps.description);
check(steps.inputSchema.type === "object" && steps.inputSchema.properties.topic && steps.inputSchema.properties.thread_id,
  "steps' input schema " + JSON.stringify(steps.inputSchema));

const progress = [];
const res = await client.callTool({ name: "steps", arguments: { topic: "js" } }, undefined, {
  onprogress: (p) => progress.push(p.message),
});
check(!res.isError, "the stateless call failed: " + JSON.stringify(res.content));
check(JSON.stringify(res.structuredContent.steps) === '["a","b","c"]', "stateless steps " + JSON.stringify(res.structuredContent));
check(JSON.parse(res.content[0].text).topic === "js", "text content " + res.content[0].text);
check(progress.join("|") === "finished a|finished b|finished c", "progress " + JSON.stringify(progress));

const tid = randomUUID();
await client.callTool({ name: "steps", arguments: { topic: "t", thread_id: tid } });
const again = await client.callTool({ name: "steps", arguments: { thread_id: tid } });
check(again.structuredContent.steps.length === 6, "the thread's steps " + JSON.stringify(again.structuredContent));
check(again._meta.thread_id === tid, "meta " + JSON.stringify(again._meta));

const bad = await client.callTool({ name: "steps", arguments: { topic: "explode" } });
check(bad.isError && bad.content[0].text.includes("node c refuses to explode"), "a failing run answers " + JSON.stringify(bad));

await client.close();
console.log("mcp e2e: ok " + tid);
