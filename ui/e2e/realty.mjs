// Browser test of the realty app's page (/ui/apps/realty): Playwright (playwright-core) driving
// Debian's Chromium against servers running the realty app offline.
//
//   node ui/e2e/realty.mjs <base URL: no map tiles> <screenshot dir> [<base URL: map tiles set> <tile server URL>]
//
// ui/realty_browser_test.go starts the servers and runs this; it then checks the screenshots.
// Every request must go to the servers under test (the tile server included): any other is
// aborted and fails the run.
import { start } from "./kit.mjs";

const [base, shots, tilesBase, tileServer] = process.argv.slice(2);
const tileRequests = [];
const { ctx, page, step, shot, expect, finish } = await start(base, shots, {
  usage: "node realty.mjs <base URL> <screenshot dir> [<base URL with map tiles> <tile server URL>]",
  origins: [tilesBase, tileServer],
  onRequest: (u) => { if (tileServer && u.startsWith(tileServer)) tileRequests.push(u); },
  viewport: { width: 1400, height: 900 },
  timeout: 60000, // generous: the machine is shared and the tests run under -race
  ignoreConsole: /status of 40[149]/,
});
const input = () => page.getByRole("textbox", { name: "Message" });
const cards = () => page.getByRole("list", { name: "listing cards" }).last().getByRole("button");
const markers = () => page.getByRole("region", { name: "listings map" }).locator(".leaflet-marker-icon");
// answered waits until the page has n answers and none is streaming.
async function answered(n) {
  await page.waitForFunction((n) => document.querySelectorAll('[data-role="assistant"]').length >= n &&
    !document.querySelector('[data-role="assistant"][aria-busy="true"]') && !document.querySelector("#realty-input[disabled]"), n);
}
let firstTitle = "";

await step("realty: empty page, search streams cards, input disabled while streaming", async () => {
  await page.goto(base + "/ui/apps/realty");
  await page.getByRole("heading", { name: "Realty" }).waitFor();
  await page.getByText("No sessions yet.").waitFor();
  await page.getByText("Ask about homes for sale.").waitFor();
  await page.getByText("No listing located yet").waitFor();
  // Watch the answer grow and the input's state, from before the message is sent.
  await page.evaluate(() => {
    window.__texts = [];
    window.__disabled = false;
    new MutationObserver(() => {
      const a = [...document.querySelectorAll('[data-role="assistant"]')].pop();
      const t = a ? a.textContent : "";
      if (t && window.__texts[window.__texts.length - 1] !== t) window.__texts.push(t);
      if (document.querySelector("#realty-input[disabled]")) window.__disabled = true;
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await input().fill("3 bedroom homes in Austin under 600k");
  await input().press("Enter");
  await answered(1);
  // The answer streamed: the page took it in many token events.
  const tokens = Number(await page.locator('[data-role="assistant"]').last().getAttribute("data-tokens"));
  expect(tokens >= 5, `the answer came in ${tokens} token events, want it streamed in several`);
  expect(await page.evaluate(() => window.__disabled), "the input was never disabled while the answer streamed");
  expect(await input().isEnabled(), "the input stays disabled after the answer");
  const n = await cards().count();
  expect(n >= 2, `${n} listing cards, want at least 2`);
  const all = await cards().allTextContents();
  expect(all.every((t) => /Austin/.test(t) && /\$\d/.test(t)), "cards without an Austin address and a price: " + all.join(" | "));
  await page.getByRole("link", { name: /^on Zillow/ }).first().waitFor();
  // The page has the session in its address and the sidebar its title.
  await page.waitForURL(/session=/);
  await page.getByRole("list", { name: "session list" }).getByRole("link", { name: /Austin/ }).waitFor();
  firstTitle = (await page.getByRole("list", { name: "session list" }).getByRole("link").first().textContent()).trim();
  await page.getByRole("group", { name: "suggestions" }).getByRole("button").first().waitFor();
  // The grid lays the cards out side by side.
  const boxes = await Promise.all([0, 1].map((i) => cards().nth(i).boundingBox()));
  expect(Math.abs(boxes[0].y - boxes[1].y) < 4, "grid cards are not side by side");
  await shot(page, "r01-search-grid");
});

await step("realty: list layout kept across a reload", async () => {
  await page.getByRole("button", { name: "List", exact: true }).last().click();
  await page.locator('[data-layout="list"]').waitFor();
  const boxes = await Promise.all([0, 1].map((i) => cards().nth(i).boundingBox()));
  expect(boxes[1].y > boxes[0].y + boxes[0].height - 2, "list cards are not one under the other");
  await page.reload();
  await page.locator('[data-layout="list"]').waitFor();
  expect(await page.getByRole("button", { name: "List", exact: true }).last().getAttribute("aria-pressed") === "true", "List is not pressed after the reload");
  expect(await cards().count() >= 2, "the session's cards are not shown again after the reload");
  await shot(page, "r02-list-reloaded");
  await page.getByRole("button", { name: "Grid", exact: true }).last().click();
  await page.locator('[data-layout="grid"]').waitFor();
});

let detailZpid = "";
await step("realty: a card opens its detail, and the map shows a marker per located listing", async () => {
  const names = await cards().evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")));
  const first = names[0].replace(/^details of /, "");
  const second = names[1].replace(/^details of /, "");
  detailZpid = await cards().first().getAttribute("data-zpid");
  await cards().first().click();
  await answered(2);
  const detail = page.getByRole("article", { name: "detail of " + first }).first();
  await detail.waitFor();
  await detail.getByText("Year built").waitFor();
  await detail.getByText("Zestimate").waitFor();
  expect(await markers().count() === 1, `${await markers().count()} markers after one detail, want 1`);
  expect(await page.locator(".leaflet-tile").count() === 0, "tiles were drawn though none are configured");
  // The offline base layer: land from the bundled Natural Earth file under the marker, and the
  // bundled Census file's county lines (Leaflet leaves a shape out of view as "M0 0"); zoomed
  // out, the county lines around Austin are drawn.
  await page.waitForFunction(() => [...document.querySelectorAll('[aria-label="listings map"] path.trellis-land')].some((p) => (p.getAttribute("d") ?? "").length > 8));
  await page.locator('[aria-label="listings map"] path.trellis-county').waitFor({ state: "attached" });
  // The demo regions' city outlines: the listing stands inside Austin's urban area, drawn under
  // it (the point under the marker's tip is in the outline's fill), in the base pane below the
  // marker pane.
  await page.waitForFunction(() => [...document.querySelectorAll('[aria-label="listings map"] path.trellis-urban')].some((p) => (p.getAttribute("d") ?? "").length > 8));
  const underMarker = await page.evaluate(() => {
    const icon = document.querySelector('[aria-label="listings map"] .leaflet-marker-icon');
    const r = icon.getBoundingClientRect();
    const tip = { x: r.left + r.width / 2, y: r.bottom - 1 };
    return [...document.querySelectorAll('[aria-label="listings map"] path.trellis-urban')].some((path) => {
      const m = path.getScreenCTM();
      if (!m) return false;
      const pt = new DOMPoint(tip.x, tip.y).matrixTransform(m.inverse());
      const svgPt = path.ownerSVGElement.createSVGPoint();
      svgPt.x = pt.x; svgPt.y = pt.y;
      return path.isPointInFill(svgPt);
    });
  });
  expect(underMarker, "no city outline is drawn under the Austin listing's marker");
  const fill = await page.locator('[aria-label="listings map"] path.trellis-urban').first().evaluate((p) => getComputedStyle(p).fill);
  const land = await page.locator('[aria-label="listings map"] path.trellis-land').first().evaluate((p) => getComputedStyle(p).fill);
  expect(fill !== land && fill !== "none", `the city outline's fill ${fill} does not stand apart from the land's ${land}`);
  for (let i = 0; i < 4; i++) await page.getByRole("region", { name: "listings map" }).getByRole("button", { name: "Zoom out" }).click();
  await page.waitForFunction(() => [...document.querySelectorAll('[aria-label="listings map"] path.trellis-county')].some((p) => (p.getAttribute("d") ?? "").split(/[ML]/).length > 4));
  // Zoomed out to the city, its name is written inside the map's box (the towns around it
  // show one or two zoom-outs later).
  await page.locator('[aria-label="listings map"] .trellis-place-name', { hasText: /^Austin$/ }).waitFor();
  const named = await page.evaluate(() => {
    const box = document.querySelector('[aria-label="listings map"]').getBoundingClientRect();
    return [...document.querySelectorAll('[aria-label="listings map"] .trellis-place-name')].filter((t) => {
      const r = t.getBoundingClientRect();
      return r.right > box.left && r.left < box.right && r.bottom > box.top && r.top < box.bottom;
    }).map((t) => t.textContent);
  });
  expect(named.includes("Austin"), "the places named in the map: " + JSON.stringify(named));
  // A second listing's detail adds a second marker.
  await page.getByRole("list", { name: "listing cards" }).first().getByRole("button", { name: "details of " + second }).click();
  await answered(3);
  await page.getByRole("article", { name: "detail of " + second }).first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[aria-label="listings map"] .leaflet-marker-icon').length === 2);
  await page.getByRole("heading", { name: /Map \(2 located\)/ }).waitFor();
  await markers().first().click();
  await page.locator(".leaflet-popup-content").getByText(/Austin/).waitFor();
  const popup = await page.locator(".leaflet-popup-content").textContent();
  expect(/\$\d/.test(popup) && /bd/.test(popup), "the popup lacks the price or the beds: " + popup);
  // The marker's image is the bundled one, served by the server.
  const src = await markers().first().getAttribute("src");
  expect(src.startsWith("/ui/assets/marker-icon"), "the marker's image is " + src);
  expect(await markers().first().evaluate((img) => img.complete && img.naturalWidth > 0), "the marker's image did not load");
  await page.getByRole("region", { name: "listings map" }).scrollIntoViewIfNeeded();
  await shot(page, "r03-detail-map");
  // The dark theme: the map's popup stays readable.
  await page.getByRole("button", { name: "dark theme" }).click();
  const color = await page.locator(".leaflet-popup-content").evaluate((e) => getComputedStyle(e).color);
  expect(color === "rgb(24, 24, 27)", "the popup's text in the dark theme is " + color);
  await shot(page, "r03-detail-map-dark");
  await page.getByRole("button", { name: "light theme" }).click();
  // With TRELLIS_UI_DOCS=<dir>, the map as the window shows it at 1280x800 and 390x844, for
  // docs/ui/ (not checked by the Go test): zoomed out to show the city outline and its places.
  const docs = process.env.TRELLIS_UI_DOCS;
  if (docs) {
    const map = page.getByRole("region", { name: "listings map" });
    await map.locator(".leaflet-popup-close-button").click().catch(() => {});
    for (let i = 0; i < 5; i++) await map.getByRole("button", { name: "Zoom out" }).click();
    for (const [tag, w, h] of [["desktop", 1280, 800], ["phone", 390, 844]]) {
      await page.setViewportSize({ width: w, height: h });
      await map.evaluate((e) => e.scrollIntoView({ block: "center" }));
      await page.waitForFunction(() => [...document.querySelectorAll('[aria-label="listings map"] .trellis-place-name')].length > 0);
      await page.screenshot({ path: docs + "/realty-map-" + tag + ".png" });
    }
    await page.setViewportSize({ width: 1280, height: 860 });
  }
});

await step("realty: a hint is sent when clicked", async () => {
  const hint = page.getByRole("group", { name: "suggestions" }).getByRole("button").first();
  const text = (await hint.textContent()).trim();
  await hint.click();
  await answered(4);
  const users = await page.locator('[data-role="user"]').allTextContents();
  expect(users[users.length - 1].trim() === text, `the last message is ${users[users.length - 1]}, want the hint ${text}`);
  await shot(page, "r04-hint");
});

await step("realty: a second session, switch, delete on hover", async () => {
  await page.getByRole("button", { name: "New search" }).click();
  await page.getByText("Ask about homes for sale.").waitFor();
  await input().fill("Condos in Miami\nunder $500k");
  // Shift+Enter adds a line instead of sending.
  await input().press("End");
  await input().press("Shift+Enter");
  expect((await input().inputValue()).split("\n").length === 3, "Shift+Enter did not start a new line");
  await input().press("Enter");
  await answered(1);
  expect(await cards().count() >= 1, "no Miami cards");
  const sessions = page.getByRole("list", { name: "session list" }).getByRole("listitem");
  await page.waitForFunction(() => document.querySelectorAll('[aria-label="session list"] li').length === 2);
  // The first session opens again with its answers.
  await sessions.getByRole("link", { name: firstTitle }).click();
  await answered(4);
  await shot(page, "r05-sessions");
  // Its delete button shows on hover.
  const row = sessions.filter({ hasText: firstTitle });
  const del = row.getByRole("button", { name: /^delete session/ });
  expect(Number(await del.evaluate((b) => getComputedStyle(b).opacity)) < 0.1, "the delete button shows without hover");
  await row.hover();
  await page.waitForFunction((name) => {
    const b = [...document.querySelectorAll('[aria-label="session list"] button')].find((x) => x.getAttribute("aria-label") === "delete session " + name);
    return b && Number(getComputedStyle(b).opacity) > 0.9;
  }, firstTitle);
  await del.click();
  await page.waitForFunction(() => document.querySelectorAll('[aria-label="session list"] li').length === 1);
  const left = await page.evaluate(async () => (await fetch("/apps/realty/sessions")).json());
  expect(left.length === 1, "the server still has " + left.length + " sessions");
  await page.getByText(/Miami/).first().waitFor();
});

await step("realty: phone-sized screen", async () => {
  const phone = await ctx.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(base + "/ui/apps/realty");
  await phone.getByRole("list", { name: "listing cards" }).first().waitFor();
  const wide = await phone.evaluate(() => document.documentElement.scrollWidth);
  expect(wide <= 390, `the page is ${wide}px wide on a 390px screen`);
  await phone.getByRole("button", { name: /^Sessions \(\d+\)/ }).click();
  await phone.getByRole("list", { name: "session list" }).waitFor();
  // On a touch screen there is no hover: the delete button is there.
  expect(Number(await phone.getByRole("button", { name: /^delete session/ }).first().evaluate((b) => getComputedStyle(b).opacity)) > 0.9, "no delete button on a phone");
  await shot(phone, "r06-phone");
  await phone.close();
});

if (tilesBase && tileServer) {
  await step("realty: with map tiles configured, tiles come from the tile server", async () => {
    const p = await ctx.newPage();
    const cfg = await (await p.request.get(tilesBase + "/ui/config.json")).json();
    expect(cfg.map_tiles.startsWith(tileServer), "config.json: " + JSON.stringify(cfg));
    await p.goto(tilesBase + "/ui/apps/realty");
    await p.getByText("Ask about homes for sale.").waitFor();
    await p.getByRole("textbox", { name: "Message" }).fill("Show me the details of zpid " + detailZpid);
    await p.getByRole("textbox", { name: "Message" }).press("Enter");
    await p.getByRole("region", { name: "listings map" }).locator(".leaflet-marker-icon").first().waitFor();
    await p.waitForFunction(() => [...document.querySelectorAll(".leaflet-tile")].some((t) => t.complete && t.naturalWidth > 0));
    expect(tileRequests.length > 0, "no request reached the tile server");
    // The tiles lie over the offline base layer, city outlines and place names included: their
    // pane is stacked above both of the base map's panes, and under the markers.
    await p.locator('[aria-label="listings map"] path.trellis-urban').first().waitFor({ state: "attached" });
    const z = await p.evaluate(() => {
      const q = (c) => Number(getComputedStyle(document.querySelector('[aria-label="listings map"] .' + c)).zIndex);
      return { tiles: q("leaflet-tile-pane"), base: q("leaflet-trellis-base-pane"), names: q("leaflet-trellis-base-names-pane"), markers: q("leaflet-marker-pane") };
    });
    expect(z.base < z.tiles && z.names < z.tiles && z.tiles < z.markers, "the map's panes are stacked " + JSON.stringify(z));
    await shot(p, "r07-tiles");
    await p.close();
  });
}

await finish();
