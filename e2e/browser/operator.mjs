// The operator's view in a real browser: the operator signs in, creates a
// team and its domain, enables DNSSEC and reads the DS to give the parent,
// marks it published, sets a CAA policy (a bad line refused next to the
// field), suspends, restores and (after a confirmation) terminates a team's
// hostnames, revokes a team's key, signs a member's browser out, and
// suspends and restores the team; each step is checked through the API
// too. Run by e2e/browser_test.go against a server with a
// cert_encryption_key_file; exits non-zero on the first failed step.
// Screenshots go to $SCREENSHOTS.
//
//   HOSTMINT_URL=http://127.0.0.1:8080 HOSTMINT_ADMIN=... SCREENSHOTS=./screenshots node operator.mjs
import { admin, api, base, check, shot, withBrowser, visible } from "./lib.mjs";

async function adminDomain(name) {
  const r = await api("GET", "/api/admin/domains", admin);
  return r.body.domains.find((d) => d.name === name);
}

await withBrowser(operator);

async function operator(browser) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const op = await ctx.newPage();
  await op.goto(`${base}/dashboard/signin`);
  await op.getByLabel("Admin token").fill(admin);
  await op.getByRole("button", { name: "Sign in as operator" }).click();
  await op.waitForURL("**/dashboard/operator");

  // ---- a team and its domain
  await op.locator("#account-name").fill("Globex");
  await op.locator("#account-plan").fill("team");
  await op.getByRole("button", { name: "Create team" }).click();
  await op.waitForURL("**/dashboard/operator");
  await op.locator("#domain-name").fill("globex.example.net");
  await op.locator("#domain-owner").selectOption({ label: "Globex" });
  await op.getByRole("button", { name: "Add domain" }).click();
  await op.waitForURL("**/dashboard/operator");
  check(await visible(op.getByRole("link", { name: "globex.example.net" })), "the domain is listed with a link");

  // ---- DNSSEC: enable, the DS to give the parent, mark it published
  await op.getByRole("link", { name: "globex.example.net" }).click();
  await op.waitForURL("**/dashboard/operator/domains/*");
  const domainURL = op.url();
  check((await op.locator("h1").textContent()) === "globex.example.net", "the domain's page opens");
  await op.getByRole("button", { name: "Enable DNSSEC" }).click();
  await op.waitForURL(domainURL);
  const ds = await op.getByLabel("DS record").first().inputValue();
  check(/^globex\.example\.net\.\s+\d+\s+IN\s+DS\s+\d+ 13 2 [0-9A-F]{64}$/i.test(ds), `the DS is shown (${ds})`);
  let d = await adminDomain("globex.example.net");
  check(d.dnssec === true && d.ds[0] === ds, "the API reports the zone signed, with the same DS");
  check(await visible(op.getByRole("button", { name: "Copy" })), "the DS has a copy button");
  await op.getByRole("button", { name: "Mark DS published" }).click();
  await op.waitForURL(domainURL);
  check(await visible(op.getByText("DS published at the parent")), "the DS is marked published");
  check((await adminDomain("globex.example.net")).ds_published === true, "the API reports ds_published");

  // ---- CAA policy: a bad line is refused next to the field, then one is set
  const caa = op.getByLabel("CAA records, one a line");
  await caa.fill('0 issue "letsencrypt.org"\n0 nonsense "x"');
  await op.getByRole("button", { name: "Save CAA policy" }).click();
  check(await visible(op.locator("#caa-error")), "a bad CAA line is refused next to the field");
  check((await op.locator("#caa-error").textContent()).includes("caa[1]"), "the error names the line, as the API does");
  check((await adminDomain("globex.example.net")).caa.length === 0, "the refused policy was not saved");
  await caa.fill('0 issue "letsencrypt.org"\n0 iodef "mailto:security@globex.example.net"');
  await op.getByRole("button", { name: "Save CAA policy" }).click();
  await op.waitForURL(domainURL);
  d = await adminDomain("globex.example.net");
  check(d.caa.length === 2 && d.caa[0] === '0 issue "letsencrypt.org"', "the API reports the CAA policy");
  await shot(op, "operator-domain");

  // ---- a team's hostnames: suspend, restore, terminate
  const team = (await api("GET", "/api/admin/domains", admin)).body.domains.find((x) => x.name === "globex.example.net").account_id;
  let r = await api("POST", `/api/admin/accounts/${team}/keys`, admin, { name: "ci" });
  check(r.status === 201, `a team key is made through the admin API (${r.status})`);
  const key = r.body.key;
  const keyID = r.body.id;
  r = await api("POST", "/api/v1/hostnames", key, { ip: "198.51.100.8", subdomain: "shop" });
  check(r.status === 201, `the team mints a hostname (${r.status})`);
  const shop = r.body;
  r = await api("POST", "/api/v1/hostnames", key, { ip: "198.51.100.9", subdomain: "spam" });
  check(r.status === 201, `the team mints another (${r.status})`);
  const spam = r.body;

  await op.goto(`${base}/dashboard/operator`);
  await op.getByRole("link", { name: "Hostnames of every team" }).click();
  await op.waitForURL("**/dashboard/operator/hostnames");
  check(await visible(op.getByText("Showing 2 of 2")), "the list says how many it shows");
  await op.getByLabel("Team").selectOption({ label: "Globex" });
  await op.getByRole("button", { name: "Show" }).click();
  await op.waitForURL(`**/dashboard/operator/hostnames?team=${team}`);
  await op.getByRole("button", { name: `Suspend ${shop.hostname}` }).click();
  check(await visible(op.getByText(`${shop.hostname} is suspended.`)), "the hostname is suspended");
  check((await api("GET", `/api/v1/hostnames/${shop.id}`, key)).body.status === "suspended", "the API reports it suspended");
  await shot(op, "operator-hostnames");
  await op.getByRole("button", { name: `Restore ${shop.hostname}` }).click();
  check(await visible(op.getByText(`${shop.hostname} is restored`)), "the hostname is restored");
  const st = (await api("GET", `/api/v1/hostnames/${shop.id}`, key)).body.status;
  check(st === "pending" || st === "live", `the API reports it back (${st})`);

  await op.getByRole("link", { name: `Terminate ${spam.hostname}…` }).click();
  await op.waitForURL(`**/dashboard/operator/hostnames/${spam.id}/terminate?team=${team}`);
  check(await visible(op.getByRole("heading", { name: `Terminate ${spam.hostname}?` })), "termination asks first");
  await shot(op, "operator-terminate");
  await op.getByRole("button", { name: `Terminate ${spam.hostname}` }).click();
  check(await visible(op.getByText(`${spam.hostname} is terminated.`)), "the hostname is terminated");
  check((await api("GET", `/api/v1/hostnames/${spam.id}`, key)).body.status === "terminated", "the API reports it terminated");

  // ---- a team's keys: listed without the secret, revoked
  await op.goto(`${base}/dashboard/operator`);
  await op.getByRole("link", { name: "Globex", exact: true }).click();
  await op.waitForURL(`**/dashboard/operator/accounts/${team}`);
  check(await visible(op.getByRole("rowheader", { name: "ci" })), "the team's key is listed");
  check((await op.locator("body").textContent()).includes(key) === false, "the key's secret is not shown");
  await shot(op, "operator-account");
  check((await api("GET", "/api/v1/hostnames", key)).status === 200, "the key works before it is revoked");
  await op.getByRole("button", { name: `Revoke key ci (${keyID})` }).click();
  check(await visible(op.getByText(`Key ${keyID} is revoked`)), "the key is revoked");
  check((await api("GET", "/api/v1/hostnames", key)).status === 401, "the revoked key is refused");

  // ---- who can open the team's dashboard: a member's browser, signed out by the operator
  const issued = await api("POST", `/api/admin/accounts/${team}/signin-links`, admin);
  check(issued.status === 201, `a sign-in link is issued (${issued.status})`);
  const member = await (await browser.newContext()).newPage();
  await member.goto(issued.body.url);
  await member.getByRole("button", { name: "Sign in" }).click();
  await member.waitForURL("**/dashboard/team");
  await op.reload();
  const sessions = (await api("GET", `/api/admin/accounts/${team}/sessions`, admin)).body.sessions;
  check(sessions.length === 1, "the API lists the member's session");
  const short = sessions[0].id.slice(0, 12);
  check(await visible(op.getByRole("rowheader", { name: short })), "the member's browser is listed");
  await op.getByRole("button", { name: `Sign out browser ${short}` }).click();
  check(await visible(op.getByText("That browser is signed out.")), "the operator signs the browser out");
  await member.reload();
  check(member.url().endsWith("/dashboard/signin"), `the member's next page asks to sign in (${member.url()})`);

  // ---- the team suspended, its key refused, and restored
  const key2 = (await api("POST", `/api/admin/accounts/${team}/keys`, admin, { name: "ops" })).body.key;
  await op.getByLabel("Status").selectOption("suspended");
  await op.getByRole("button", { name: "Save team access" }).click();
  check(await visible(op.locator("#access .status-suspended")), "the team reads suspended");
  await shot(op, "operator-account-suspended");
  let r2 = await api("GET", "/api/v1/hostnames", key2);
  check(r2.status === 403 && r2.body.code === "FORBIDDEN", `the suspended team's key is refused (${r2.status})`);
  check((await api("GET", `/api/admin/accounts/${team}`, admin)).body.status === "suspended", "the API reports the team suspended");
  await op.getByLabel("Status").selectOption("active");
  await op.getByRole("button", { name: "Save team access" }).click();
  check(await visible(op.locator("#access", { hasText: "open" })), "the team reads open again");
  check((await api("GET", "/api/v1/hostnames", key2)).status === 200, "the restored team's key works");

  // ---- on a phone
  await op.setViewportSize({ width: 390, height: 844 });
  await op.goto(domainURL);
  await shot(op, "operator-domain-phone");
}
