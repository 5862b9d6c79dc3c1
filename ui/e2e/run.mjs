// Browser tests of the trellis web UI: Playwright (playwright-core) driving Debian's Chromium.
//
//   node ui/e2e/run.mjs <base URL of a dev server with the example app> <screenshot dir> [<base URL of a server that wants API key KEY>]
//
// ui/browser_test.go starts the servers and runs this; it then checks the screenshots. Every
// request the pages make must go to the server under test: any other is aborted and fails the run.
import { start } from "./kit.mjs";

const [base, shots, authBase] = process.argv.slice(2);
const apiKey = process.env.TRELLIS_E2E_API_KEY || "";
const { ctx, page, step, shot, expect, finish } = await start(base, shots, {
  usage: "node run.mjs <base URL> <screenshot dir> [<auth server URL>]",
  origins: [authBase],
  ignoreConsole: /status of 40[149]/,
});

await step("shell: apps and assistants, themes", async () => {
  await page.goto(base + "/");
  await page.getByRole("heading", { name: "Applications" }).waitFor();
  await page.getByRole("list", { name: "applications" }).getByRole("link", { name: "example" }).waitFor();
  await page.getByRole("list", { name: "assistants" }).getByRole("link", { name: "example", exact: true }).waitFor();
  await shot(page, "01-home");
  await page.keyboard.press("t");
  expect(await page.evaluate(() => document.documentElement.classList.contains("dark")), "t did not turn the dark theme on");
  await shot(page, "02-home-dark");
  await page.getByRole("button", { name: "light theme" }).click();
  expect(!(await page.evaluate(() => document.documentElement.classList.contains("dark"))), "the theme button did not turn it off");
  await page.keyboard.press("?");
  await page.getByRole("dialog", { name: "keyboard shortcuts" }).waitFor();
  await page.keyboard.press("Escape");
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await page.keyboard.press("g");
  await page.keyboard.press("t");
  await page.getByRole("heading", { name: "Threads" }).waitFor();
  await page.getByRole("link", { name: "example" }).first().click();
  await page.getByRole("heading", { name: "example" }).waitFor();
  expect(page.url().endsWith("/ui/apps/example"), "the app's link went to " + page.url());
  await page.getByText("A ReAct agent with a unit converter").first().waitFor();
  await shot(page, "03-app");
});

await step("shell: phone-sized screen", async () => {
  const phone = await ctx.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(base + "/ui/");
  await phone.getByRole("heading", { name: "Applications" }).waitFor();
  expect(!(await phone.getByRole("navigation", { name: "main" }).isVisible()), "the side navigation shows on a phone before the menu is opened");
  const wide = await phone.evaluate(() => document.documentElement.scrollWidth);
  expect(wide <= 390, "the page is " + wide + " px wide on a 390 px screen");
  await phone.getByRole("button", { name: "menu" }).click();
  await phone.getByRole("navigation", { name: "main" }).waitFor();
  await shot(phone, "04-phone-menu");
  await phone.close();
});

let chatURL = "";
await step("chat: the answer streams, tool calls collapsed", async () => {
  await page.goto(base + "/ui/");
  await page.getByRole("list", { name: "assistants" }).getByRole("link", { name: "example", exact: true }).click();
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  // Record the answer's text each time it changes, to see it grow.
  await page.evaluate(() => {
    window.__lengths = [];
    new MutationObserver(() => {
      const ai = [...document.querySelectorAll('[data-role="ai"]')].pop();
      if (ai) {
        const n = ai.textContent.length;
        if (window.__lengths[window.__lengths.length - 1] !== n) window.__lengths.push(n);
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await page.getByRole("textbox", { name: "Message" }).fill("What time is it in Tokyo?");
  await page.keyboard.press("Enter");
  await page.locator('[data-role="ai"]', { hasText: "Here is what I found" }).waitFor();
  await page.locator('section[aria-label="chat"][data-busy="false"]').waitFor();
  const chunks = Number(await page.locator('section[aria-label="chat"]').getAttribute("data-chunks"));
  expect(chunks >= 2, "the answer came in " + chunks + " token chunks, want several");
  const lengths = await page.evaluate(() => window.__lengths);
  console.log(`     ${chunks} token chunks; the answer's text took ${lengths.length} lengths: ${lengths.slice(0, 12).join(" ")}`);
  expect(page.url().includes("?thread="), "the chat did not put its thread in the address: " + page.url());
  chatURL = page.url();
  await page.locator('[data-role="ai"] code', { hasText: "world_clock" }).first().waitFor(); // Markdown rendered
  const call = page.locator('details[data-tool-call="world_clock"]');
  await call.locator("summary").click();
  await call.getByText("result").waitFor();
  await call.getByText('"city": "Tokyo"').waitFor();
  await page.getByRole("list", { name: "progress" }).getByText("tools · done").waitFor();
  await shot(page, "05-chat");
  // The thread is kept: a reload shows the same conversation.
  await page.reload();
  await page.locator('[data-role="ai"]', { hasText: "Here is what I found" }).waitFor();
});

let pausedThread = "";
await step("breakpoint: pause before tools, then approve", async () => {
  await page.getByRole("link", { name: "New thread" }).click();
  await page.getByText("Send a message to start a thread").waitFor();
  await page.getByRole("group", { name: "Pause before" }).getByLabel("tools").check();
  await page.getByRole("textbox", { name: "Message" }).fill("What time is it in Tokyo?");
  await page.getByRole("button", { name: "Send" }).click();
  const card = page.getByRole("region", { name: "breakpoint" });
  await card.getByText("Paused before tools").waitFor();
  await page.locator('details[data-tool-call="world_clock"]', { hasText: "waiting" }).waitFor();
  pausedThread = new URL(page.url()).searchParams.get("thread");
  await shot(page, "06-breakpoint");
  await card.getByRole("button", { name: "Continue" }).click();
  await page.locator('[data-role="ai"]', { hasText: "Here is what I found" }).waitFor();
  await card.waitFor({ state: "detached" });
  await shot(page, "07-approved");
});

await step("history: fork from an older checkpoint and run it", async () => {
  expect(pausedThread, "no thread from the breakpoint flow");
  await page.goto(base + "/ui/threads/" + pausedThread);
  const items = page.getByRole("region", { name: "history" }).locator("li[data-checkpoint]");
  await items.nth(3).waitFor();
  const n = await items.count();
  // The oldest checkpoint that holds the question (the input, before the model answered).
  await items.filter({ hasText: /· 1 message\b/ }).last().getByRole("button").click();
  await page.getByRole("heading", { name: /Checkpoint at step/ }).waitFor();
  await page.getByRole("button", { name: "Fork from here" }).click();
  const values = page.getByRole("textbox", { name: "values" });
  const text = await values.inputValue();
  expect(text.includes("What time is it in Tokyo?"), "the fork editor does not show the input message: " + text);
  await values.fill(text.replace("in Tokyo?", "in Paris?"));
  await shot(page, "08-fork-editor");
  await page.getByRole("button", { name: "Save as a new checkpoint" }).click();
  await page.getByRole("status").getByText("Saved checkpoint").waitFor();
  await page.getByRole("heading", { name: "Current state" }).waitFor();
  await page.waitForFunction((want) => document.querySelectorAll("li[data-checkpoint]").length === want, n + 1);
  await items.first().locator("[data-fork-of]").waitFor();
  await page.getByRole("region", { name: "checkpoint" }).getByText("in Paris?").first().waitFor();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(/\/runs\//);
  await page.locator('header [data-run-status="success"]').waitFor();
  await page.locator('[data-node="model"][data-status="done"]').waitFor();
  await page.getByText("Paris").first().waitFor();
  await shot(page, "09-run-progress");
  await page.getByRole("link", { name: /^Thread / }).click();
  await page.getByRole("region", { name: "runs" }).locator('[data-run-status="success"]').nth(2).waitFor();
  await page.getByRole("img", { name: "Run durations" }).waitFor();
  // The fork made two branches: switching shows only one's checkpoints, ending in its answer.
  const branches = page.getByRole("group", { name: "branches" });
  await branches.locator("[data-branch]").nth(1).waitFor();
  const all = await items.count();
  await branches.locator('[data-branch="2"]').click();
  await page.locator("[data-branch-preview]", { hasText: "Tokyo" }).waitFor();
  const older = await items.count();
  expect(older < all, "branch 2 shows " + older + " of " + all + " checkpoints");
  expect(!(await page.getByRole("region", { name: "history" }).innerText()).includes("branches from"), "branch 2 shows the fork's checkpoints");
  await branches.locator('[data-branch="1"]').click();
  await page.locator("[data-branch-preview]", { hasText: "Paris" }).waitFor();
  await page.getByRole("region", { name: "history" }).locator("[data-fork-of]").first().waitFor(); // the fork is on this branch
  // The same branches drawn as a tree: the fork leaves the first lane; choosing a branch's end
  // in the tree switches to that branch.
  const tree = page.getByRole("group", { name: "fork tree" });
  await tree.locator('[data-tree-lane="1"]').first().waitFor();
  await tree.getByRole("button", { name: /^branch 2,/ }).click();
  await page.locator("[data-branch-preview]", { hasText: "Tokyo" }).waitFor();
  expect(await branches.locator('[data-branch="2"]').getAttribute("aria-pressed") === "true", "the tree's branch 2 did not switch the branch");
  await shot(page, "10-thread-tree");
  await tree.getByRole("button", { name: /^branch 1,/ }).click();
  await page.locator("[data-branch-preview]", { hasText: "Paris" }).waitFor();
  await shot(page, "10-thread");
});

await step("graph: drawn from the assistant's schema", async () => {
  await page.goto(chatURL);
  await page.getByRole("navigation", { name: "assistant" }).getByRole("link", { name: "Graph" }).click();
  for (const node of ["__start__", "model", "tools", "__end__"]) await page.getByRole("figure", { name: "graph" }).locator(`[data-node="${node}"]`).waitFor();
  const edges = await page.locator("path[data-edge]").count();
  expect(edges === 5, "the graph has " + edges + " edges, want 5");
  await shot(page, "11-graph");
});

await step("store: put items, browse by namespace, search", async () => {
  await page.goto(base + "/ui/store");
  const form = page.getByRole("form", { name: "put item" });
  for (const [key, text] of [["tea", "Alice likes green tea in the morning"], ["bike", "Alice rides a red bicycle to work"]]) {
    await form.getByLabel("Namespace").fill("notes/alice");
    await form.getByLabel("Key").fill(key);
    await form.getByLabel("Value (a JSON object)").fill(JSON.stringify({ text }));
    await form.getByRole("button", { name: "Put" }).click();
    await page.getByRole("table", { name: "items" }).getByText(key, { exact: true }).waitFor();
  }
  await page.getByRole("region", { name: "namespaces" }).getByRole("button", { name: "notes / alice" }).click();
  await page.getByRole("table", { name: "items" }).locator("tbody tr").nth(1).waitFor();
  await page.getByRole("textbox", { name: "Search" }).fill("green tea");
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByRole("table", { name: "items" }).locator("tbody tr").first().getByText("tea", { exact: true }).waitFor();
  await shot(page, "12-store");
});

await step("threads: search and sort", async () => {
  await page.goto(base + "/ui/threads");
  const rows = page.getByRole("table", { name: "threads" }).locator("tbody tr");
  await rows.nth(1).waitFor();
  await page.getByRole("columnheader", { name: /Status/ }).getByRole("button").click();
  await page.locator('th[aria-sort="ascending"]').waitFor();
  await page.getByLabel("Thread ID").fill(pausedThread);
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForFunction(() => document.querySelectorAll('table[aria-label="threads"] tbody tr').length === 1);
  await shot(page, "13-threads");
});

await step("inbox: accept, edit, respond and ignore an interrupt", async () => {
  const answers = [
    ["Accept", null, '"type":"accept"'],
    ["Edit", async (card) => {
      const args = card.getByRole("textbox", { name: "edited arguments" });
      await args.fill((await args.inputValue()).replace("Hello", "Hi there"));
      await card.getByRole("button", { name: "Send edit" }).click();
    }, '"subject":"Hi there"'],
    ["Respond", async (card) => {
      await card.getByRole("textbox", { name: "response" }).fill("not today");
      await card.getByRole("button", { name: "Send response" }).click();
    }, '"args":"not today"'],
    ["Ignore", null, '"type":"ignore"'],
  ];
  for (const [button, then, want] of answers) {
    await page.goto(base + "/ui/assistants/inbox");
    await page.getByRole("textbox", { name: "Message" }).fill("Email Ana");
    await page.keyboard.press("Enter");
    const card = page.getByRole("region", { name: "interrupt" });
    await card.getByText("send_email").waitFor();
    await card.getByText("Send this email?").waitFor();
    if (button === "Accept") await shot(page, "15-inbox");
    await card.getByRole("button", { name: button, exact: true }).click();
    if (then) await then(card);
    await page.locator('[data-role="ai"]', { hasText: want }).waitFor();
    await card.waitFor({ state: "detached" });
  }
});

await step("runs: cancel a running run", async () => {
  await page.goto(base + "/ui/assistants/slow");
  await page.getByRole("textbox", { name: "Message" }).fill("take your time");
  await page.keyboard.press("Enter");
  await page.getByRole("list", { name: "progress" }).getByText("work · running").waitFor();
  // The running node is highlighted live on the side panel's graph.
  await page.getByRole("figure", { name: "graph" }).locator('[data-node="work"][data-status="running"]').waitFor();
  await shot(page, "16-cancel");
  await page.getByRole("button", { name: "Cancel" }).click();
  await page.locator('section[aria-label="chat"][data-busy="false"]').waitFor();
  const tid = new URL(page.url()).searchParams.get("thread");
  await page.goto(base + "/ui/threads/" + tid);
  const status = await page.getByRole("region", { name: "runs" }).locator("[data-run-status]").first().getAttribute("data-run-status");
  expect(["interrupted", "cancelled", "error"].includes(status), "the cancelled run's status is " + status);
});

if (authBase) {
  await step("sign-in: an API key", async () => {
    const p = await ctx.newPage();
    await p.goto(authBase + "/");
    await p.getByRole("heading", { name: "Sign in to trellis" }).waitFor();
    await p.getByRole("textbox", { name: "API key" }).fill("not-the-key-0000000000");
    await p.getByRole("button", { name: "Sign in" }).click();
    await p.getByRole("alert").getByText("refused").waitFor();
    await shot(p, "14-sign-in");
    await p.getByRole("textbox", { name: "API key" }).fill(apiKey);
    await p.getByRole("button", { name: "Sign in" }).click();
    await p.getByRole("heading", { name: "Applications" }).waitFor();
    await p.getByRole("button", { name: "Sign out" }).waitFor();
    await p.close();
  });
}

await finish();
