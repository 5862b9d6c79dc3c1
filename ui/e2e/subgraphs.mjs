// Browser flow of subgraph tokens in the Studio chat, run by ui/subgraphs_browser_test.go
// against a dev server whose "nested" assistant writes its answer inside a subgraph:
//
//   node ui/e2e/subgraphs.mjs <base URL> <screenshot dir>
//
// The chat streams with stream_subgraphs; the messages|<ns> events are shown as they arrive,
// labelled by the subgraph and its node.
import { start } from "./kit.mjs";

const [base, shots] = process.argv.slice(2);
const { page, step, shot, expect, recordLengths, lengths, finish } = await start(base, shots);

await step("studio: a subgraph's tokens stream, labelled by subgraph", async () => {
  await page.goto(base + "/ui/assistants/nested");
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  await recordLengths(page, "[data-subgraph]");
  await page.getByRole("textbox", { name: "Message" }).fill("Write something");
  await page.keyboard.press("Enter");
  const sub = page.getByRole("region", { name: "subgraph writer › draft", exact: true });
  await sub.getByText("Hello from inside the writer subgraph, one word at a time.").waitFor();
  await sub.getByText("subgraph · writer › draft").waitFor();
  await page.locator('section[aria-label="chat"][data-busy="false"]').waitFor();
  const grew = await lengths(page);
  console.log(`     the subgraph's text took ${grew.length} lengths: ${grew.slice(0, 12).join(" ")}`);
  expect(grew.length >= 4, "the subgraph's text took " + grew.length + " lengths; it did not stream");
  await page.getByRole("list", { name: "progress" }).locator('[data-progress-node="draft"]').first().waitFor();
  // The parent's answer (the subgraph's result) is in the conversation too.
  await page.locator('[data-role="ai"]', { hasText: "The writer is done." }).waitFor();
  await shot(page, "subgraphs-01-tokens");
  // Without stream_subgraphs no subgraph text is shown.
  await page.getByRole("link", { name: "New thread" }).click();
  await page.getByLabel(/Stream subgraphs/).uncheck();
  await page.getByRole("textbox", { name: "Message" }).fill("Write again");
  await page.keyboard.press("Enter");
  await page.locator('[data-role="ai"]', { hasText: "The writer is done." }).waitFor();
  await page.locator('section[aria-label="chat"][data-busy="false"]').waitFor();
  expect(await page.locator("[data-subgraph]").count() === 0, "subgraph text shown without stream_subgraphs");
});

await step("graph: a subgraph folded into one node and unfolded", async () => {
  await page.goto(base + "/ui/assistants/nested/graph");
  await page.getByLabel("Show subgraphs (xray)").check();
  const view = page.getByRole("figure", { name: "graph" });
  await view.locator('[data-subgraph-box="writer"]').waitFor();
  await view.locator('[data-node="writer:draft"]').waitFor();
  await view.getByRole("button", { name: "fold writer" }).click();
  await view.locator('[data-node="writer"]').waitFor();
  expect(await view.locator('[data-node="writer:draft"]').count() === 0, "the folded subgraph's node is still drawn");
  expect(await view.locator('[data-subgraph-box]').count() === 0, "the folded subgraph's box is still drawn");
  await view.locator('path[data-edge="__start__->writer"]').waitFor({ state: "attached" });
  await view.locator('path[data-edge="writer->__end__"]').waitFor({ state: "attached" });
  await shot(page, "subgraphs-02-folded");
  await view.getByRole("button", { name: "unfold writer" }).click();
  await view.locator('[data-node="writer:draft"]').waitFor();
  await view.locator('[data-subgraph-box="writer"]').waitFor();
});

await finish();
