// Browser flow of the analyst's inbox (/ui/apps/analyst), run by ui/analyst_browser_test.go
// against a dev server with apps/analyst (offline: deterministic planning, review and writing):
//
//   node ui/e2e/analyst.mjs <base URL> <screenshot dir>
//
// A session starts with a greeting, a research question gets a plan, and the three gates are
// answered from their Agent Inbox cards with all four answers: the plan gate with feedback
// (respond), an edited sub-question (edit), then accept; the discovery gate with ignore, then
// accept; the final gate with a question (respond), then accept, up to a saved report shown as
// Markdown with its ID.
import { start } from "./kit.mjs";

const [base, shots] = process.argv.slice(2);
const { ctx, page, step, shot, expect, finish } = await start(base, shots);
const session = page.getByRole("region", { name: "session", exact: true });
const idle = () => page.locator('section[aria-label="session"][data-busy="false"]').waitFor();
const card = (gate) => page.locator(`[data-gate-card="${gate}"]`).getByRole("region", { name: "interrupt", exact: true });

let thread = "";
await step("analyst: a session starts with a greeting by name", async () => {
  await page.goto(base + "/ui/apps/analyst");
  await page.getByRole("heading", { name: "Strategic analyst" }).waitFor();
  await page.getByRole("region", { name: "sessions", exact: true }).getByText("No session yet.").waitFor();
  await page.getByLabel("Your name").fill("Dana Whitfield");
  await page.getByRole("textbox", { name: "Message" }).fill("Hello");
  await page.getByRole("button", { name: "Start session" }).click();
  await session.locator('[data-role="ai"]', { hasText: "Hello Dana!" }).waitFor();
  await page.waitForURL(/\?thread=/);
  thread = new URL(page.url()).searchParams.get("thread");
  await idle();
  await page.getByRole("region", { name: "sessions", exact: true }).locator(`a[data-session="${thread}"]`).waitFor();
  await shot(page, "analyst-01-greeting");
});

await step("analyst: the plan gate: respond, edit, accept", async () => {
  await page.getByRole("textbox", { name: "Message" }).fill("Is Voltra a threat to our B2B fleet leasing plans?");
  await page.keyboard.press("Enter");
  const plan = card("plan");
  await plan.getByRole("heading", { name: "Review research plan" }).waitFor();
  // The description is Markdown: its title is bold text, not "# ...".
  await plan.locator("[data-description] p.font-semibold", { hasText: "Research plan (v1)" }).waitFor();
  await page.locator('ol[aria-label="gates"] li[data-current="true"]', { hasText: "plan" }).waitFor();
  await shot(page, "analyst-02-plan");
  await plan.getByRole("button", { name: "Respond", exact: true }).click();
  await plan.getByRole("textbox", { name: "response" }).fill("focus on pricing");
  await plan.getByRole("button", { name: "Send response" }).click();
  await card("plan").locator("[data-description] p.font-semibold", { hasText: "Research plan (v2)" }).waitFor();
  await idle();
  // Edit: the plan's arguments as JSON, one sub-question rewritten.
  await card("plan").getByRole("button", { name: "Edit", exact: true }).click();
  const args = card("plan").getByRole("textbox", { name: "edited arguments" });
  const edited = JSON.parse(await args.inputValue());
  expect(edited.plan && edited.plan.sub_questions.length >= 2, "the edit box does not hold the plan: " + JSON.stringify(edited).slice(0, 200));
  edited.plan.sub_questions[1].question = "How is Voltra pricing its fleet leases?";
  await args.fill(JSON.stringify(edited, null, 2));
  await card("plan").getByRole("button", { name: "Send edit" }).click();
  await card("plan").locator("[data-description] p.font-semibold", { hasText: "Research plan (v3)" }).waitFor();
  await card("plan").locator("[data-description]").getByText("How is Voltra pricing its fleet leases?").waitFor();
  await idle();
  await card("plan").getByRole("button", { name: "Accept", exact: true }).click();
});

await step("analyst: the discovery gate (with the research subgraph's progress): ignore, accept", async () => {
  const disc = card("discovery");
  await disc.getByRole("heading", { name: "Review discoveries" }).waitFor();
  await disc.getByText(/contradicts assumption A1/).first().waitFor();
  await session.getByRole("list", { name: "progress" }).locator('[data-progress-node="task_agent"]').first().waitFor();
  await shot(page, "analyst-03-discovery");
  // Ignore sets the finding in focus aside; the gate asks again.
  await disc.getByRole("button", { name: "Ignore", exact: true }).click();
  await session.locator('[data-role="ai"]', { hasText: "Noted: I set aside" }).waitFor();
  await idle();
  await card("discovery").getByRole("button", { name: "Accept", exact: true }).click();
});

await step("analyst: the final gate: a question, then accept; the saved report with its ID", async () => {
  const fin = card("final");
  await fin.getByRole("heading", { name: "Review final report" }).waitFor();
  await fin.locator("[data-description] p.font-semibold", { hasText: "Strategic analysis: Is Voltra a threat" }).waitFor();
  await shot(page, "analyst-04-final");
  // A question is answered from the research; the gate asks again.
  await fin.getByRole("button", { name: "Respond", exact: true }).click();
  await fin.getByRole("textbox", { name: "response" }).fill("What did we find about Voltra's prices?");
  await fin.getByRole("button", { name: "Send response" }).click();
  await session.locator('[data-role="ai"]', { hasText: "From the research:" }).waitFor();
  await idle();
  await card("final").getByRole("button", { name: "Accept", exact: true }).click();
  const report = page.getByRole("region", { name: "final report", exact: true });
  await report.locator("p.font-semibold", { hasText: "Strategic analysis: Is Voltra a threat" }).first().waitFor();
  const id = await report.locator("[data-report-id]").getAttribute("data-report-id");
  expect(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id), "the report ID is not a UUID: " + id);
  await session.locator('[data-role="ai"]', { hasText: "Saved your report" }).getByText(id).waitFor();
  await page.locator('li[data-current="true"]', { hasText: "saved" }).waitFor();
  await page.getByRole("region", { name: "saved reports", exact: true }).getByText(id).waitFor();
  await page.getByRole("region", { name: "sessions", exact: true }).locator(`a[data-session="${thread}"]`, { hasText: "report " + id }).waitFor();
  const res = await page.request.get(base + "/apps/analyst/api/v1/reports/" + id);
  expect(res.status() === 200, "GET the saved report: " + res.status());
  await shot(page, "analyst-05-saved");
  // The saved reports list opens it.
  await page.getByRole("region", { name: "saved reports", exact: true }).getByRole("button", { name: new RegExp(id) }).click();
  await page.getByRole("region", { name: "report", exact: true }).locator("p.font-semibold", { hasText: "Strategic analysis" }).first().waitFor();
});

await step("analyst: readable on a phone-sized screen", async () => {
  const phone = await ctx.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(page.url());
  await phone.locator('section[aria-label="final report"]').first().waitFor();
  const wide = await phone.evaluate(() => document.documentElement.scrollWidth);
  expect(wide <= 390, "the page is " + wide + " px wide on a 390 px screen");
  await shot(phone, "analyst-06-phone");
  await phone.close();
});

await finish();
