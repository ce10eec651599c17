package adminapi

import (
	"math"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/certs"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
)

// JSON Schemas of the bodies, shared by /openapi.json and /llms-full.txt.

type schema = map[string]any

type field struct {
	name     string
	required bool
	s        schema
}

func object(desc string, fields ...field) schema {
	return withFields(schema{"properties": map[string]any{}, "x-order": []string{}}, desc, fields...)
}

func typed(t, desc string) schema       { return schema{"type": t, "description": desc} }
func str(desc string) schema            { return typed("string", desc) }
func integer(desc string) schema        { return typed("integer", desc) }
func boolean(desc string) schema        { return typed("boolean", desc) }
func ref(name string) schema            { return schema{"$ref": "#/components/schemas/" + name} }
func arrayOf(s schema, d string) schema { return schema{"type": "array", "items": s, "description": d} }
func nullable(t, desc string) schema {
	return schema{"type": []string{t, "null"}, "description": desc}
}
func dateTime(desc string) schema {
	return schema{"type": "string", "format": "date-time", "description": desc + " (UTC, milliseconds: 2006-01-02T15:04:05.000Z)"}
}
func enum(desc string, vals ...string) schema {
	return schema{"type": "string", "enum": vals, "description": desc}
}

// secretMark marks a field that holds a secret shown once (a key, a
// password, a link that signs in): an answer holding one is kept only
// sealed for an Idempotency-Key's retries (see holdsSecret).
const secretMark = "x-secret"

// secret marks s as a secret field.
func secret(s schema) schema { s[secretMark] = true; return s }

func req(name string, s schema) field { return field{name, true, s} }
func opt(name string, s schema) field { return field{name, false, s} }

func (s *Server) schemas() map[string]schema {
	return map[string]schema{
		"Error": object("Every non-2xx answer.",
			req("error", str("Human-readable message")),
			req("code", enum("Stable machine-readable code. METHOD_NOT_ALLOWED (405, with Allow) is this service's "+
				"addition to the specification's codes", apierror.Codes...))),
		"Hostname": s.hostnameSchema(),
		"HostnameList": object("A page of hostnames. [P1] hostnames only; [P2] with the counts.",
			req("hostnames", arrayOf(ref("Hostname"), "Newest first")),
			opt("total", integer("[P2] Hostnames not released (nor terminated) in the key's reach")),
			opt("active", integer("[P2] Live or pending hostnames in the key's reach (what the cap counts)")),
			opt("cap", integer("[P2] The team's maximum of active hostnames")),
			opt("limit", integer("[P2] The limit applied")),
			opt("skip", integer("[P2] The skip applied"))),
		"CreateHostname": object("Create request.",
			req("ip", str("IPv4 or IPv6 address. [P1] Private or reserved ranges need the Business plan. "+
				"[P2] Any range; its class (public or private) is the hostname's for life")),
			opt("label", str("[P1] Custom label (Pro or Business plan): 3-63 of a-z 0-9 -, no leading or trailing hyphen, "+
				"not a reserved, blocked or impersonating term (an xn-- internationalised name among them)")),
			opt("subdomain", str("[P2] Custom subdomain, every plan: 3-63 of a-z 0-9 -, no leading or trailing hyphen, no period; "+
				"on the team's own domain any such name is allowed except a nameserver's own name there (409)")),
			opt("domain", str("[P2] One of the team's domains; omitted: the oldest active one the key reaches")),
			opt("certificate", enum("[P2] Default self; managed needs a configured certificate encryption key (501 otherwise)", "self", "managed", "csr")),
			opt("ca", enum("[P2] With managed or csr only (400 with self); default letsencrypt", certs.CANames...))),
		"UpdateHostname": object("Update request. [P2] exactly one of ip and target.",
			opt("ip", str("New IPv4 or IPv6 address. [P1] required; private or reserved ranges need the Business plan. "+
				"[P2] must stay in the hostname's class; takes the hostname off its target")),
			opt("target", str("[P2] A host name to follow: resolved and published as A and AAAA records, never a CNAME"))),
		"Record": object("[P2] A caller-published record.",
			req("id", str("Record id; survives value changes")),
			req("name", str("Fully qualified name: the hostname or a name under it")),
			req("type", enum("Record type", records.Types...)),
			req("ttl", integer("Always 300")),
			req("data", schema{"type": "object", "description": "The type's fields, as in RecordInput"})),
		"RecordList": object("[P2] A hostname's records.", req("records", arrayOf(ref("Record"), "Oldest first"))),
		"RecordInput": object("[P2] A record. Only the fields of its type are allowed.",
			req("type", enum("Record type (A and AAAA are set by PUT on the hostname)", records.Types...)),
			opt("name", str("Label(s) under the hostname (a-z 0-9 - _), or the record's fully qualified name as answered "+
				"(under the hostname, final dot optional); omitted: the hostname itself; _acme-challenge is reserved")),
			opt("text", schema{"description": "TXT: a string (split into 255-byte strings) or, on create, a list of strings of at most 255 bytes; " +
				"2048 bytes in all; no control characters"}),
			opt("preference", integer("MX: 0-65535, lower is preferred")),
			opt("exchange", str("MX: mail host, or \".\" with preference 0 for the null MX, which must be the name's only MX (409 otherwise, RFC 7505)")),
			opt("priority", integer("SRV: 0-65535, lower is tried first; HTTPS/SVCB: 0 is alias mode")),
			opt("weight", integer("SRV: 0-65535")),
			opt("port", integer("SRV: 0-65535")),
			opt("target", str("SRV, HTTPS, SVCB: host name, or \".\"")),
			opt("algorithm", integer("SSHFP: 1 RSA, 2 DSA, 3 ECDSA, 4 Ed25519, 6 Ed448")),
			opt("fptype", integer("SSHFP: 1 SHA-1 (40 hex digits), 2 SHA-256 (64)")),
			opt("fingerprint", str("SSHFP: lowercase hex")),
			opt("usage", integer("TLSA: 0-3")),
			opt("selector", integer("TLSA: 0 certificate, 1 SubjectPublicKeyInfo")),
			opt("matching_type", integer("TLSA: 0 full, 1 SHA-256 (64 hex digits), 2 SHA-512 (128)")),
			opt("association", str("TLSA: lowercase hex; the name must be _<port>._<proto>")),
			opt("flags", integer("CAA: 0-255, default 0")),
			opt("tag", enum("CAA tag", "issue", "issuewild", "iodef")),
			opt("value", str("CAA value")),
			opt("params", schema{"type": "object", "description": "HTTPS/SVCB service parameters: alpn (list), noDefaultAlpn (bool), port, " +
				"ipv4hint (list), ipv6hint (list), ech (base64), mandatory (list of keys); emitted in ascending key order"})),
		"Credential": object("A DNS-01 credential, as acme-dns registers one.",
			req("username", str("UUID; send as X-Api-User")),
			req("password", secret(str("Send as X-Api-Key; shown only at creation"))),
			req("fulldomain", str("_acme-challenge.<hostname>, where the values are served")),
			req("subdomain", str("Equals username; sent in update calls")),
			req("server_url", str("{base_url}/api/acme: the acme-dns server URL for clients (no trailing slash)")),
			req("allowfrom", arrayOf(str(""), "Always empty: updates are accepted from anywhere"))),
		"RegistrationInput": object("An acme-dns registration request; the body may be left out.",
			opt("allowfrom", arrayOf(str("A network in CIDR notation (192.0.2.0/24, 2001:db8::/48)"), "Where updates may come from; none: anywhere"))),
		"Registration": object("An acme-dns registration for any domain, as acme-dns answers /register.",
			req("username", str("UUID; send as X-Api-User")),
			req("password", secret(str("Send as X-Api-Key; shown only here"))),
			req("fulldomain", str("<subdomain>.<acme_dns_domain>: point _acme-challenge.<your name> here by CNAME")),
			req("subdomain", str("UUID; sent in update calls")),
			req("allowfrom", arrayOf(str(""), "The networks updates are taken from; empty: anywhere"))),
		"RegistrationEntry": object("An acme-dns registration as the operator lists it.",
			req("username", str("UUID")),
			req("subdomain", str("UUID")),
			req("fulldomain", str("Where its values are served")),
			req("allowfrom", arrayOf(str(""), "The networks updates are taken from; empty: anywhere")),
			req("source", str("The network it was registered from (IPv4 /24, IPv6 /56)")),
			req("created_at", dateTime("Registration time")),
			req("used_at", dateTime("The last update, or the registration; 180 days after it the registration is deleted"))),
		"RegistrationList": object("A page of acme-dns registrations.",
			req("registrations", arrayOf(ref("RegistrationEntry"), "In username order")),
			req("next_cursor", nullable("string", "Pass as `cursor` for the next page; null on the last page"))),
		"ChallengeValue": object("An acme-dns update's answer.", req("txt", str("The value published"))),
		"CSRInput":       object("[P2] A certificate signing request.", req("csr", str("PEM PKCS#10 for the hostname (and optionally *.<hostname>)"))),
		"CertificateState": object("[P2] A certificate the service runs.",
			req("status", enum("The order's state", "requested", "issuing", "issued", "failed", "revoking", "revoked")),
			opt("ca", enum("The CA that issued the chain held", certs.CANames...)),
			opt("certificate", str("PEM chain, leaf first")),
			opt("private_key", secret(str("PEM private key (managed only, and only to a key with hostnames:write on the hostname; a fresh key at every renewal)"))),
			opt("expires_at", dateTime("The chain's expiry; managed certificates renew at two thirds of their life")),
			opt("error", str("Why the last order failed"))),
		"Diagnosis": object("[P2] A diagnose report.",
			req("hostname", str("The hostname")),
			req("summary", str("One-line conclusion")),
			req("checks", arrayOf(ref("DiagnosisCheck"), "Cheapest first")),
			req("checked_at", dateTime("When the report was made"))),
		"DiagnosisCheck": object("One check.",
			req("id", enum("Check id", "state", "record", "nameservers", "dns01", "caa", "dnssec", "resolvers", "certificate")),
			req("label", str("What is checked")),
			req("verdict", enum("Result", "pass", "fail", "unknown")),
			req("detail", str("What was seen")),
			opt("action", str("The next step, on a non-pass verdict where one exists"))),
		"TeamDomain": object("[P2] A team domain's state.",
			req("id", str("Domain id")),
			req("name", str("Domain name")),
			req("status", enum("provisioning until it is ready", "active", "provisioning")),
			req("created_at", dateTime("Creation time"))),
		"TeamDomainList": object("[P2] The team's domains.", req("domains", arrayOf(ref("TeamDomain"), "Oldest first"))),
		"Released":       object("Release result.", req("released", boolean("Always true"))),
		"Health": object("Health: how current this node is.",
			req("status", enum("ok when ready", "ok")),
			req("read_only", boolean("A read-only DNS node: it answers DNS and this endpoint only")),
			req("lag_seconds", typed("number", "How far behind its database's writers the node is: 0 on a writer that has applied all it read; "+
				"on a read-only node, the age of the writers' heartbeat it is current to (resolution: one second)")),
			req("lag_changes", integer("Changes in its database it has not applied yet"))),
		"Account": object("An account.",
			req("id", str("Account id")),
			req("name", str("Name")),
			req("plan", str("Plan: free, pro or business in profile 1")),
			req("cap", integer("Maximum active hostnames (the override, or the plan's default)")),
			req("billing", boolean("Card on file (profile 2)")),
			req("status", enum("active; suspended by the operator; ended: plan_ends_at has passed; or closed for good "+
				"(DELETE /api/admin/accounts/{id}). A suspended, ended or closed team cannot sign in or use its keys",
				storage.AccountStates...)),
			req("plan_ends_at", nullable("string", "When the plan ends (date-time, UTC, milliseconds); null: never")),
			req("closed_at", nullable("string", "When the account was closed (date-time, UTC, milliseconds); null: open")),
			req("created_at", dateTime("Creation time"))),
		"AccountList": object("A page of accounts, newest first.",
			req("accounts", arrayOf(ref("Account"), "Accounts")),
			req("next_cursor", nullable("string", "Pass as `cursor` for the next page; null on the last page"))),
		"OwnedHostname": withFields(s.hostnameSchema(), "A hostname with its owner, as the operator sees it.",
			req("account_id", str("The account that holds (or held) it"))),
		"OwnedHostnameList": object("A page of hostnames, newest first.",
			req("hostnames", arrayOf(ref("OwnedHostname"), "Hostnames")),
			req("next_cursor", nullable("string", "Pass as `cursor` for the next page; null on the last page"))),
		"Closed": object("What closing an account ended.",
			req("closed", boolean("Always true")),
			req("hostnames_released", integer("Hostnames released by this close (0 when it was closed already)")),
			req("keys_revoked", integer("API keys revoked")),
			req("tsig_keys_revoked", integer("TSIG keys revoked")),
			req("sessions_ended", integer("Dashboard sessions ended")),
			req("signin_links_ended", integer("Unused sign-in links withdrawn"))),
		"AccountInput": object("Account fields; on PATCH only the fields sent change.",
			opt("name", str("Name, 1-200 characters (required on create)")),
			opt("plan", str("free | pro | business in profile 1, any plan name in profile 2 (required on create)")),
			opt("cap", schema{"type": "integer", "minimum": 0, "maximum": math.MaxInt32,
				"description": "Maximum active hostnames (0 to 2147483647); overrides the plan's"}),
			opt("billing", boolean("Card on file (profile 2); default true")),
			opt("status", enum("suspended closes the team's access at once: its dashboard sessions and unused sign-in links "+
				"end, its keys and DNS-01 credentials answer 403; its hostnames stay served. active opens it again", "active", "suspended")),
			opt("plan_ends_at", nullable("string", "When the plan ends (date-time); from then on the team is closed as if "+
				"suspended, until this moves later or is set to null (never)"))),
		"Scope": object("A grant: a scope with its reach (whole account when neither domain nor hostname is set).",
			req("scope", enum("Scope", "hostnames:read", "hostnames:write", "dns01:write")),
			opt("domain", str("Limit to hostnames under this domain name")),
			opt("hostname", str("Limit to this hostname id"))),
		"Key": object("An API key.",
			req("id", str("The <key_id> part of the key")),
			opt("key", secret(str("svc_<key_id>_<secret>; only in the create answer"))),
			req("name", str("Name")),
			req("scopes", arrayOf(ref("Scope"), "Grants")),
			req("expires_at", nullable("string", "When the key stops authenticating; null: never")),
			req("created_at", dateTime("Creation time"))),
		"KeyInput": object("Key create request.",
			opt("name", str("Name, up to 200 characters")),
			opt("scopes", arrayOf(ref("Scope"), "Grants; omitted: all three on the whole account")),
			opt("expires_at", dateTime("Lifetime end (RFC 3339); omitted: never"))),
		"AuditEntry": object("One write, or one refused attempt at one. Never holds a request body or a secret.",
			req("id", integer("Increasing; the order entries were written in")),
			req("at", dateTime("When")),
			req("actor", str("Who: `admin` (the admin token), `key:<key id>`, `acme:<username>` (an acme-dns credential), "+
				"`session:<account id>` or `session:operator` (the dashboard)")),
			req("account_id", str("The account acted for; empty for the operator")),
			req("action", str("The route, `METHOD /path` with its parameters named, e.g. `PUT /api/v1/hostnames/{id}`; "+
				"`POST /dashboard/...` for the dashboard")),
			req("object", str("`<kind>:<id>` of the object created or changed (hostname, record, key, account, domain, credential); may be empty")),
			req("result", str("`ok` (the write committed) or the error code of the refusal")),
			req("status", integer("The HTTP status answered")),
			req("address", str("The client's address (behind a trusted_proxy, from X-Forwarded-For)")),
			req("detail", str("A refusal's words: the API's error message, or the text a DNS UPDATE's Extended DNS Error carried "+
				"(which clients that send no EDNS, as Kea and nsupdate, never see); empty for `ok`"))),
		"AuditList": object("A page of the audit log, newest first.",
			req("entries", arrayOf(ref("AuditEntry"), "Entries")),
			req("next_cursor", nullable("integer", "Pass as `cursor` for the next page; null on the last page"))),
		"KeyList": object("An account's keys, without secrets.", req("keys", arrayOf(ref("Key"), "Keys, oldest first"))),
		"TSIGKey": object("A TSIG key for DNS UPDATE.",
			req("id", str("What the key is listed and revoked by")),
			req("name", str("Name")),
			req("key_name", str("The name the TSIG record carries (lowercase, no trailing dot)")),
			req("algorithm", str("hmac-sha256 or hmac-sha512")),
			opt("secret", secret(str("Base64 of the 32-byte secret; only in the create answer"))),
			req("scopes", arrayOf(ref("Scope"), "Grants")),
			req("expires_at", nullable("string", "When it stops signing: the expiry of the API key that issued it; null: never")),
			req("created_at", dateTime("Creation time"))),
		"TSIGKeyInput": object("TSIG key create request.",
			opt("name", str("Name, up to 200 characters")),
			opt("scopes", arrayOf(ref("Scope"), "Grants; omitted: all three on the whole account (operator) or the bearer key's own")),
			opt("algorithm", str("hmac-sha256 (default) or hmac-sha512"))),
		"TSIGKeyList": object("An account's TSIG keys, without secrets.", req("tsig_keys", arrayOf(ref("TSIGKey"), "Keys, oldest first"))),
		"Revoked":     object("Revocation result.", req("revoked", boolean("Always true"))),
		"SigninLink": object("A one-time dashboard sign-in link.",
			req("id", str("What the link is listed and withdrawn by (a hash of its token; it cannot sign in)")),
			req("url", secret(str("{base_url}/dashboard/signin/link?token=...; works once; shown only here"))),
			req("expires_at", dateTime("When the link stops working if unused"))),
		"TeamAccess": object("Who can open a team's dashboard.",
			req("sessions", arrayOf(object("A signed-in browser.",
				req("id", str("What the session is listed and ended by (a hash of the browser's secret; it cannot sign in)")),
				req("created_at", dateTime("When the browser signed in")),
				req("expires_at", dateTime("When the session ends by itself"))), "Signed-in browsers, oldest first")),
			req("signin_links", arrayOf(object("A sign-in link not used yet.",
				req("id", str("The id its create answer gave")),
				req("created_at", dateTime("When it was issued")),
				req("expires_at", dateTime("When it stops working if unused"))), "Unused sign-in links, oldest first"))),
		"TeamAccessEnded": object("What was ended.",
			req("sessions_ended", integer("Browsers signed out")),
			req("signin_links_ended", integer("Unused sign-in links withdrawn"))),
		"Ended": object("End result.", req("ended", boolean("Always true"))),
		"Domain": object("A domain the service is authoritative for.",
			req("id", str("Domain id")),
			req("name", str("Domain name, lowercase, no trailing dot")),
			req("account_id", nullable("string", "Team it is dedicated to; null: pool domain")),
			req("status", enum("Status", "active", "provisioning")),
			req("caa", arrayOf(str(""), "CAA policy: presentation strings served at hostnames without a CAA of their own")),
			req("dnssec", boolean("Zone is signed")),
			req("ds", schema{"type": []string{"array", "null"}, "items": str(""), "description": "DS records to publish at the parent; null when unsigned"}),
			req("ds_published", boolean("The operator marked the DS as published")),
			req("nsec3", boolean("Zone transfers of the signed zone deny with NSEC3 (RFC 9276: SHA-1, no extra iterations, no salt, no opt-out); false: NSEC")),
			req("rollover", schema{"type": []string{"string", "null"}, "enum": []any{"started", nil},
				"description": "A key rollover's stage: started (the new key is in the DNSKEY set, and both sign every RRset); null: none"}),
			req("rollover_at", schema{"type": []string{"string", "null"}, "format": "date-time", "description": "When the rollover reached its stage; null: none"}),
			req("created_at", dateTime("Creation time"))),
		"DomainInput": object("Domain fields; on PATCH only the fields sent change.",
			opt("name", str("Domain name (create only)")),
			opt("account_id", str("Dedicate the domain to this account (profile 2); \"\" makes it a pool domain")),
			opt("status", enum("Default active", "active", "provisioning")),
			opt("caa", arrayOf(str(""), "CAA policy, each `FLAGS TAG \"VALUE\"` (tag issue, issuewild or iodef); [] clears it")),
			opt("dnssec", boolean("true signs the zone (needs cert_encryption_key_file, else 501); false unsigns it (409 while ds_published)")),
			opt("ds_published", boolean("The parent publishes the DS (409 unless signed)")),
			opt("nsec3", boolean("Deny with NSEC3 in the signed zone's transfers, not NSEC (409 unless signed; unsigning sets it false)")),
			opt("rollover", enum("A key rollover's next step (409 out of order, or before its wait)", "start", "finish", "cancel"))),
		"DomainList": object("Every domain.", req("domains", arrayOf(ref("Domain"), "Domains, oldest first"))),
	}
}

// statusText says which codes each error status carries.
var statusText = map[int]string{
	400: "BAD_REQUEST: body not valid JSON, over 4KB, a field missing or malformed, a query parameter not an integer",
	401: "UNAUTHORIZED: Authorization missing or malformed, key unknown or revoked; KEY_EXPIRED: key past its lifetime",
	402: "PAYMENT_REQUIRED: [P2] the team has no card on file",
	403: "FORBIDDEN: [P1] private or reserved address without the Business plan, custom label without Pro or Business; " +
		"[P2] the key lacks the scope or its reach excludes the hostname or domain (the message names both), hostname suspended; " +
		"the key's team is suspended or its plan ended",
	404: "NOT_FOUND: no such object for this caller, or no such endpoint",
	405: "METHOD_NOT_ALLOWED: the path exists but not with this method (see the Allow header)",
	409: "CONFLICT: hostname released or terminated, label or subdomain taken or retired, address class crossed, name exists, " +
		"key limit reached, sign-in link for a suspended or ended team; DOMAIN_PROVISIONING (with Retry-After and Location); NO_DOMAIN_AVAILABLE",
	429: "RATE_LIMITED: active-hostname cap reached; [P1] more creates or updates than the account's hourly allowance; " +
		"[P2] more than 30 registrations a minute or 60 updates a minute in a team (with Retry-After)",
	500: "INTERNAL_ERROR: unexpected server error",
	501: "NOT_IMPLEMENTED: the feature is not available in this deployment or version " +
		"(managed certificates without an encryption key, targets without a resolver)",
	503: "SERVICE_UNAVAILABLE: the database cannot be reached or the service is not ready",
}

// hostnameSchema is the Hostname answer, which OwnedHostname extends.
func (s *Server) hostnameSchema() schema {
	return object("A registered hostname. [P1] and [P2] mark fields of one profile only.",
		req("id", str("Opaque identifier used in /api/v1/hostnames/{id}")),
		req("hostname", str("Fully qualified name, lowercase, no trailing dot")),
		req("ip", str("The address served (with a target: its first address)")),
		req("record_type", enum("A for IPv4, AAAA for IPv6; follows the address", "A", "AAAA")),
		opt("target", str("[P2] The name followed, when the hostname follows one")),
		req("status", enum("[P1] live: served; expired: idle past expires_at, not served, revived by PUT or renew; "+
			"released: not served, never again; pending: briefly, before live. "+
			"[P2] pending: served, not yet observed on every nameserver; live; released; "+
			"suspended: not served while an abuse report is reviewed; terminated: final",
			"pending", "live", "expired", "released", "suspended", "terminated")),
		opt("certificate", enum("[P2] Who holds the private key", "self", "managed", "csr")),
		opt("ca", enum("[P2] The CA of managed and csr hostnames", certs.CANames...)),
		opt("expires_at", dateTime("[P1] When the name expires without authenticated use. [P2] csr hostnames: when the "+
			"certificate held expires (post a fresh CSR before)")),
		req("created_at", dateTime("When the hostname was registered")))
}

// withFields is o with desc and more fields after its own.
func withFields(o schema, desc string, fields ...field) schema {
	props := map[string]any{}
	for k, v := range o["properties"].(map[string]any) {
		props[k] = v
	}
	order := append([]string{}, o["x-order"].([]string)...)
	req, _ := o["required"].([]string)
	req = append([]string{}, req...)
	for _, f := range fields {
		props[f.name] = f.s
		order = append(order, f.name)
		if f.required {
			req = append(req, f.name)
		}
	}
	out := schema{"type": "object", "description": desc, "properties": props, "x-order": order}
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}
