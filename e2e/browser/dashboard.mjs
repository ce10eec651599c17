// The dashboard walkthrough in a real browser: an operator signs in, creates a
// team and its domain and issues a sign-in link; the member opens it, creates
// a scoped key, the key works against the API, the member revokes it and the
// API refuses it; then the member creates a hostname in the browser, sees DNS
// answer it, repoints it, adds a record, makes a DNS-01 credential, runs
// diagnose and releases it, DNS following each step. Run by
// e2e/browser_test.go with the server's URL, admin token and DNS address;
// exits non-zero on the first failed step. Screenshots of the main pages go
// to $SCREENSHOTS.
//
//   HOSTMINT_URL=http://127.0.0.1:8080 HOSTMINT_ADMIN=... HOSTMINT_DNS=127.0.0.1:5353 \
//     SCREENSHOTS=./screenshots node dashboard.mjs
import { admin, api, base, check, need, shot, withBrowser, visible } from "./lib.mjs";
import { Resolver } from "node:dns/promises";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The server's own DNS listener, asked directly: what a client of the
// hostname would be told.
const resolver = new Resolver({ timeout: 1000, tries: 1 });
resolver.setServers([need("HOSTMINT_DNS")]);

// live waits until the nameservers serve a new hostname, so that the
// screenshots show the state a member normally sees.
async function live(key, id) {
  for (let i = 0; i < 100; i++) {
    const r = await api("GET", `/api/v1/hostnames/${id}`, key);
    if (r.body && r.body.status === "live") return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`hostname ${id} never went live`);
}

// answers is what DNS says of name: its A records, or "NXDOMAIN".
async function answers(name) {
  try {
    return (await resolver.resolve4(name)).sort().join(",");
  } catch (err) {
    if (err.code === "ENOTFOUND") return "NXDOMAIN";
    return err.code;
  }
}

// dnsSays waits until DNS answers name with want (a change is served within
// moments, not at once on every path).
async function dnsSays(name, want, what) {
  let got;
  for (let i = 0; i < 100; i++) {
    if ((got = await answers(name)) === want) break;
    await new Promise((done) => setTimeout(done, 100));
  }
  check(got === want, `${what}: DNS answers ${name} with ${got}`);
}

await withBrowser(operatorAndMember);

async function operatorAndMember(browser) {
  // ---- the operator
  const opCtx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const op = await opCtx.newPage();
  await op.goto(`${base}/dashboard/`);
  check(op.url().endsWith("/dashboard/signin"), "a signed-out browser lands on the sign-in page");
  await op.getByLabel("Admin token").fill("not-the-token");
  await op.getByRole("button", { name: "Sign in as operator" }).click();
  check(await visible(op.locator("#token-error")), "a wrong token is refused, the error next to the field");
  await shot(op, "signin-error");
  await op.getByLabel("Admin token").fill(admin);
  await op.getByRole("button", { name: "Sign in as operator" }).click();
  await op.waitForURL("**/dashboard/operator");
  check((await op.locator("h1").textContent()) === "Operator", "the operator is signed in");

  await op.locator("#account-name").fill("Acme");
  await op.locator("#account-plan").fill("team");
  await op.locator("#account-cap").fill("10");
  await op.getByRole("button", { name: "Create team" }).click();
  await op.waitForURL("**/dashboard/operator");
  check(await visible(op.getByRole("rowheader", { name: "Acme" })), "the team is listed");

  await op.locator("#domain-name").fill("bad domain");
  await op.getByRole("button", { name: "Add domain" }).click();
  check(await visible(op.locator("#domain-name-error")), "a bad domain name is refused next to the field");
  await op.locator("#domain-name").fill("acme.example.net");
  await op.locator("#domain-owner").selectOption({ label: "Acme" });
  await op.getByRole("button", { name: "Add domain" }).click();
  await op.waitForURL("**/dashboard/operator");
  check(await visible(op.getByRole("rowheader", { name: "acme.example.net" })), "the domain is listed");
  await shot(op, "operator");

  await op.getByRole("button", { name: "Issue a sign-in link for Acme" }).click();
  const link = await op.locator("#signin-link").inputValue();
  check(link.startsWith(`${base}/dashboard/signin/link?token=`), "a sign-in link is shown");
  check(await visible(op.getByRole("button", { name: "Copy" })), "the copy button appears (script ran)");
  await shot(op, "operator-link");

  // ---- the member, in another browser profile
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  const page = await ctx.newPage();
  await page.goto(link);
  await shot(page, "signin-link");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL("**/dashboard/team");
  check((await page.locator("h1").textContent()) === "Acme", "the member sees the team view");

  const keyForm = page.getByRole("form", { name: "New API key" });
  await keyForm.getByLabel("Name", { exact: true }).fill("ci");
  await keyForm.getByLabel("dns01:write").uncheck();
  await keyForm.getByLabel("Reach").selectOption({ label: "Domain acme.example.net" });
  await keyForm.getByLabel("Lifetime in days").fill("30");
  await page.getByRole("button", { name: "Create key" }).click();
  const key = await page.locator("#new-key").inputValue();
  check(/^svc_[a-z0-9]+_[a-z0-9]+$/.test(key), "the new key is shown once");
  await page.getByRole("button", { name: "Copy" }).click();
  await page.getByRole("button", { name: "Copied" }).waitFor();
  check((await page.evaluate(() => navigator.clipboard.readText())) === key, "the copy button copies the key");
  await shot(page, "team-new-key");

  let r = await api("GET", "/api/v1/hostnames", key);
  check(r.status === 200, `the key lists hostnames (${r.status})`);
  r = await api("POST", "/api/v1/hostnames", key, { ip: "198.51.100.7", subdomain: "web" });
  check(r.status === 201, `the key mints on its domain (${r.status})`);
  const web = r.body.id;
  r = await api("POST", "/api/v1/hostnames", key, { ip: "192.168.1.20", subdomain: "nas" });
  check(r.status === 201, `the key mints a private one (${r.status})`);
  const nas = r.body.id;
  r = await api("POST", `/api/v1/hostnames/${nas}/acme-credential`, key);
  check(r.status === 403, `the key lacks dns01:write (${r.status})`);
  for (const id of [web, nas]) await live(key, id);

  await page.goto(`${base}/dashboard/team`);
  check(await visible(page.getByRole("rowheader", { name: "web.acme.example.net" })), "the hostname is listed");
  check((await page.locator("body").textContent()).includes(key) === false, "the secret is not shown again");
  await shot(page, "team");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "team-phone");
  await page.setViewportSize({ width: 1280, height: 900 });

  await page.getByRole("button", { name: "Revoke key ci" }).click();
  await page.waitForURL("**/dashboard/team");
  check(await visible(page.getByText("No keys yet.")), "the key is gone from the list");
  r = await api("GET", "/api/v1/hostnames", key);
  check(r.status === 401, `the revoked key is refused (${r.status})`);

  await hostnameInBrowser(page);
  await tsigInBrowser(page);

  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL("**/dashboard/signin");
  await page.goto(`${base}/dashboard/team`);
  check(page.url().endsWith("/dashboard/signin"), "after sign-out the team view asks to sign in");
  // The link was used: it signs nobody in again.
  await page.goto(link);
  await page.getByRole("button", { name: "Sign in" }).click();
  check(await visible(page.getByRole("alert")), "a used link is refused");
}

// tsigInBrowser: a TSIG key made in the team view, its secret shown once
// in the files the clients read; nsupdate, given the key file exactly as
// shown, mints a hostname; the key is revoked from the list.
async function tsigInBrowser(page) {
  await page.goto(`${base}/dashboard/team`);
  const form = page.getByRole("form", { name: "New TSIG key" });
  await form.getByLabel("Name", { exact: true }).fill("laptop");
  await form.getByRole("button", { name: "Create TSIG key" }).click();
  const secret = await page.locator("#new-tsig-secret").inputValue();
  check(/^[A-Za-z0-9+/]{43}=$/.test(secret), "the TSIG key's secret is shown once");
  const keyFile = await page.locator("#new-tsig-nsupdate").inputValue();
  const certbot = await page.locator("#new-tsig-certbot").inputValue();
  check(certbot.includes("dns_rfc2136_algorithm = HMAC-SHA256") && certbot.includes(secret), "certbot's credentials are ready");
  await shot(page, "team-new-tsig-key");

  const dir = mkdtempSync(join(tmpdir(), "tsig-"));
  writeFileSync(join(dir, "laptop.key"), keyFile);
  const [host, port] = need("HOSTMINT_DNS").split(":");
  execFileSync("nsupdate", ["-k", join(dir, "laptop.key")], {
    input: `server ${host} ${port}\nzone acme.example.net\nupdate add tsig.acme.example.net 60 A 198.51.100.30\nsend\n`,
  });
  await dnsSays("tsig.acme.example.net", "198.51.100.30", "nsupdate with the key file as shown minted it");

  await page.goto(`${base}/dashboard/team`);
  check(!(await page.locator("body").textContent()).includes(secret), "the TSIG secret is not shown again");
  await page.getByRole("button", { name: "Revoke TSIG key laptop" }).click();
  await page.waitForURL("**/dashboard/team");
  check(await visible(page.getByText("No TSIG keys yet.")), "the TSIG key is gone from the list");
}

// hostnameInBrowser: the README walkthrough's hostname steps, from the team
// view instead of curl, each checked in DNS.
async function hostnameInBrowser(page) {
  const name = "browser.acme.example.net";
  await page.goto(`${base}/dashboard/team`);
  await page.getByLabel("IP address").fill("not-an-ip");
  await page.getByRole("button", { name: "Create hostname" }).click();
  check(await visible(page.locator("#host-ip-error")), "a bad address is refused next to the field");
  await page.getByLabel("IP address").fill("198.51.100.20");
  await page.getByLabel("Subdomain").fill("browser");
  await page.getByLabel("Domain", { exact: true }).selectOption("acme.example.net");
  await page.getByRole("button", { name: "Create hostname" }).click();
  await page.waitForURL("**/dashboard/team/hostnames/h_*");
  check((await page.locator("h1").textContent()) === name, "the new hostname's page opens");
  await dnsSays(name, "198.51.100.20", "created");

  await page.getByLabel("New IP address").fill("198.51.100.21");
  await page.getByRole("button", { name: "Update address" }).click();
  await page.waitForURL("**/dashboard/team/hostnames/h_*");
  check((await page.locator("#host-address").textContent()).includes("198.51.100.21"), "the page shows the new address");
  await dnsSays(name, "198.51.100.21", "repointed");

  // Records and credentials are for live hostnames: wait for the nameservers.
  for (let i = 0; i < 100 && (await page.locator("#host-status").textContent()) !== "live"; i++) {
    await new Promise((done) => setTimeout(done, 100));
    await page.reload();
  }
  check((await page.locator("#host-status").textContent()) === "live", "the hostname reads live");
  await page.getByText("New TXT record").click(); // the form is folded until asked for
  await page.locator("#rec-TXT-text").fill("hello from the dashboard");
  await page.getByRole("button", { name: "Add TXT record" }).click();
  await page.waitForURL("**/dashboard/team/hostnames/h_*");
  check(await visible(page.getByRole("cell", { name: '"hello from the dashboard"', exact: true })), "the TXT record is listed");
  const txt = await resolver.resolveTxt(name);
  check(txt.some((t) => t.join("") === "hello from the dashboard"), "DNS serves the TXT record");

  await page.getByRole("button", { name: "Create DNS-01 credential" }).click();
  const password = await page.locator("#cred-password").inputValue();
  check(password.length >= 32, "the DNS-01 password is shown once");
  check(await visible(page.getByRole("button", { name: "Copy" })), "with a copy button");
  check((await page.locator("#cred-fulldomain").inputValue()) === `_acme-challenge.${name}`, "the full domain is shown");

  await page.getByRole("button", { name: "Run diagnose" }).click();
  check(await visible(page.locator("#report-summary")), "the diagnose report is shown");
  check((await page.locator("#report tbody tr").count()) > 0, "with its checks and verdicts");
  await shot(page, "hostname");

  await page.getByRole("button", { name: "Release…" }).click();
  await page.getByRole("button", { name: `Yes, release ${name}` }).click();
  await page.waitForURL("**/dashboard/team");
  check(page.url().endsWith("/dashboard/team"), "release returns to the team view");
  await dnsSays(name, "NXDOMAIN", "released");
}
