package adminapi

// JSON Schemas of the bodies, shared by /openapi.json and /llms-full.txt.

type schema = map[string]any

type field struct {
	name     string
	required bool
	s        schema
}

func object(desc string, fields ...field) schema {
	props := map[string]any{}
	order := []string{}
	req := []string{}
	for _, f := range fields {
		props[f.name] = f.s
		order = append(order, f.name)
		if f.required {
			req = append(req, f.name)
		}
	}
	o := schema{"type": "object", "description": desc, "properties": props, "x-order": order}
	if len(req) > 0 {
		o["required"] = req
	}
	return o
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

func req(name string, s schema) field { return field{name, true, s} }
func opt(name string, s schema) field { return field{name, false, s} }

func (s *Server) schemas() map[string]schema {
	return map[string]schema{
		"Error": object("Every non-2xx answer.",
			req("error", str("Human-readable message")),
			req("code", str("Stable machine-readable code: BAD_REQUEST, UNAUTHORIZED, KEY_EXPIRED, FORBIDDEN, NOT_FOUND, "+
				"METHOD_NOT_ALLOWED, CONFLICT, NO_DOMAIN_AVAILABLE, RATE_LIMITED, INTERNAL_ERROR, NOT_IMPLEMENTED, SERVICE_UNAVAILABLE"))),
		"Hostname": object("A registered hostname.",
			req("id", str("Opaque identifier used in /api/v1/hostnames/{id}")),
			req("hostname", str("Fully qualified name, lowercase, no trailing dot")),
			req("ip", str("Registered IPv4 or IPv6 address")),
			req("record_type", enum("A for IPv4, AAAA for IPv6; follows the address", "A", "AAAA")),
			req("status", enum("live: served; expired: idle past expires_at, not served, revived by PUT or renew; "+
				"released: not served, never again; pending: briefly, before live", "pending", "live", "expired", "released")),
			req("expires_at", dateTime("When the name expires without authenticated use")),
			req("created_at", dateTime("When the hostname was registered"))),
		"HostnameList": object("A page of hostnames.",
			req("hostnames", arrayOf(ref("Hostname"), "Newest first"))),
		"CreateHostname": object("Create request.",
			req("ip", str("IPv4 or IPv6 address. Private or reserved ranges need the Business plan")),
			opt("label", str("Custom label (Pro or Business plan): 3-63 of a-z 0-9 -, no leading or trailing hyphen, "+
				"not a reserved, blocked or impersonating term"))),
		"UpdateHostname": object("Update request.",
			req("ip", str("New IPv4 or IPv6 address; private or reserved ranges need the Business plan"))),
		"Released": object("Release result.", req("released", boolean("Always true"))),
		"Health":   object("Health.", req("status", enum("ok when ready", "ok"))),
		"Account": object("An account.",
			req("id", str("Account id")),
			req("name", str("Name")),
			req("plan", str("Plan: free, pro or business in profile 1")),
			req("cap", integer("Maximum active hostnames (the override, or the plan's default)")),
			req("billing", boolean("Card on file (profile 2)")),
			req("created_at", dateTime("Creation time"))),
		"AccountInput": object("Account fields; on PATCH only the fields sent change.",
			opt("name", str("Name, 1-200 characters (required on create)")),
			opt("plan", str("free | pro | business in profile 1, any plan name in profile 2 (required on create)")),
			opt("cap", integer("Maximum active hostnames; overrides the plan's")),
			opt("billing", boolean("Card on file (profile 2); default true"))),
		"Scope": object("A grant: a scope with its reach (whole account when neither domain nor hostname is set).",
			req("scope", enum("Scope", "hostnames:read", "hostnames:write", "dns01:write")),
			opt("domain", str("Limit to hostnames under this domain name")),
			opt("hostname", str("Limit to this hostname id"))),
		"Key": object("An API key.",
			req("id", str("The <key_id> part of the key")),
			opt("key", str("svc_<key_id>_<secret>; only in the create answer")),
			req("name", str("Name")),
			req("scopes", arrayOf(ref("Scope"), "Grants")),
			req("expires_at", nullable("string", "When the key stops authenticating; null: never")),
			req("created_at", dateTime("Creation time"))),
		"KeyInput": object("Key create request.",
			opt("name", str("Name, up to 200 characters")),
			opt("scopes", arrayOf(ref("Scope"), "Grants; omitted: all three on the whole account")),
			opt("expires_at", dateTime("Lifetime end (RFC 3339); omitted: never"))),
		"KeyList": object("An account's keys, without secrets.", req("keys", arrayOf(ref("Key"), "Keys, oldest first"))),
		"Revoked": object("Revocation result.", req("revoked", boolean("Always true"))),
		"Domain": object("A domain the service is authoritative for.",
			req("id", str("Domain id")),
			req("name", str("Domain name, lowercase, no trailing dot")),
			req("account_id", nullable("string", "Team it is dedicated to; null: pool domain")),
			req("status", enum("Status", "active", "provisioning")),
			req("caa", schema{"description": "CAA policy; null when unset"}),
			req("dnssec", boolean("Zone is signed")),
			req("ds", schema{"description": "DS records to publish at the parent; null when unsigned"}),
			req("ds_published", boolean("The operator marked the DS as published")),
			req("created_at", dateTime("Creation time"))),
		"DomainInput": object("Domain fields; on PATCH only the fields sent change.",
			opt("name", str("Domain name (create only)")),
			opt("account_id", str("Dedicate the domain to this account (profile 2); \"\" makes it a pool domain")),
			opt("status", enum("Default active", "active", "provisioning")),
			opt("caa", schema{"description": "CAA policy (501 in this version)"}),
			opt("dnssec", boolean("Sign the zone (501 in this version)")),
			opt("ds_published", boolean("Mark the DS published (501 in this version)"))),
		"DomainList": object("Every domain.", req("domains", arrayOf(ref("Domain"), "Domains, oldest first"))),
	}
}

// statusText says which codes each error status carries.
var statusText = map[int]string{
	400: "BAD_REQUEST: body not valid JSON, over 4KB, a field missing or malformed, a query parameter not an integer",
	401: "UNAUTHORIZED: Authorization missing or malformed, key unknown or revoked; KEY_EXPIRED: key past its lifetime",
	403: "FORBIDDEN: private or reserved address without the Business plan; custom label without Pro or Business",
	404: "NOT_FOUND: no such object for this caller, or no such endpoint",
	405: "METHOD_NOT_ALLOWED: the path exists but not with this method (see the Allow header)",
	409: "CONFLICT: hostname released, label taken or retired, name exists, key limit reached; NO_DOMAIN_AVAILABLE",
	429: "RATE_LIMITED: active-hostname cap reached",
	500: "INTERNAL_ERROR: unexpected server error",
	501: "NOT_IMPLEMENTED: the feature is not available in this deployment or version",
	503: "SERVICE_UNAVAILABLE: the database cannot be reached or the service is not ready",
}
