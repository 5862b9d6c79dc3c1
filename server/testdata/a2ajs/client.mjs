// Drives trellis's A2A endpoint with the official A2A JavaScript SDK's client: reads the
// assistant "chat"'s agent card, sends a message and continues its context, streams one,
// answers an interrupt (an input-required task) with the next message, reads tasks back, and
// cancels a working task. Usage: node client.mjs <server URL> <API key>
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, TaskNotCancelableError } from "@a2a-js/sdk/client";
import { randomUUID } from "node:crypto";

const [base, key] = process.argv.slice(2);
if (!base || !key) {
  console.error("usage: node client.mjs <server URL> <API key>");
  process.exit(2);
}

function check(cond, what) {
  if (!cond) {
    console.error("a2a e2e: FAILED: " + what);
    process.exit(1);
  }
}

// Every request carries the API key.
const fetchImpl = (url, init = {}) => {
  const headers = new Headers(init.headers || {});
  headers.set("x-api-key", key);
  return fetch(url, { ...init, headers });
};
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }),
);
const client = await factory.createFromUrl(base + "/.well-known/agent-card.json?assistant_id=chat", "");
const card = await client.getAgentCard();
check(card.name === "chat" && card.capabilities.streaming === true, "agent card " + JSON.stringify(card));

const say = (text, extra = {}) => ({
  message: { kind: "message", role: "user", messageId: randomUUID(), parts: [{ kind: "text", text }], ...extra },
});
const resultText = (task) => task.artifacts?.[0]?.parts?.[0]?.text;

// send, then the same context again
const first = await client.sendMessage(say("hello"));
check(first.kind === "task" && first.status.state === "completed", "first task " + JSON.stringify(first));
check(resultText(first) === "echo: hello", "first result " + JSON.stringify(first.artifacts));
const ctx = first.contextId;
const second = await client.sendMessage(say("again", { contextId: ctx }));
check(second.contextId === ctx && resultText(second) === "echo: again", "second task " + JSON.stringify(second));

// get
const got = await client.getTask({ id: first.id });
check(got.id === first.id && got.status.state === "completed" && resultText(got) === "echo: hello", "tasks/get " + JSON.stringify(got));
check(got.history.map((m) => m.role + ":" + m.parts[0].text).join(" ") === "user:hello agent:echo: hello user:again agent:echo: again",
  "tasks/get's history " + JSON.stringify(got.history));
check((await client.getTask({ id: first.id, historyLength: 1 })).history.length === 1, "historyLength 1");

// push notification configs (on a finished task: nothing is sent)
check(card.capabilities.pushNotifications === true, "the card offers push notifications");
const pushURL = "https://hooks.example.invalid/a2a";
const set = await client.setTaskPushNotificationConfig({ taskId: first.id, pushNotificationConfig: { url: pushURL, token: "t1" } });
check(set.taskId === first.id && set.pushNotificationConfig.id === first.id && set.pushNotificationConfig.url === pushURL, "set " + JSON.stringify(set));
const listed = await client.listTaskPushNotificationConfig({ id: first.id });
check(listed.length === 1 && listed[0].pushNotificationConfig.token === "t1", "list " + JSON.stringify(listed));
const one = await client.getTaskPushNotificationConfig({ id: first.id, pushNotificationConfigId: first.id });
check(one.pushNotificationConfig.url === pushURL, "get " + JSON.stringify(one));
await client.deleteTaskPushNotificationConfig({ id: first.id, pushNotificationConfigId: first.id });
check((await client.listTaskPushNotificationConfig({ id: first.id })).length === 0, "the config deleted");

// stream
const kinds = [];
let streamedText = "";
const tokens = [];
for await (const ev of client.sendMessageStream(say("streamed"))) {
  if (ev.kind === "artifact-update" && !ev.lastChunk) {
    kinds.push("token");
    tokens.push(ev.artifact.parts[0].text);
    check((ev.append === true) === (tokens.length > 1), "a token appends to the ones before it " + JSON.stringify(ev));
    continue;
  }
  kinds.push(ev.kind === "task" || ev.kind === "status-update" ? ev.kind + ":" + ev.status.state : ev.kind);
  const part = ev.kind === "status-update" ? ev.status.message?.parts?.[0] : undefined;
  if (part?.kind === "text") streamedText = part.text;
}
check(kinds.join(" ") === "task:submitted status-update:working token token token status-update:working artifact-update status-update:completed",
  "stream events " + kinds.join(" "));
check(tokens.join("|") === "echo|: |streamed", "the tokens " + tokens.join("|"));
check(streamedText === "echo: streamed", "streamed text " + streamedText);

// interrupt -> input-required -> resume
const asked = await client.sendMessage(say("ask me"));
check(asked.status.state === "input-required", "the interrupted task " + JSON.stringify(asked));
check(asked.status.message.parts[0].text === "which color?", "the question " + JSON.stringify(asked.status.message));
const answered = await client.sendMessage(say("green", { taskId: asked.id, contextId: asked.contextId }));
check(answered.id === asked.id && answered.status.state === "completed" && resultText(answered) === "you chose green",
  "the resumed task " + JSON.stringify(answered));

// cancel a working task
const held = await client.sendMessage({ ...say("hold"), configuration: { blocking: false } });
check(held.status.state === "submitted" || held.status.state === "working", "the held task " + JSON.stringify(held));
let canceled;
for (;;) {
  const t = await client.getTask({ id: held.id });
  if (t.status.state === "working") {
    canceled = await client.cancelTask({ id: held.id });
    break;
  }
  await new Promise((r) => setTimeout(r, 20)); // poll until the run has started
}
check(canceled.status.state === "canceled", "the canceled task " + JSON.stringify(canceled));
let refused = false;
try {
  await client.cancelTask({ id: held.id });
} catch (e) {
  refused = e instanceof TaskNotCancelableError || String(e).includes("canceled");
}
check(refused, "a canceled task was canceled again");

console.log("a2a e2e: ok " + ctx);
