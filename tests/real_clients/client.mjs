// The official TypeScript SDK client: start a server over stdio (or reach it over Streamable
// HTTP), list its tools, call one, print what came back as JSON. Used by tests/test_real_clients.py.
// usage: node client.mjs stdio TOOL ARGS_JSON -- COMMAND [ARGS...]
//        node client.mjs http TOOL ARGS_JSON URL [HEADER_JSON]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, tool, argsJson, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  const command = rest.slice(rest.indexOf("--") + 1);
  // The SDK passes only a few variables by default; the server needs its configuration (e.g. DOCS_ROOT).
  transport = new StdioClientTransport({ command: command[0], args: command.slice(1), env: process.env, stderr: "ignore" });
} else {
  const headers = rest[1] ? JSON.parse(rest[1]) : {};
  transport = new StreamableHTTPClientTransport(new URL(rest[0]), { requestInit: { headers } });
}
const client = new Client({ name: "rc-real-client", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJson) });
console.log(JSON.stringify({ server: client.getServerVersion(), tools: tools.tools.map((t) => t.name), result }));
await client.close();
