package adminapi

import (
	"net/http"

	"github.com/hostmint/hostmint/profile"
)

type authKind int

const (
	authNone  authKind = iota
	authKey            // Authorization: Bearer svc_<key_id>_<secret>
	authAdmin          // Authorization: Bearer <admin token>
)

// route is one endpoint: how it is served and how it is documented. The
// mux, /openapi.json and /llms-full.txt are all made from routeTable, so the
// documents list exactly the endpoints that exist.
type route struct {
	method, path string
	profile      profile.Profile // Both, or the one profile that serves it
	auth         authKind
	summary      string
	doc          string
	query        []param
	body         string // request schema name in components, "" for none
	ok           int
	okSchema     string // response schema name
	errors       []int  // error statuses this route can answer
	handle       handler
	raw          http.HandlerFunc // instead of handle, for non-JSON answers
	rawType      string           // content type of a raw answer
	dyndns       bool             // a dyndns2 update: a write behind GET, with Basic auth
}

// The acme-dns routes, whose credentials are not the API's.
const (
	acmeUpdatePath   = "/api/acme/update"
	acmeRegisterPath = "/api/acme/register"
)

type param struct {
	name, doc string
	def       int
	kind      string // "": an integer with default def; else "string" or "date-time"
}

var adminErrors = []int{400, 401, 404, 409, 500, 503}

// tsigCreateDoc is what both TSIG key creates say.
const tsigCreateDoc = "A TSIG key signs DNS UPDATE (RFC 2136) messages sent to the DNS port, with the same scopes and reach as an API key. " +
	"`secret` (base64 of 32 random bytes) is shown only in this answer and kept sealed with the certificate encryption key " +
	"(none configured: 501); `key_name` is the name the TSIG record carries. `algorithm` is hmac-sha256 (default) or hmac-sha512. " +
	"An account issues at most 20 TSIG keys an hour (429 with Retry-After beyond): each new key reloads every node's DNS servers (a revoked one is refused without a reload)."

func (s *Server) routeTable() []route {
	return []route{
		{method: "POST", path: "/api/v1/hostnames", auth: authKey, body: "CreateHostname",
			summary: "Register an address and mint a hostname",
			doc: "Scope hostnames:write reaching the domain the name is minted on. " +
				"[P1] The label is opaque unless `label` asks for a custom one (Pro or Business plan); private or reserved " +
				"addresses need the Business plan; the name answers `live` with `expires_at` 7 days out; more creates than the " +
				"account's hourly allowance (4 per hostname of its cap, at least 100: free 100, Pro 400, Business 4 000): 429 with Retry-After. " +
				"[P2] `subdomain` (every plan), `domain` (one of the team's; omitted: the oldest active one in the key's reach), " +
				"`certificate` and `ca`; the address class (public or private) is fixed for life; the name is served at once and " +
				"reads `pending` until every nameserver answers for it, then `live`. A team without a card on file: 402; " +
				"its domain still being set up: 409 DOMAIN_PROVISIONING with Retry-After and Location (GET /api/v1/domains/{id}); " +
				"no domain: 409 NO_DOMAIN_AVAILABLE; more than 30 registrations a minute or the cap reached: 429 with Retry-After.",
			ok: 201, okSchema: "Hostname", errors: []int{400, 401, 402, 403, 409, 429, 500, 501, 503}, handle: s.createHostname},
		{method: "GET", path: "/api/v1/hostnames", auth: authKey,
			summary: "List hostnames, newest first",
			doc: "Scope hostnames:read; only hostnames in the key's reach are listed and counted. Released hostnames are left out; " +
				"[P1] expired ones appear with status `expired`; [P2] terminated ones are left out, suspended ones shown. " +
				"Listing renews nothing. [P2] The envelope carries total (neither released nor terminated: what can be listed), active (live or pending), the team's cap, " +
				"and the limit and skip applied; another page exists when skip + limit < total.",
			query: []param{{name: "limit", doc: "Page size, clamped to 1..500", def: defaultLimit}, {name: "skip", doc: "Hostnames to skip; below 0 is taken as 0"}},
			ok:    200, okSchema: "HostnameList", errors: []int{400, 401, 403, 500, 503}, handle: s.listHostnames},
		{method: "GET", path: "/api/v1/hostnames/{id}", auth: authKey,
			summary: "Read one hostname",
			doc: "Scope hostnames:read. [P1] Reading a live hostname is authenticated use: `expires_at` moves to 7 days from now, " +
				"at most once a minute (a read within a minute of the last renewal answers the stored `expires_at`, less than a " +
				"minute short of 7 days, and writes nothing); " +
				"an expired hostname is returned as `expired` and not revived. A released one answers 200 with status `released`.",
			ok: 200, okSchema: "Hostname", errors: []int{401, 403, 404, 500, 503}, handle: s.getHostname},
		{method: "PUT", path: "/api/v1/hostnames/{id}", auth: authKey, body: "UpdateHostname",
			summary: "Point the hostname at a new address (or, [P2], a target to follow)",
			doc: "Scope hostnames:write. The record type follows the address (A or AAAA). Released: 409. " +
				"[P1] The hostname comes back `live` with `expires_at` 7 days out, even if it had expired (reviving counts against the cap); " +
				"more updates than the account's hourly allowance (24 per hostname of its cap, at least 600; PUT, renew, dyndns2 and DNS UPDATE " +
				"draw on it alike): 429 with Retry-After. " +
				"[P2] Exactly one of `ip` and `target`. The address must stay in the hostname's class (409 otherwise); " +
				"the current address again changes nothing; a new one reads `pending` until every nameserver serves it. " +
				"A target is resolved through the configured resolvers and published as plain A and AAAA records, refreshed " +
				"within its TTL; an answer of the other class is refused and the hostname keeps its last address. " +
				"Suspended: 403; terminated: 409; more than 60 updates a minute in a team: 429 with Retry-After.",
			ok: 200, okSchema: "Hostname", errors: []int{400, 401, 403, 404, 409, 429, 500, 501, 503}, handle: s.updateHostname},
		{method: "POST", path: "/api/v1/hostnames/{id}/renew", profile: 1, auth: authKey,
			summary: "Heartbeat: renew the hostname",
			doc: "Scope hostnames:write. No request body. Moves `expires_at` to 7 days from now and revives an expired, " +
				"unreleased hostname. Released: 409. A renewal is an update of the account's hourly allowance (see PUT): 429 past it.",
			ok: 200, okSchema: "Hostname", errors: []int{401, 403, 404, 409, 429, 500, 503}, handle: s.renewHostname},
		{method: "DELETE", path: "/api/v1/hostnames/{id}", auth: authKey,
			summary: "Release the hostname",
			doc: "Scope hostnames:write. DNS stops serving the name at once. Repeating the call answers the same 200. " +
				"[P1] The label is never used again, by anyone. [P2] The subdomain returns to the team, which may mint it " +
				"again as a new hostname (every other team: 409); suspended: 403; terminated: 409.",
			ok: 200, okSchema: "Released", errors: []int{401, 403, 404, 409, 500, 503}, handle: s.releaseHostname},
		{method: "GET", path: "/api/v1/hostnames/{id}/records", profile: 2, auth: authKey,
			summary: "List the hostname's records",
			doc:     "Scope hostnames:read. The caller-published records (challenge records are never listed).",
			ok:      200, okSchema: "RecordList", errors: []int{401, 403, 404, 500, 503}, handle: s.listRecords},
		{method: "POST", path: "/api/v1/hostnames/{id}/records", profile: 2, auth: authKey, body: "RecordInput",
			summary: "Publish a record under the hostname",
			doc: "Scope hostnames:write. TXT, TLSA, CAA, MX, SRV, SSHFP, HTTPS or SVCB, on the hostname or a name under it; " +
				"TTL 300. At most 10 a hostname; the hostname must be live (409 otherwise; suspended, released, terminated: frozen, 409). " +
				"A CAA replaces the domain's CAA policy at the hostname. TLSA: 409 until the domain is signed and its DS published. " +
				"More than recordWritePerMinute writes a minute in a team: 429.",
			ok: 201, okSchema: "Record", errors: []int{400, 401, 403, 404, 409, 429, 500, 503}, handle: s.createRecord},
		{method: "PUT", path: "/api/v1/hostnames/{id}/records/{record_id}", profile: 2, auth: authKey, body: "RecordInput",
			summary: "Change a record's value",
			doc: "Scope hostnames:write. `type` must be the stored type and `name`, if sent, the stored name (400 otherwise); " +
				"the id stays; TXT takes one string of at most 255 bytes. The body may be the record as GET answers it, edited: " +
				"`id` and `ttl` are taken when they hold the stored values (400 otherwise) and the fields may come in `data` " +
				"or at the top level, not both. Suspended hostname: 403; not live: 409.",
			ok: 200, okSchema: "Record", errors: []int{400, 401, 403, 404, 409, 429, 500, 503}, handle: s.updateRecord},
		{method: "DELETE", path: "/api/v1/hostnames/{id}/records/{record_id}", profile: 2, auth: authKey,
			summary: "Delete a record",
			doc: "Scope hostnames:write. 204. Another team's record, or none: 404. Deleting a hostname's CAA restores the " +
				"domain's policy there.",
			ok: 204, errors: []int{401, 403, 404, 409, 429, 500, 503}, handle: s.deleteRecord},
		{method: "POST", path: "/api/v1/hostnames/{id}/certificate", profile: 2, auth: authKey, body: "CSRInput",
			summary: "Order a certificate for a csr hostname",
			doc: "Scope dns01:write. Body `{\"csr\": \"<PEM PKCS#10>\"}`: the CSR must cover exactly the hostname and optionally " +
				"`*.<hostname>` (400 otherwise). 202 with the order's state: the service orders from the CA, answers the DNS-01 " +
				"challenge from its own DNS and stores the chain; poll GET until `issued`. Post a fresh CSR before `expires_at` to " +
				"renew. Not a csr hostname, or not live: 409.",
			ok: 202, okSchema: "CertificateState", errors: []int{400, 401, 403, 404, 409, 500, 503}, handle: s.submitCSR},
		{method: "GET", path: "/api/v1/hostnames/{id}/certificate", profile: 2, auth: authKey,
			summary: "Download the hostname's certificate",
			doc: "Scope hostnames:read or dns01:write. 200 with `certificate` (PEM chain), `private_key` (managed only, and only with hostnames:write on the hostname), " +
				"`expires_at`, `ca` and `status` (`issued`; `requested`/`issuing` while an order runs; `failed` with `error`; " +
				"`revoking`/`revoked` after release). 409 with the order's state while none is held; 404 for certificate self.",
			ok: 200, okSchema: "CertificateState", errors: []int{401, 403, 404, 409, 500, 503}, handle: s.getCertificate},
		{method: "GET", path: "/api/v1/hostnames/{id}/diagnose", profile: 2, auth: authKey,
			summary: "An authoritative report on the hostname",
			doc: "Scope hostnames:read. Checks, cheapest first, each pass, fail or unknown (a resolver, nameserver or log that " +
				"does not answer in time is unknown, never pass), with an action on every non-pass where an honest next step " +
				"exists: record, nameservers, dns01, caa, dnssec, resolvers, certificate. A released, suspended, terminated or " +
				"expired hostname gets that state as the only check. Over the team's diagnose rate: 429.",
			ok: 200, okSchema: "Diagnosis", errors: []int{401, 403, 404, 429, 500, 503}, handle: s.diagnose},
		{method: "GET", path: "/api/v1/domains", profile: 2, auth: authKey,
			summary: "List the team's domains",
			doc:     "Any scope; the domains some scope of the key reaches.",
			ok:      200, okSchema: "TeamDomainList", errors: []int{401, 403, 500, 503}, handle: s.teamDomains},
		{method: "GET", path: "/api/v1/domains/{id}", profile: 2, auth: authKey,
			summary: "A team domain's state",
			doc: "Any scope reaching the domain. The provisioning-status resource that DOMAIN_PROVISIONING's Location " +
				"points at: `status` reads `provisioning` until the domain is ready, then `active`.",
			ok: 200, okSchema: "TeamDomain", errors: []int{401, 403, 404, 500, 503}, handle: s.teamDomain},

		{method: "POST", path: "/api/v1/hostnames/{id}/acme-credential", auth: authKey,
			summary: "Create a DNS-01 credential for the hostname",
			doc: "Scope dns01:write reaching the hostname (a hostname-reach key may make its own hostname's). " +
				"201 with an acme-dns registration: give `username`, `password`, `subdomain` and `server_url` to an acme-dns " +
				"client; the password is shown only here. At most 5 a hostname (400); the hostname must be live (409).",
			ok: 201, okSchema: "Credential", errors: []int{400, 401, 403, 404, 409, 500, 503}, handle: s.createCredential},
		{method: "POST", path: acmeUpdatePath, summary: "Publish a DNS-01 challenge value (acme-dns)",
			doc: "No bearer: headers `X-Api-User` (the credential's username) and `X-Api-Key` (its password). Body " +
				"`{subdomain, txt}`, any or no Content-Type. `txt` is 43 characters of A-Z a-z 0-9 _ -. 200 `{\"txt\": value}`; " +
				"the value is served at once as TXT at `_acme-challenge.<hostname>` (TTL 60): the two newest values, for 24 hours " +
				"after the newest was written. 400 malformed body or value, or no subdomain; 401 invalid credentials (or a released, terminated " +
				"or expired hostname); 403 subdomain not this credential's, hostname suspended, a registration's update from outside its allowfrom or for a name not below acme_dns_domain; 429 RATE_LIMITED with " +
				"Retry-After past 30 updates a minute with one credential (the Corefile's `acme_update_per_minute`; refused " +
				"calls do not count, and each credential of a hostname has its own allowance), and for a minute from an address " +
				"(an IPv6 /64) that failed authentication 10 times in it, whatever it sends; 503 with Retry-After when the node " +
				"is busy checking other passwords (a refused credential costs a bcrypt comparison, whichever way it was refused).",
			ok: 200, okSchema: "ChallengeValue", errors: []int{400, 401, 403, 429, 500, 503}, handle: s.acmeUpdate},
		{method: "GET", path: "/api/acme/health", summary: "acme-dns health",
			ok: 200, okSchema: "Health", errors: []int{503}, handle: s.acmeHealth},
		{method: "POST", path: acmeRegisterPath, body: "RegistrationInput", summary: "Register an acme-dns credential for any domain (acme-dns)",
			doc: "As acme-dns's /register, where the Corefile names `acme_dns_domain` (501 without it: then credentials come from " +
				"POST /api/v1/hostnames/{id}/acme-credential). No bearer; no body, or `{allowfrom: [CIDR, ...]}` (at most 20): " +
				"updates are then taken only from those networks (403 from elsewhere). 201 with `username`, `password` (shown only " +
				"here), `subdomain` and `fulldomain` (`<subdomain>.<acme_dns_domain>`): point `_acme-challenge.<your name>` at " +
				"`fulldomain` by CNAME and publish with POST /api/acme/update, whose values are served at `fulldomain`. 400 a " +
				"malformed body or a network that is not CIDR; 429 RATE_LIMITED with Retry-After past 20 registrations an hour " +
				"from one network (an IPv4 /24, an IPv6 /56), 200 from the /16 or /40 around it, or 2 000 in all, the last 500 of " +
				"which only for a /16 or /40 that has made fewer than 20 this hour. A registration " +
				"not updated for 180 days is deleted. An `Idempotency-Key` header is ignored: with no credential a key would be " +
				"anyone's, so every call registers anew and no answer (nor its password) is kept.",
			ok: 201, okSchema: "Registration", errors: []int{400, 429, 500, 501, 503}, handle: s.acmeRegister},
		{method: "GET", path: "/api/admin/acme-registrations", auth: authAdmin, summary: "List acme-dns registrations",
			doc: "The registrations made through POST /api/acme/register, in username order, without secrets or values. " +
				"Page with `cursor` set to the previous answer's `next_cursor`.",
			query: []param{
				{name: "limit", doc: "Page size, clamped to 1..500", def: defaultLimit},
				{name: "cursor", doc: "The `next_cursor` of the previous page; absent: the first", kind: "string"},
			},
			ok: 200, okSchema: "RegistrationList", errors: adminErrors, handle: s.listRegistrations},
		{method: "DELETE", path: "/api/admin/acme-registrations/{username}", auth: authAdmin, summary: "Delete an acme-dns registration",
			doc: "Its values stop being served at once on this node, and on the others as soon as their change feed brings it; " +
				"updates with it answer 401.",
			ok: 204, errors: adminErrors, handle: s.deleteRegistration},

		{method: "GET", path: "/nic/update", summary: "Dynamic DNS update (dyndns2)",
			doc: "The dyndns2 protocol of routers, ddclient and inadyn, over the rules of PUT /api/v1/hostnames/{id}. " +
				"HTTP Basic auth: the password is an API key with hostnames:write reaching the hostnames ([P1] the account's key), " +
				"the username is ignored. Query `hostname` (comma-separated, at most 20), `myip` (comma-separated; the first IPv4 " +
				"and the first IPv6 are used) and `myipv6` (an address, or an IPv6 prefix of at most /64 that replaces the prefix of the " +
				"hostname's IPv6 and keeps its interface identifier); with neither, the client's address (the TCP peer, or behind a " +
				"`trusted_proxy` the right-most X-Forwarded-For entry that is not a trusted proxy). Answers text/plain, HTTP 200, " +
				"one line per hostname in request order: `good <addresses>` (changed), `nochg <addresses>` (already so; [P2] " +
				"nothing is written, [P1] the idle expiry is renewed as by any authenticated use), `nohost` (not a hostname this key " +
				"may update), `notfqdn` (not a fully qualified name, or no hostname), `badagent` (an address that is not one), " +
				"`abuse` ([P2] over the team's update rate, or suspended; [P1] over the account's hourly update allowance, or reviving an expired hostname past the cap), `dnserr` ([P2] the address class is fixed for life), " +
				"`!donator` ([P1] private addresses need the Business plan), `911` (database unavailable; retry later); " +
				"more than 20 hostnames: the single line `numhost`. [P2] An IPv4 and an IPv6 become the hostname's A and " +
				"AAAA, and a family the request does not name keeps its address (routers that send each family separately stay dual-stack); [P1] a hostname has one address, the IPv4 if one was given, else the IPv6. Missing or wrong credentials: " +
				"401 `badauth` with WWW-Authenticate Basic.",
			ok: 200, errors: []int{401}, raw: s.dynUpdate, rawType: "text/plain", dyndns: true},
		{method: "GET", path: "/api/nic/update", summary: "Dynamic DNS update (dyndns2), under /api",
			doc: "The same as GET /nic/update, for routers whose form takes a path under /api.",
			ok:  200, errors: []int{401}, raw: s.dynUpdate, rawType: "text/plain", dyndns: true},
		{method: "GET", path: "/api/v1/myip", summary: "The caller's address",
			doc: "No auth. text/plain `<address>`: the address GET /nic/update takes when `myip` is not sent (the TCP peer, or " +
				"behind a `trusted_proxy` the right-most X-Forwarded-For entry that is not a trusted proxy).",
			ok: 200, raw: s.myIP, rawType: "text/plain"},

		{method: "GET", path: "/api/health", summary: "Service health",
			doc: "200 once the store is open and the DNS index is loaded, while the node is within max_lag of its writers and can sign " +
				"every signed domain it holds; 503 saying why otherwise. The answer says how current the node is.",
			ok: 200, okSchema: "Health", errors: []int{503}, handle: s.health},
		{method: "POST", path: "/api/v1/tsig-keys", auth: authKey, body: "TSIGKeyInput",
			summary: "Create a TSIG key (DNS UPDATE) for the key's own team",
			doc: tsigCreateDoc + " The bearer key needs hostnames:write or dns01:write (403 FORBIDDEN for a key that only reads). " +
				"The new key's scopes and reach stay within the bearer key's own (403 beyond); " +
				"without scopes it gets exactly the bearer key's. It lives no longer than the bearer key: it expires with it and is revoked with it " +
				"(a create racing that revocation is revoked with it, or refused 401 if it comes after). " +
				"A team holds at most 10 TSIG keys (409 beyond).",
			ok: 201, okSchema: "TSIGKey", errors: []int{400, 401, 403, 409, 429, 500, 501, 503}, handle: s.createTSIGKey},
		{method: "GET", path: "/api/v1/tsig-keys", auth: authKey, summary: "List the team's TSIG keys (no secrets)",
			ok: 200, okSchema: "TSIGKeyList", errors: []int{401, 403, 500, 503}, handle: s.listTSIGKeys},
		{method: "DELETE", path: "/api/v1/tsig-keys/{key_id}", auth: authKey, summary: "Revoke one of the team's TSIG keys",
			doc: "The key stops signing at once on this node, and on the others as soon as their change feed brings it. Another team's key, or one beyond the bearer key's reach: 404.",
			ok:  200, okSchema: "Revoked", errors: []int{401, 403, 404, 500, 503}, handle: s.revokeTSIGKey},
		{method: "GET", path: "/openapi.json", summary: "This description, OpenAPI 3.1",
			ok: 200, raw: s.serveOpenAPI, rawType: "application/json"},
		{method: "GET", path: "/llms-full.txt", summary: "This description as plain text",
			ok: 200, raw: s.serveLLMs, rawType: "text/plain"},

		{method: "POST", path: "/api/admin/accounts", auth: authAdmin, body: "AccountInput",
			summary: "Create an account",
			doc: "[P1] `plan` is free, pro or business. [P2] Accounts are teams; `plan` is any plan name, " +
				"`billing` false means no card on file (creates answer 402). `cap` overrides the plan's active-hostname cap.",
			ok: 201, okSchema: "Account", errors: adminErrors, handle: s.createAccount},
		{method: "GET", path: "/api/admin/accounts", auth: authAdmin, summary: "List accounts, newest first",
			doc: "Every account, closed ones included. Filters combine; page with `cursor` set to the previous answer's `next_cursor`.",
			query: []param{
				{name: "name", doc: "Only accounts with exactly this name", kind: "string"},
				{name: "status", doc: "Only accounts in this state now: `active`, `suspended`, `ended` or `closed`", kind: "string"},
				{name: "limit", doc: "Page size, clamped to 1..500", def: defaultLimit},
				{name: "cursor", doc: "The `next_cursor` of the previous page; absent: the newest accounts", kind: "string"},
			},
			ok: 200, okSchema: "AccountList", errors: adminErrors, handle: s.listAccounts},
		{method: "DELETE", path: "/api/admin/accounts/{id}", auth: authAdmin, summary: "Close an account for good",
			doc: "In one transaction: its hostnames are released (no longer answered; terminated ones stay terminated), its API keys and " +
				"TSIG keys revoked, its dashboard sessions and sign-in links ended; on this node at once, on the others as soon as " +
				"their change feed brings it. The account stays readable with `status: closed` for the audit log, and takes no " +
				"change, key or link after (409). Its dedicated domains stay as they are. Closing a closed account answers the same, changing nothing.",
			ok: 200, okSchema: "Closed", errors: adminErrors, handle: s.closeAccount},
		{method: "GET", path: "/api/admin/hostnames", auth: authAdmin, summary: "Find hostnames by name, address or account, with their owner",
			doc: "Exactly one of `hostname`, `ip` and `account_id` (400 otherwise). Every status is listed, released and terminated " +
				"hostnames included (until released ones are purged), newest first. `ip` matches any address a hostname serves.",
			query: []param{
				{name: "hostname", doc: "A fully qualified hostname (case and a trailing dot do not matter)", kind: "string"},
				{name: "ip", doc: "An IPv4 or IPv6 address", kind: "string"},
				{name: "account_id", doc: "An account id", kind: "string"},
				{name: "limit", doc: "Page size, clamped to 1..500", def: defaultLimit},
				{name: "cursor", doc: "The `next_cursor` of the previous page; absent: the newest hostnames", kind: "string"},
			},
			ok: 200, okSchema: "OwnedHostnameList", errors: adminErrors, handle: s.findHostnames},
		{method: "GET", path: "/api/admin/accounts/{id}", auth: authAdmin, summary: "Read an account",
			ok: 200, okSchema: "Account", errors: adminErrors, handle: s.getAccount},
		{method: "PATCH", path: "/api/admin/accounts/{id}", auth: authAdmin, body: "AccountInput",
			summary: "Change an account", doc: "Only the fields sent change.",
			ok: 200, okSchema: "Account", errors: adminErrors, handle: s.patchAccount},
		{method: "POST", path: "/api/admin/accounts/{id}/keys", auth: authAdmin, body: "KeyInput",
			summary: "Create an API key",
			doc: "`key` (`svc_<key_id>_<secret>`) is shown only in this answer; the service keeps a hash. " +
				"An account holds at most 20 keys (409 beyond). Without scopes a key gets all three on the whole account. " +
				"Past `expires_at` the key answers 401 KEY_EXPIRED.",
			ok: 201, okSchema: "Key", errors: adminErrors, handle: s.createKey},
		{method: "GET", path: "/api/admin/accounts/{id}/keys", auth: authAdmin, summary: "List an account's keys (no secrets)",
			ok: 200, okSchema: "KeyList", errors: adminErrors, handle: s.listKeys},
		{method: "POST", path: "/api/admin/accounts/{id}/signin-links", auth: authAdmin,
			summary: "Issue a one-time dashboard sign-in link for a member of the account",
			doc: "No body. `url` opens the dashboard's team view for this account: it signs in one browser once, " +
				"within 24 hours, and is stored only as a hash (shown only in this answer). The browser's session lasts 12 hours " +
				"or until it signs out. Give it to the member over a channel you trust.",
			ok: 201, okSchema: "SigninLink", errors: adminErrors, handle: s.createSigninLink},
		{method: "GET", path: "/api/admin/accounts/{id}/sessions", auth: authAdmin,
			summary: "List who can open the account's dashboard",
			doc: "The team's signed-in browsers (`sessions`) and its sign-in links not used yet (`signin_links`), oldest first. " +
				"An `id` is a hash of the browser's or the link's secret: it names the session or link, and cannot sign anyone in. " +
				"A suspended team, or one whose plan ended, has none.",
			ok: 200, okSchema: "TeamAccess", errors: adminErrors, handle: s.teamAccess},
		{method: "DELETE", path: "/api/admin/accounts/{id}/sessions", auth: authAdmin,
			summary: "Sign out every browser of the account and withdraw its unused sign-in links",
			doc: "On every node at once: the next page a signed-in member opens sends them to sign in. " +
				"Suspending the account, or its plan ending, does the same by itself.",
			ok: 200, okSchema: "TeamAccessEnded", errors: adminErrors, handle: s.endTeamAccess},
		{method: "DELETE", path: "/api/admin/accounts/{id}/sessions/{session_id}", auth: authAdmin,
			summary: "Sign out one browser of the account",
			doc:     "`session_id` as GET .../sessions lists it. A session that is not this account's: 404.",
			ok:      200, okSchema: "Ended", errors: adminErrors, handle: s.endTeamSession},
		{method: "DELETE", path: "/api/admin/accounts/{id}/signin-links/{link_id}", auth: authAdmin,
			summary: "Withdraw an unused sign-in link of the account",
			doc:     "`link_id` as the link's create answer or GET .../sessions gives it. A used link, or one that is not this account's: 404.",
			ok:      200, okSchema: "Ended", errors: adminErrors, handle: s.endSigninLink},
		{method: "POST", path: "/api/admin/accounts/{id}/tsig-keys", auth: authAdmin, body: "TSIGKeyInput",
			summary: "Create a TSIG key (DNS UPDATE)",
			doc:     tsigCreateDoc + " An account holds at most 10 TSIG keys (409 beyond). Without scopes a key gets all three on the whole account.",
			ok:      201, okSchema: "TSIGKey", errors: []int{400, 401, 404, 409, 429, 500, 501, 503}, handle: s.createTSIGKey},
		{method: "GET", path: "/api/admin/accounts/{id}/tsig-keys", auth: authAdmin, summary: "List an account's TSIG keys (no secrets)",
			ok: 200, okSchema: "TSIGKeyList", errors: adminErrors, handle: s.listTSIGKeys},
		{method: "DELETE", path: "/api/admin/tsig-keys/{key_id}", auth: authAdmin, summary: "Revoke a TSIG key",
			doc: "The key stops signing at once on this node, and on the others as soon as their change feed brings it: an UPDATE signed with it answers NOTAUTH (BADKEY).",
			ok:  200, okSchema: "Revoked", errors: adminErrors, handle: s.revokeTSIGKey},
		{method: "DELETE", path: "/api/admin/keys/{key_id}", auth: authAdmin, summary: "Revoke a key",
			doc: "The key stops authenticating at once, on every node.",
			ok:  200, okSchema: "Revoked", errors: adminErrors, handle: s.revokeKey},
		{method: "POST", path: "/api/admin/domains", auth: authAdmin, body: "DomainInput",
			summary: "Add a domain",
			doc: "DNS answers for it at once, on every node. Without `account_id` it is a pool domain ([P1]); " +
				"with one it is dedicated to that team ([P2]). An existing name: 409.",
			ok: 201, okSchema: "Domain", errors: adminErrors, handle: s.createDomain},
		{method: "GET", path: "/api/admin/domains", auth: authAdmin, summary: "List domains",
			ok: 200, okSchema: "DomainList", errors: adminErrors, handle: s.listDomains},
		{method: "PATCH", path: "/api/admin/domains/{id}", auth: authAdmin, body: "DomainInput",
			summary: "Change a domain",
			doc: "`status` and `account_id`; `caa`, a list of CAA presentation strings (`0 issue \"ca.example\"`) served at every " +
				"hostname of the domain without a CAA of its own ([] clears it); `dnssec: true` creates the zone's key (ECDSA P-256, " +
				"sealed at rest with cert_encryption_key_file; 501 without one) and answers the `ds` to publish at the parent; " +
				"`ds_published: true` records that the parent has it (409 unless signed). `nsec3: true` makes the signed zone's " +
				"transfers deny with an NSEC3 chain (RFC 9276's parameters) instead of NSEC (409 unless signed). " +
				"`rollover` replaces the key without an unsigned moment: `start` adds a new key to the DNSKEY set and both keys sign " +
				"every RRset (ds lists both); `finish`, sent with `ds_published: true` once the parent publishes the new DS, and an " +
				"hour after start at the earliest, drops the old key; `cancel` drops the new key. " +
				"`dnssec: false` unsigns (409 while ds_published).",
			ok: 200, okSchema: "Domain", errors: append([]int{501}, adminErrors...), handle: s.patchDomain},
		{method: "GET", path: "/api/admin/audit", auth: authAdmin, summary: "Read the audit log, newest first",
			doc: "One entry per committed write through the API, the dashboard or the acme-dns update (written in the write's own " +
				"transaction), and one per refused attempt by a caller who was authenticated (result: the error code). Unauthenticated " +
				"requests (401) and requests the database could not take (503) are not recorded. No request body, secret or " +
				"credential is in an entry. Entries older than the Corefile's `audit_retention` (default 90 days) are deleted. " +
				"Filters combine; page with `cursor` set to the previous answer's `next_cursor`.",
			query: []param{
				{name: "actor", doc: "Only this actor: `admin`, `key:<key id>`, `acme:<username>`, `network:<prefix>` (an acme-dns registration), `session:<account id>`, `session:operator`", kind: "string"},
				{name: "account_id", doc: "Only writes acting for this account", kind: "string"},
				{name: "action", doc: "Only this route, e.g. `POST /api/v1/hostnames`", kind: "string"},
				{name: "object", doc: "Only this object, e.g. `hostname:<id>`", kind: "string"},
				{name: "result", doc: "Only this result: `ok` or an error code", kind: "string"},
				{name: "since", doc: "Only entries at or after this time (RFC 3339)", kind: "date-time"},
				{name: "until", doc: "Only entries at or before this time (RFC 3339)", kind: "date-time"},
				{name: "limit", doc: "Page size, clamped to 1..500", def: defaultLimit},
				{name: "cursor", doc: "The `next_cursor` of the previous page; 0 or absent: the newest entries", def: 0},
			},
			ok: 200, okSchema: "AuditList", errors: adminErrors, handle: s.listAudit},
		{method: "POST", path: "/api/admin/hostnames/{id}/suspend", profile: 2, auth: authAdmin,
			summary: "Suspend a hostname while an abuse report is reviewed",
			doc: "The name stops resolving; PUT and DELETE answer 403. Its address, target and DNS-01 credentials are kept. " +
				"Released or terminated: 409; suspended already: 200.",
			ok: 200, okSchema: "Hostname", errors: adminErrors, handle: s.suspendHostname},
		{method: "POST", path: "/api/admin/hostnames/{id}/restore", profile: 2, auth: authAdmin,
			summary: "End a suspension",
			doc: "The hostname reads `pending` and resolves again, then `live` once every nameserver serves it. " +
				"Not suspended: 409.",
			ok: 200, okSchema: "Hostname", errors: adminErrors, handle: s.restoreHostname},
		{method: "POST", path: "/api/admin/hostnames/{id}/terminate", profile: 2, auth: authAdmin,
			summary: "Terminate a hostname after an upheld abuse report",
			doc: "Final: it never resolves again, is not listed, PUT and DELETE answer 409, and its subdomain is never minted again. " +
				"Released: 409; terminated already: 200.",
			ok: 200, okSchema: "Hostname", errors: adminErrors, handle: s.terminateHostname},
	}
}
