// What the browser flows (run.mjs and the apps' rehab.mjs, analyst.mjs, subgraphs.mjs, realty.mjs,
// listforge.mjs) share: Debian's Chromium
// through playwright-core with the flags that stop background networking, every request to
// another origin aborted and counted as a failure, page and console errors collected, named
// steps, and full-page screenshots for the Go test to check.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// start launches Chromium for a flow against base, saving screenshots in shots. opts:
//   usage:     the flow's usage line, printed when base or shots is missing
//   origins:   more origins requests may go to (other servers under test)
//   onRequest: called with every request's URL (before it is allowed or aborted)
//   viewport, timeout: the window size and the default timeout of each action
//   ignoreConsole: a RegExp of console errors that are expected (a 404 the flow provokes)
export async function start(base, shots, opts = {}) {
  if (!base || !shots) {
    console.error("usage: " + (opts.usage ?? "node <flow>.mjs <base URL> <screenshot dir>"));
    process.exit(2);
  }
  const profile = mkdtempSync(join(tmpdir(), "trellis-ui-e2e-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.TRELLIS_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
    viewport: opts.viewport ?? { width: 1280, height: 860 },
    colorScheme: "light",
  });
  ctx.setDefaultTimeout(opts.timeout ?? 45000); // generous: CI runs this beside other packages' tests under -race
  const problems = [];
  const offsite = [];
  const allowed = [base, ...(opts.origins ?? [])].filter(Boolean).map((u) => new URL(u).origin);
  await ctx.route("**/*", (route) => {
    const u = route.request().url();
    opts.onRequest?.(u);
    if (u.startsWith("data:") || u.startsWith("blob:") || allowed.includes(new URL(u).origin)) return route.continue();
    offsite.push(u);
    return route.abort();
  });
  const watch = (page) => {
    page.on("pageerror", (e) => problems.push("page error: " + e.message));
    page.on("console", (m) => {
      if (m.type() === "error" && !(opts.ignoreConsole && opts.ignoreConsole.test(m.text()))) problems.push("console error: " + m.text());
    });
  };
  ctx.on("page", watch);
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  watch(page);

  let passed = 0;
  const failed = [];
  return {
    ctx,
    page,
    async step(name, fn) {
      const t0 = Date.now();
      try {
        await fn();
        passed++;
        console.log(`ok   ${name} (${Date.now() - t0} ms)`);
      } catch (e) {
        failed.push(name);
        console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
        // What the page showed when the step failed, to look at (not checked by the Go test).
        await page.screenshot({ path: join(shots, "failed-" + name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60) + ".png"), fullPage: true }).catch(() => {});
      }
    },
    shot: (p, name) => p.screenshot({ path: join(shots, name + ".png"), fullPage: true }),
    expect(cond, msg) { if (!cond) throw new Error(msg); },
    // recordLengths notes the text length of the last element matching selector each time it
    // changes, to see an answer grow token by token (read back with lengths()).
    async recordLengths(p, selector) {
      await p.evaluate((sel) => {
        window.__lengths = [];
        new MutationObserver(() => {
          const el = [...document.querySelectorAll(sel)].pop();
          if (el) {
            const n = el.textContent.length;
            if (window.__lengths[window.__lengths.length - 1] !== n) window.__lengths.push(n);
          }
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      }, selector);
    },
    lengths: (p) => p.evaluate(() => window.__lengths),
    async finish() {
      await ctx.close();
      rmSync(profile, { recursive: true, force: true });
      if (offsite.length) {
        failed.push("offsite requests");
        console.log("FAIL requests left the machine: " + offsite.join(", "));
      }
      if (problems.length) {
        failed.push("page errors");
        console.log("FAIL the pages logged errors:\n  " + problems.join("\n  "));
      }
      console.log(`${passed} passed, ${failed.length} failed`);
      process.exit(failed.length ? 1 : 0);
    },
  };
}
