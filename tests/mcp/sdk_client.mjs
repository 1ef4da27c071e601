// The official MCP TypeScript SDK as the client of `kdispatch mcp`: initialize, list tools,
// brief, dispatch, wait until the run ends, outcome, audit; then a supervised dispatch of the
// same experiment: its first request approved, the next one stopped. Run by mcp_sdk_test.cc:
//   node sdk_client.mjs SDK_DIR KDISPATCH WIKI CHIPS TOOL_DIR SCRIPT RUN_ROOT
// SDK_DIR holds node_modules/@modelcontextprotocol/sdk (build.sh installs it into the build
// tree). Exits 0 and prints "sdk client: ok" only when every step checked out.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, kdispatch, wiki, chips, toolDir, script, runRoot] = process.argv.slice(2);
function fail(message) {
  console.error(`sdk client: ${message}`);
  process.exit(1);
}
if (!runRoot) fail("usage: node sdk_client.mjs SDK_DIR KDISPATCH WIKI CHIPS TOOL_DIR SCRIPT RUN_ROOT");
const esm = join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm");
if (!existsSync(esm))
  fail(`@modelcontextprotocol/sdk is missing: no ${esm} ` +
       `(./build.sh test installs it; or: npm install --prefix ${sdkDir} @modelcontextprotocol/sdk@1)`);
const { Client } = await import(pathToFileURL(join(esm, "client/index.js")));
const { StdioClientTransport } = await import(pathToFileURL(join(esm, "client/stdio.js")));

const transport = new StdioClientTransport({
  command: kdispatch,
  args: ["mcp", "--wiki", wiki, "--run-root", runRoot],
  stderr: "inherit",
});
const client = new Client({ name: "kdispatch-sdk-test", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).join(",");
if (names !== "brief,dispatch,status,wait,pending,decide,outcome,audit,transcript,cancel") fail(`tools: ${names}`);

async function call(name, args, options) {
  const r = await client.callTool({ name, arguments: args }, undefined, options);
  if (r.isError) fail(`${name} failed: ${r.content?.[0]?.text}`);
  if (!r.structuredContent) fail(`${name}: no structuredContent`);
  return r.structuredContent;
}

const brief = await call("brief", { family: "rms-norm", experiment: "v002" });
if (!/^[0-9a-f]{64}$/.test(brief.sha256)) fail(`brief sha256: ${brief.sha256}`);

const started = Date.now();
const run = await call("dispatch", {
  family: "rms-norm", experiment: "v002", provider: "fake", script, chips, tool_dirs: [toolDir],
});
if (Date.now() - started > 5000) fail("dispatch did not return at once");
let progress = 0;
let status = run;
for (let i = 0; i < 40 && (status.state === "authoring" || status.state === "verifying"); ++i)
  status = await call("wait", { run_id: run.run_id, timeout_s: 45 },
                      { onprogress: () => ++progress, timeout: 60000 });
if (status.state !== "done") fail(`the run ended ${JSON.stringify(status)}`);
if (progress === 0) fail("no progress notification reached the client");

const outcome = await call("outcome", { run_id: run.run_id });
if (!outcome.verdict) fail(`no verdict: ${JSON.stringify(outcome)}`);
if (typeof outcome.outcome?.receipt?.speedup !== "number") fail("no speedup in the receipt");
const audit = await call("audit", { run_id: run.run_id });
if (audit.exit_status !== 0) fail(`the honest author's audit: ${JSON.stringify(audit.report)}`);

// Supervised: wait returns once the author asks; pending shows the request; decide answers it.
const live = (s) => ["authoring", "awaiting_approval", "verifying"].includes(s.state);
const sup = await call("dispatch", {
  family: "rms-norm", experiment: "v002", provider: "fake", script, chips, tool_dirs: [toolDir],
  supervise: true,
});
async function asked(after) {
  for (let i = 0; i < 40; ++i) {
    const { pending } = await call("pending", { run_id: sup.run_id });
    const next = pending.find((r) => r.call_id !== after);
    if (next) return next;
    const s = await call("wait", { run_id: sup.run_id, timeout_s: 45 }, { timeout: 60000 });
    if (!live(s)) fail(`the supervised run ended ${JSON.stringify(s)}`);
  }
  fail("no request became pending");
}
const first = await asked("");
if (first.call_id !== "p1" || first.tool !== "run" || !first.shown.includes("python3 -c"))
  fail(`first request: ${JSON.stringify(first)}`);
const approved = await call("decide", { run_id: sup.run_id, call_id: "p1", decision: "approve" });
if (!approved.posted) fail(`decide: ${JSON.stringify(approved)}`);
const second = await asked("p1");
if (second.call_id !== "m1" || second.tool !== "run_on_chip")
  fail(`second request: ${JSON.stringify(second)}`);
await call("decide", { run_id: sup.run_id, call_id: "m1", decision: "stop" });
let stopped = { state: "awaiting_approval" };
for (let i = 0; i < 40 && live(stopped); ++i)
  stopped = await call("wait", { run_id: sup.run_id, timeout_s: 45 }, { timeout: 60000 });
if (stopped.state !== "stopped") fail(`the stopped run ended ${JSON.stringify(stopped)}`);

await client.close();
console.log(`sdk client: ok (${run.run_id}: ${outcome.verdict}, ${status.turns} turns; ` +
            `${sup.run_id}: approved p1, stopped at m1)`);
