// Browser tests of ListForge's pages (docs/ui.md, docs/apps/listforge.md): Playwright
// (playwright-core) driving Debian's Chromium.
//
//   node ui/e2e/listforge.mjs <base URL of a dev server with the listforge app> <screenshot dir> [<base URL of a server with the app, no demo items, that wants API key KEY>]
//
// ui/listforge_browser_test.go starts the server (its offline marketplace answering slowly, so
// that a research job's steps can be watched) and runs this; it then checks the screenshots.
// Every request must go to the server under test: any other is aborted and fails the run.
import { start } from "./kit.mjs";

const [base, shots, authBase] = process.argv.slice(2);
const apiKey = process.env.TRELLIS_E2E_API_KEY || "";
const kit = await start(base, shots, {
  usage: "node listforge.mjs <base URL> <screenshot dir> [<auth server URL>]",
  origins: [authBase],
  ignoreConsole: /status of 40[14]/,
});
const { page, step, expect } = kit;
// Every frame the pages' WebSockets receive, by socket path.
const frames = { research: [], chat: [] };
page.on("websocket", (ws) => {
  const kind = ws.url().includes("/ws/research") ? "research" : ws.url().includes("/ws/chat") ? "chat" : null;
  if (!kind) return;
  ws.on("framereceived", (f) => {
    try {
      frames[kind].push({ at: Date.now(), ...JSON.parse(String(f.payload)) });
    } catch {
      // not JSON: not ours
    }
  });
});

const shot = (name) => kit.shot(page, name);

const STEPS = [
  ["load_context", "Loading item"], ["analyze_media", "Analyzing photos"], ["identify_product", "Identifying product"],
  ["search_comps", "Finding comparables"], ["analyze_comps", "Analyzing prices"], ["calculate_price", "Calculating recommendations"],
  ["assess_missing", "Checking for gaps"], ["persist_results", "Saving results"],
];
let itemURL = "";

await step("items: the demo items listed", async () => {
  await page.goto(base + "/ui/apps/listforge");
  await page.getByRole("heading", { name: "ListForge items" }).waitFor();
  await page.getByRole("link", { name: "Noise cancelling headphones" }).waitFor();
  const rows = await page.getByRole("table", { name: "items" }).locator("tbody tr").count();
  expect(rows >= 6, `${rows} items listed, want the 6 demo items`);
  await shot("lf-01-items");
});

await step("items: create one, edit a field (audited)", async () => {
  await page.getByRole("button", { name: "New item" }).click();
  const form = page.getByRole("form", { name: "new item" });
  await form.getByLabel("Title").fill("Brass desk lamp");
  await form.getByLabel("Description").fill("Adjustable arm, works, some patina.");
  await form.getByLabel("Asking price (USD)").fill("40");
  await form.getByRole("button", { name: "Create item" }).click();
  await page.waitForURL(/\/ui\/apps\/listforge\/items\/[^/?]+/);
  await page.getByRole("heading", { name: "Brass desk lamp" }).waitFor();
  const price = page.locator('[data-field="defaultPrice"]');
  expect((await price.textContent()).includes("$40.00"), "the new item's price is not shown");
  await page.getByRole("button", { name: "edit Asking price" }).click();
  await page.getByRole("textbox", { name: "Asking price" }).fill("55");
  await page.getByRole("textbox", { name: "reason" }).fill("a similar lamp sold for more");
  await page.getByRole("button", { name: "Save" }).click();
  await price.getByText("$55.00").waitFor();
  await page.locator('[data-audit-field="defaultPrice"]', { hasText: "a similar lamp sold for more" }).waitFor();
  await shot("lf-02-details");
});

await step("research: the eight steps go live, the pricing and evidence cards fill", async () => {
  await page.goto(base + "/ui/apps/listforge");
  await page.getByRole("link", { name: "Noise cancelling headphones" }).click();
  await page.waitForURL(/\/items\//);
  itemURL = page.url().split("?")[0];
  await page.getByRole("tab", { name: "Research" }).click();
  await page.getByRole("heading", { name: "No research yet" }).waitFor();
  await page.getByRole("heading", { name: "Evidence" }).waitFor();
  await page.getByText("No evidence yet").waitFor();
  await page.getByRole("button", { name: "Start research" }).first().click();
  const progress = page.getByLabel("research progress");
  // Live: some steps done while one runs and the rest wait.
  await page.waitForFunction(() => {
    const done = document.querySelectorAll('[data-step][data-state="done"]').length;
    return done >= 2 && done < 8 && document.querySelector('[data-step][data-state="running"]');
  });
  await shot("lf-03-research-live");
  await progress.and(page.locator('[data-job-status="success"]')).waitFor();
  for (const [id, label] of STEPS) {
    const li = page.locator(`[data-step="${id}"]`);
    expect((await li.getAttribute("data-state")) === "done", `${id} is ${await li.getAttribute("data-state")}, want done`);
    expect((await li.textContent()).includes(label), `${id} is not labelled ${label}`);
  }
  // Over the WebSocket: a job_status naming each node as it starts, node_complete for each in
  // the graph's order, spread over the job's time (not a replay at the end), then job_complete.
  const f = frames.research;
  const nodes = f.filter((x) => x.event === "node_complete").map((x) => x.data.node);
  expect(JSON.stringify(nodes) === JSON.stringify(STEPS.map((s) => s[0])), "node_complete frames: " + nodes.join(", "));
  const started = new Set(f.filter((x) => x.event === "job_status" && x.data.currentNode).map((x) => x.data.currentNode));
  // (The first steps need no marketplace call and may be over before the page subscribes: they
  // are then replayed as node_complete. From search_comps on, each waits on the slow API.)
  expect(STEPS.slice(3).every(([id]) => started.has(id)), "job_status frames named only " + [...started].join(", "));
  const nc = f.filter((x) => x.event === "node_complete");
  expect(nc[nc.length - 1].at - nc[0].at >= 300, `the steps arrived within ${nc[nc.length - 1].at - nc[0].at} ms: not live`);
  const complete = f.find((x) => x.event === "job_complete");
  expect(complete && complete.data.status === "success" && complete.data.research, "job_complete: " + JSON.stringify(complete?.data).slice(0, 200));
  // The pricing card.
  for (const b of ["floor", "target", "ceiling"]) {
    const t = await page.locator(`[data-band="${b}"]`).textContent();
    expect(/\$\d/.test(t), `the ${b} band shows no price: ${t}`);
  }
  const target = Number((await page.locator('[data-band="target"] .text-2xl').textContent()).replace(/[^0-9.]/g, ""));
  expect(target > 50 && target < 1000, "target " + target);
  await page.getByLabel("demand signals").getByText("Sell-through").waitFor();
  await page.getByLabel("missing information").waitFor();
  await page.getByText(/Identified as/).waitFor();
  // The evidence card, and the history.
  const ev = await page.getByRole("table", { name: "evidence" }).locator("tbody tr").count();
  expect(ev >= 5, `${ev} evidence rows`);
  await page.getByLabel("research jobs").getByText("success").waitFor();
  await page.getByRole("tab", { name: /Research/ }).getByText("just now").waitFor();
  await shot("lf-04-research-done");
});

await step("chat: the specification's E2E test, streamed", async () => {
  await page.goto(itemURL);
  await page.getByRole("tab", { name: "Chat" }).click();
  await page.getByText("Ask about this item: its price").waitFor();
  await page.fill('input[placeholder*="Ask about"]', "What price should I list this for?");
  await page.click('button:has-text("Send")');
  await page.locator(".chat-message.assistant").first().waitFor();
  const response = await page.locator(".chat-message.assistant").first().textContent();
  expect(/\$\d+/.test(response), "the answer names no price: " + response);
  const f = frames.chat;
  const answer = f.findIndex((x) => x.event === "message" && x.data.role === "assistant");
  const tokens = f.slice(0, answer).filter((x) => x.event === "token");
  expect(tokens.length >= 2, `the answer came in ${tokens.length} token frames, want it streamed`);
  expect(tokens.map((x) => x.data.token).join("") === f[answer].data.content, "the tokens do not add up to the answer");
  await shot("lf-05-chat-answer");
});

await step("chat: a proposed change applied once", async () => {
  await page.fill('input[placeholder*="Ask about"]', "Set the price to $289");
  await page.click('button:has-text("Send")');
  const proposal = page.locator(".chat-message.assistant").filter({ has: page.locator('[data-action="update_field"]') });
  await proposal.waitFor();
  expect((await proposal.textContent()).includes("Should I make this change?"), "no proposal: " + (await proposal.textContent()));
  const msgId = await proposal.getAttribute("data-message-id");
  await proposal.getByRole("button", { name: "Apply" }).click();
  await proposal.getByText("✓ Applied").waitFor();
  expect((await proposal.getByRole("button", { name: "Apply" }).count()) === 0, "the Apply button is still there");
  await page.getByText("asking $289.00").waitFor();
  const applied = frames.chat.filter((x) => x.event === "action_applied");
  expect(applied.length === 1 && applied[0].data.success && applied[0].data.item.defaultPrice === 289, "action_applied: " + JSON.stringify(applied));
  await shot("lf-06-chat-applied");
  // Applying it again, from another connection, is refused.
  const again = await page.evaluate((id) => new Promise((resolve, reject) => {
    const ws = new WebSocket(location.origin.replace(/^http/, "ws") + "/apps/listforge/ws/chat");
    ws.onopen = () => ws.send(JSON.stringify({ event: "apply_action", data: { messageId: id, actionIndex: 0 } }));
    ws.onmessage = (m) => {
      const fr = JSON.parse(m.data);
      if (fr.event === "action_applied") { ws.close(); resolve(fr.data); }
    };
    setTimeout(() => reject(new Error("no action_applied")), 20000);
  }), msgId);
  expect(again.success === false && /already applied/.test(again.error), "a second apply: " + JSON.stringify(again));
  // After a reload the action is shown applied; the item was changed once.
  await page.reload();
  const again2 = page.locator(`[data-message-id="${msgId}"]`);
  await again2.getByText("✓ Applied").waitFor();
  expect((await page.locator(".chat-message").count()) === 4, "the session's four messages are not shown again");
  await page.getByRole("tab", { name: "Details" }).click();
  await page.locator('[data-field="defaultPrice"]').getByText("$289.00").waitFor();
  const changes = page.locator('[data-audit-field="defaultPrice"]');
  await changes.first().waitFor();
  expect((await changes.count()) === 1, `${await changes.count()} price changes, want 1`);
  expect((await changes.textContent()).includes("requested in chat"), "the change's reason: " + (await changes.textContent()));
  await shot("lf-07-changes");
});

await step("errors: an unknown item, an item not ready for research", async () => {
  await page.goto(base + "/ui/apps/listforge/items/0000-no-such-item");
  await page.getByRole("heading", { name: "No such item" }).waitFor();
  await shot("lf-08-not-found");
  await page.goto(base + "/ui/apps/listforge");
  await page.getByRole("link", { name: "untitled draft" }).click();
  await page.getByRole("tab", { name: "Research" }).click();
  await page.getByRole("button", { name: "Start research" }).first().click();
  await page.locator('[aria-label="research progress"][data-job-status="error"]').waitFor();
  await page.getByRole("alert").getByText("Item not ready for research").waitFor();
  await page.getByLabel("research jobs").getByText("error").waitFor();
  await shot("lf-11-not-ready");
});

if (authBase) await step("an API key: the empty list, a first item, chat over a WebSocket signed with ?token=", async () => {
  await page.goto(authBase + "/ui/apps/listforge");
  await page.getByRole("heading", { name: "Sign in to trellis" }).waitFor();
  await page.getByRole("textbox", { name: "API key" }).fill(apiKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "No items yet" }).waitFor();
  await shot("lf-12-empty");
  await page.getByRole("button", { name: "Create your first item" }).click();
  const form = page.getByRole("form", { name: "new item" });
  await form.getByLabel("Title").fill("Walnut side table");
  await form.getByRole("button", { name: "Create item" }).click();
  await page.getByRole("heading", { name: "Walnut side table" }).waitFor();
  await page.getByRole("tab", { name: "Chat" }).click();
  await page.fill('input[placeholder*="Ask about"]', "What price should I list this for?");
  await page.click('button:has-text("Send")');
  const answer = await page.locator(".chat-message.assistant").first().textContent();
  expect(/no research/i.test(answer), "the answer without research: " + answer);
  // The answer offers to start research: applied, the job runs and the Research tab follows it.
  const offer = page.locator(".chat-message.assistant").first().locator('[data-action="start_research"]');
  await offer.getByRole("button", { name: "Apply" }).click();
  await offer.getByText("✓ Applied").waitFor();
  await page.getByRole("tab", { name: "Research" }).click();
  await page.locator('[aria-label="research progress"]:is([data-job-status="success"], [data-job-status="error"])').waitFor();
  await page.getByLabel("pricing").waitFor();
});

await step("phone-sized screen and dark theme", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  const fits = async (what) => {
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    const culprits = wide <= 390 ? "" : await page.evaluate(() => [...document.querySelectorAll("body *")]
      .filter((e) => e.getBoundingClientRect().right > 391).slice(0, 5).map((e) => e.tagName + "." + String(e.className).slice(0, 60)).join("; "));
    expect(wide <= 390, `${what} is ${wide} px wide on a 390 px screen: ${culprits}`);
  };
  await page.goto(itemURL + "?tab=details");
  await page.locator('[data-audit-field="defaultPrice"]').waitFor();
  await fits("the details");
  await page.goto(itemURL + "?tab=chat");
  await page.locator(".chat-message.assistant").first().waitFor();
  await fits("the chat");
  await page.goto(itemURL + "?tab=research");
  await page.locator('[data-band="target"]').waitFor();
  await page.getByRole("table", { name: "evidence" }).waitFor();
  await fits("the research");
  await shot("lf-09-phone");
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.keyboard.press("t");
  expect(await page.evaluate(() => document.documentElement.classList.contains("dark")), "t did not turn the dark theme on");
  await shot("lf-10-research-dark");
  await page.keyboard.press("t");
});

await kit.finish();
