package adminapi

import "net/http"

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
	profile      int // 0: both profiles
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
}

type param struct {
	name, doc string
	def       int
}

var (
	keyErrors   = []int{400, 401, 404, 405, 429, 500, 503}
	adminErrors = []int{400, 401, 404, 409, 500, 503}
)

func (s *Server) routeTable() []route {
	return []route{
		{method: "POST", path: "/api/v1/hostnames", auth: authKey, body: "CreateHostname",
			summary: "Register an address and mint a hostname",
			doc: "The label is opaque (service-generated) unless `label` asks for a custom one (Pro or Business plan). " +
				"Private or reserved addresses need the Business plan. The name is served by DNS when this answer arrives; " +
				"`expires_at` is 7 days out (idle expiry).",
			ok: 201, okSchema: "Hostname", errors: []int{400, 401, 403, 409, 429, 500, 503}, handle: s.createHostname},
		{method: "GET", path: "/api/v1/hostnames", auth: authKey,
			summary: "List hostnames, newest first",
			doc:     "Released hostnames are left out; expired ones appear with status `expired`. Listing renews nothing.",
			query:   []param{{"limit", "Page size, clamped to 1..500", defaultLimit}, {"skip", "Hostnames to skip; below 0 is taken as 0", 0}},
			ok:      200, okSchema: "HostnameList", errors: []int{400, 401, 500, 503}, handle: s.listHostnames},
		{method: "GET", path: "/api/v1/hostnames/{id}", auth: authKey,
			summary: "Read one hostname",
			doc: "Reading a live hostname is authenticated use: `expires_at` moves to 7 days from now. " +
				"An expired hostname is returned as `expired` and not revived. A released one answers 200 with status `released`.",
			ok: 200, okSchema: "Hostname", errors: []int{401, 404, 500, 503}, handle: s.getHostname},
		{method: "PUT", path: "/api/v1/hostnames/{id}", auth: authKey, body: "UpdateHostname",
			summary: "Point the hostname at a new address",
			doc: "The record type follows the address (A or AAAA). The hostname comes back `live` with `expires_at` 7 days out, " +
				"even if it had expired (reviving counts against the active-hostname cap). Released: 409.",
			ok: 200, okSchema: "Hostname", errors: []int{400, 401, 403, 404, 409, 429, 500, 503}, handle: s.updateHostname},
		{method: "POST", path: "/api/v1/hostnames/{id}/renew", profile: 1, auth: authKey,
			summary: "Heartbeat: renew the hostname",
			doc: "No request body. Moves `expires_at` to 7 days from now and revives an expired, unreleased hostname. " +
				"Released: 409.",
			ok: 200, okSchema: "Hostname", errors: []int{401, 404, 409, 429, 500, 503}, handle: s.renewHostname},
		{method: "DELETE", path: "/api/v1/hostnames/{id}", auth: authKey,
			summary: "Release the hostname",
			doc: "DNS stops serving the name at once. The label is never used again, by anyone. " +
				"Repeating the call answers the same 200.",
			ok: 200, okSchema: "Released", errors: []int{401, 404, 500, 503}, handle: s.releaseHostname},

		{method: "GET", path: "/api/health", summary: "Service health",
			doc: "200 once the store is open and the DNS index is loaded; 503 otherwise.",
			ok:  200, okSchema: "Health", errors: []int{503}, handle: s.health},
		{method: "GET", path: "/openapi.json", summary: "This description, OpenAPI 3.1",
			ok: 200, raw: s.serveOpenAPI, rawType: "application/json"},
		{method: "GET", path: "/llms-full.txt", summary: "This description as plain text",
			ok: 200, raw: s.serveLLMs, rawType: "text/plain"},

		{method: "POST", path: "/api/admin/accounts", auth: authAdmin, body: "AccountInput",
			summary: "Create an account",
			doc: "`plan` is free, pro or business in profile 1 (any plan name in profile 2). " +
				"`cap` overrides the plan's active-hostname cap.",
			ok: 201, okSchema: "Account", errors: adminErrors, handle: s.createAccount},
		{method: "GET", path: "/api/admin/accounts/{id}", auth: authAdmin, summary: "Read an account",
			ok: 200, okSchema: "Account", errors: adminErrors, handle: s.getAccount},
		{method: "PATCH", path: "/api/admin/accounts/{id}", auth: authAdmin, body: "AccountInput",
			summary: "Change an account", doc: "Only the fields sent change.",
			ok: 200, okSchema: "Account", errors: adminErrors, handle: s.patchAccount},
		{method: "POST", path: "/api/admin/accounts/{id}/keys", auth: authAdmin, body: "KeyInput",
			summary: "Create an API key",
			doc: "`key` (`svc_<key_id>_<secret>`) is shown only in this answer; the service keeps a hash. " +
				"An account holds at most 20 keys (409 beyond). Without scopes a key gets all three on the whole account.",
			ok: 201, okSchema: "Key", errors: adminErrors, handle: s.createKey},
		{method: "GET", path: "/api/admin/accounts/{id}/keys", auth: authAdmin, summary: "List an account's keys (no secrets)",
			ok: 200, okSchema: "KeyList", errors: adminErrors, handle: s.listKeys},
		{method: "DELETE", path: "/api/admin/keys/{key_id}", auth: authAdmin, summary: "Revoke a key",
			doc: "The key stops authenticating at once, on every node.",
			ok:  200, okSchema: "Revoked", errors: adminErrors, handle: s.revokeKey},
		{method: "POST", path: "/api/admin/domains", auth: authAdmin, body: "DomainInput",
			summary: "Add a domain",
			doc: "DNS answers for it at once, on every node. A domain without `account_id` is a pool domain. " +
				"An existing name: 409.",
			ok: 201, okSchema: "Domain", errors: adminErrors, handle: s.createDomain},
		{method: "GET", path: "/api/admin/domains", auth: authAdmin, summary: "List domains",
			ok: 200, okSchema: "DomainList", errors: adminErrors, handle: s.listDomains},
		{method: "PATCH", path: "/api/admin/domains/{id}", auth: authAdmin, body: "DomainInput",
			summary: "Change a domain",
			doc:     "`status` and `account_id` change here. `caa`, `dnssec` and `ds_published` answer 501 in this version.",
			ok:      200, okSchema: "Domain", errors: append([]int{501}, adminErrors...), handle: s.patchDomain},
	}
}
