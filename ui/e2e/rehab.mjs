// Browser flow of the Rehabify page (/ui/apps/rehab), run by ui/rehab_browser_test.go against a
// dev server with apps/rehab and its demo user:
//
//   node ui/e2e/rehab.mjs <base URL> <screenshot dir>
//
// A Portuguese message streams its answer token by token while the portfolio and the action
// log update; a todo is added; two properties are compared and a PDF report fetched; a removal
// waits for consent, which the page gives; a reload shows the conversation again.
import { start } from "./kit.mjs";

const [base, shots] = process.argv.slice(2);
const { ctx, page, step, shot, expect, recordLengths, lengths, finish } = await start(base, shots);
const chat = page.getByRole("region", { name: "conversa", exact: true });
const portfolio = page.getByRole("region", { name: "portfólio", exact: true });
const actions = page.getByRole("region", { name: "ações recentes", exact: true });
const idle = () => page.locator('section[aria-label="conversa"][data-busy="false"]').waitFor();
const say = async (text) => {
  await page.getByRole("textbox", { name: "Mensagem" }).fill(text);
  await page.keyboard.press("Enter");
};

await step("rehab: the page shows the demo user's portfolio and past conversation", async () => {
  await page.goto(base + "/ui/apps/rehab");
  await page.getByRole("heading", { name: "Rehabify" }).waitFor();
  await portfolio.locator('li[data-property="abc-123"]').getByText("T2 Alfama, 180k€, reno 15-25k€").waitFor();
  await portfolio.locator('li[data-property="def-456"]').waitFor();
  await portfolio.getByText("180.000€ · 65m² · 2.769€/m²").waitFor();
  await page.getByRole("region", { name: "conversas", exact: true }).getByText("Discutimos o T2 de Alfama.").waitFor();
  await page.getByRole("region", { name: "tarefas", exact: true }).getByText("Nenhuma tarefa").waitFor();
  await shot(page, "rehab-01-start");
});

await step("rehab: an analysis in Portuguese streams token by token; portfolio and actions update", async () => {
  await recordLengths(page, 'li[data-role="assistant"]');
  const url = "https://www.idealista.pt/imovel/50112233/";
  await say("Analisa este imóvel: " + url);
  await chat.locator('li[data-role="assistant"]', { hasText: "Preço: 245.000€ | Área: 78m² | €/m²: 3.141€" }).waitFor();
  await idle();
  const tokens = Number(await chat.getAttribute("data-tokens"));
  const grew = await lengths(page);
  console.log(`     ${tokens} message events; the answer's text took ${grew.length} lengths: ${grew.slice(0, 12).join(" ")}`);
  expect(tokens >= 10, "the answer came in " + tokens + " message events, want it token by token");
  // How many of those the page paints depends on how the events are packed into network reads
  // (a quiet machine may get them in a few): the lengths are logged, not asserted.
  expect(page.url().includes("?conversation="), "the page did not put the conversation in the address: " + page.url());
  const call = chat.locator('details[data-tool-call="trigger_property_analysis"]');
  await call.locator("summary").click();
  await call.getByText(url).waitFor();
  await chat.getByText(/✓ trigger_property_analysis: T2 Cedofeita, 245k€/).waitFor();
  await portfolio.locator('li[data-active="true"]', { hasText: "T2 Cedofeita, 245k€" }).waitFor();
  await actions.locator('li[data-action="save_to_portfolio"]', { hasText: "Analisa este imóvel" }).first().waitFor();
  await actions.locator('li[data-action="analysis_renovation"]').first().waitFor();
  // The log in pt-PT: human names for actions and fields, dates as day/month/year.
  const saved = actions.locator('li[data-action="save_to_portfolio"]').first();
  await saved.getByText("Guardado na carteira").waitFor();
  const logText = await actions.innerText();
  expect(!/save_to_portfolio|field_changed/.test(logText), "the action log shows raw names: " + logText.slice(0, 200));
  expect(/\b\d{2}\/\d{2}\/\d{2,4}\b/.test(logText), "the action log's dates are not day/month/year: " + logText.slice(0, 200));
  const fields = await actions.locator("[data-field]").evaluateAll((els) => els.map((e) => e.querySelector("span")?.textContent ?? ""));
  expect(fields.length > 0 && fields.every((f) => !/_/.test(f)), "raw field names in the action log: " + fields.join(", "));
  await shot(page, "rehab-02-analysis");
});

await step("rehab: a todo, a comparison and the PDF report", async () => {
  await say("Adiciona a tarefa visitar o imóvel da Graça");
  await page.getByRole("region", { name: "tarefas", exact: true }).locator('li[data-todo-status="pending"]', { hasText: "Visitar o imóvel da Graça" }).waitFor();
  await idle();
  await portfolio.getByRole("checkbox", { name: /comparar T2 Alfama/ }).check();
  await portfolio.getByRole("checkbox", { name: /comparar T2 Graça/ }).check();
  await portfolio.getByRole("button", { name: "Comparar (2)" }).click();
  const table = page.getByRole("region", { name: "comparação", exact: true }).getByRole("table");
  await table.getByRole("cell", { name: "180.000€", exact: true }).waitFor();
  await table.getByRole("cell", { name: "230.000€", exact: true }).waitFor();
  const href = await portfolio.locator('li[data-property="abc-123"]').getByRole("link", { name: "Relatório PDF" }).getAttribute("href");
  const res = await page.request.get(base + href);
  const body = await res.body();
  expect(res.status() === 200 && res.headers()["content-type"] === "application/pdf" && body.subarray(0, 5).toString() === "%PDF-",
    `the report link ${href} gave ${res.status()} ${res.headers()["content-type"]}`);
  await shot(page, "rehab-03-todo-compare");
});

await step("rehab: a removal waits for consent, given from the page", async () => {
  await say("Remove o de Alfama da carteira");
  const card = page.getByRole("region", { name: "consentimento", exact: true });
  await card.getByText("Confirmas").waitFor();
  expect(await portfolio.locator('li[data-property="abc-123"]').count() === 1, "removed before consent");
  await shot(page, "rehab-04-consent");
  await card.getByRole("button", { name: "Sim, remover" }).click();
  await chat.locator('li[data-role="assistant"]', { hasText: "Removido do portfólio" }).waitFor();
  await idle();
  await card.waitFor({ state: "detached" });
  await portfolio.locator('li[data-property="abc-123"]').waitFor({ state: "detached" });
  await actions.locator('li[data-action]', { hasText: "archived" }).first().waitFor();
  await shot(page, "rehab-05-removed");
});

await step("rehab: a reload shows the conversation, its todos and its summary line", async () => {
  await page.reload();
  await chat.locator('li[data-role="user"]', { hasText: "Remove o de Alfama da carteira" }).waitFor();
  await chat.locator('li[data-role="assistant"]', { hasText: "Removido do portfólio" }).waitFor();
  await page.getByRole("region", { name: "tarefas", exact: true }).getByText("Visitar o imóvel da Graça").waitFor();
  await page.getByRole("region", { name: "conversas", exact: true }).locator('button[aria-current="true"]').waitFor();
});

await step("rehab: readable on a phone-sized screen", async () => {
  const phone = await ctx.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(page.url());
  await phone.locator('li[data-role="assistant"]').first().waitFor();
  const wide = await phone.evaluate(() => document.documentElement.scrollWidth);
  expect(wide <= 390, "the page is " + wide + " px wide on a 390 px screen");
  await shot(phone, "rehab-06-phone");
  await phone.close();
});

await finish();
