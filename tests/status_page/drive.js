// Drives the daemon's status page in a real headless Chromium (Debian's, through playwright-core)
// for tests/status_page.rs: opens the one-time URL, reads the server's pid and memory, writes a
// file in the root and times its event's arrival, kills the server and waits for its restart and
// last error, restarts it with the button (accepting the confirmation), filters the events,
// writes a screenshot, and prints what it saw as one JSON line.
"use strict";
const fs = require("fs");
const path = require("path");

const { PLAYWRIGHT, CHROMIUM, URL, ROOT, SCREENSHOT } = process.env;
const { chromium } = require(PLAYWRIGHT);

const out = { steps: [] };
const step = (s) => { out.steps.push(s); process.stderr.write("drive: " + s + "\n"); };

async function row(page, name) {
  return page.evaluate((name) => {
    const tr = [...document.querySelectorAll("tr[data-server]")].find((t) => t.dataset.server === name);
    if (!tr) return null;
    const cell = (c) => (tr.querySelector(c) || {}).textContent || "";
    return { state: tr.dataset.state, pid: cell(".pid"), mem: cell(".mem"), restarts: cell(".restarts"), error: cell(".last-error") };
  }, name);
}

async function until(page, what, ms, test) {
  const t0 = Date.now();
  for (;;) {
    const v = await test();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error("timed out waiting for " + what);
    await page.waitForTimeout(50);
  }
}

(async () => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const dialogs = [];
    page.on("dialog", (d) => { dialogs.push(d.message()); d.accept(); });
    const resp = await page.goto(URL);
    // The ticket's answer moves on to the page's secret path.
    await page.waitForURL((u) => !u.toString().includes("ticket="), { timeout: 10000 });
    out.landed = page.url();
    out.status = resp.status();
    step("opened " + out.landed);
    // The server's row, once it has a pid.
    const name = await until(page, "a pyright row with a pid", 20000, () => page.evaluate(() => {
      const tr = [...document.querySelectorAll("tr[data-server]")].find((t) => t.dataset.server.includes("pyright") && /\d/.test(t.querySelector(".pid").textContent));
      return tr && tr.dataset.server;
    }));
    out.server = name;
    const first = await row(page, name);
    out.first = first;
    step("pyright " + JSON.stringify(first));
    await page.evaluate(() => { window.__notReloaded = true; });

    // A plain write in the root: its event shows without a reload.
    const file = "written_" + Date.now() + ".py";
    const t0 = Date.now();
    fs.writeFileSync(path.join(ROOT, file), "x = 1\n");
    await until(page, "the write's file_changed event", 10000, () => page.evaluate((file) =>
      [...document.querySelectorAll("#events li[data-kind=file_changed]")].some((li) => li.textContent.includes(file)), file));
    out.write_ms = Date.now() - t0;
    out.not_reloaded = await page.evaluate(() => window.__notReloaded === true);
    step("write seen after " + out.write_ms + " ms");

    // A crash: the page shows a new pid, a restart and the last error.
    process.kill(Number(first.pid), "SIGKILL");
    const t1 = Date.now();
    const crashed = await until(page, "the restart after the crash", 30000, async () => {
      const r = await row(page, name);
      return r && /\d/.test(r.pid) && r.pid !== first.pid && Number(r.restarts) >= 1 && r.error.trim() ? r : null;
    });
    out.after_crash = crashed;
    out.crash_ms = Date.now() - t1;
    out.restart_event = await page.evaluate(() => document.querySelectorAll("#events li[data-kind=server_restarted]").length);
    step("after the crash " + JSON.stringify(crashed));

    // The restart button, confirmed.
    await page.click(`tr[data-server="${name}"] button.restart`);
    const restarted = await until(page, "a new pid after the restart button", 30000, async () => {
      const r = await row(page, name);
      return r && /\d/.test(r.pid) && r.pid !== crashed.pid ? r : null;
    });
    out.after_button = restarted;
    out.dialogs = dialogs;
    step("after the button " + JSON.stringify(restarted));

    // The events filtered by kind.
    await page.selectOption("#kind", "server_restarted");
    out.filtered_kinds = await page.evaluate(() => [...new Set([...document.querySelectorAll("#events li")].map((li) => li.dataset.kind))]);
    await page.selectOption("#kind", "");
    await page.waitForTimeout(300);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    out.sessions = await page.evaluate(() => [...document.querySelectorAll("#sessions tr[data-kind]")].map((tr) => tr.dataset.kind));
    out.ok = true;
  } catch (e) {
    out.ok = false;
    out.error = String(e && e.stack || e);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out) + "\n");
})();
