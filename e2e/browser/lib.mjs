// What the browser scripts share: the server under test from the
// environment, checks that log as they pass, screenshots, the JSON API as
// curl would call it, and a Chromium that talks to nothing else.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

export function need(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return v;
}

export const base = need("HOSTMINT_URL");
export const admin = need("HOSTMINT_ADMIN");
const shots = process.env.SCREENSHOTS || "screenshots";
mkdirSync(shots, { recursive: true });

export function check(ok, what) {
  if (!ok) throw new Error(`check failed: ${what}`);
  console.log(`ok: ${what}`);
}

// visible waits (up to 10 s) for what a click or a form post brings to
// show: the next page may still be loading when the check runs.
export async function visible(locator) {
  try {
    await locator.first().waitFor({ state: "visible", timeout: 10000 });
    return true;
  } catch {
    return false;
  }
}

export async function shot(page, name) {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

// api calls the JSON API as curl would.
export async function api(method, path, key, body) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

// withBrowser runs steps with a fresh Chromium and sets a failing exit code
// on the first failed step.
export async function withBrowser(steps) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    // Nothing but the server under test: this machine's network is closed,
    // and Chromium's own background connections only slow it down.
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  try {
    await steps(browser);
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
}
