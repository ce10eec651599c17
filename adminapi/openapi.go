package adminapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/idempotency"
	"github.com/hostmint/hostmint/profile"
)

// Version is the interface version the documents declare.
const Version = "1.0.0"

const intro = "Hostmint turns an IP address into a stable hostname on a domain it operates and serves that name " +
	"from its own authoritative DNS. Requests and responses are JSON (the dyndns2 routes and /api/v1/myip answer text); " +
	"request bodies are capped at 4KB and the request line and header fields at 16KB (431); " +
	"timestamps are UTC with milliseconds (2006-01-02T15:04:05.000Z); names are lowercase without a trailing dot. " +
	"Every non-2xx answer of a JSON route is {error, code}."

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

func (s *Server) openAPI() map[string]any {
	paths := map[string]map[string]any{}
	for _, r := range s.routes {
		op := map[string]any{"summary": r.summary, "operationId": operationID(r)}
		if d := r.description(); d != "" {
			op["description"] = d
		}
		if r.profile != profile.Both {
			op["x-profile"] = r.profile
		}
		switch r.auth {
		case authKey:
			op["security"] = []map[string][]string{{"apiKey": {}}}
		case authAdmin:
			op["security"] = []map[string][]string{{"adminToken": {}}}
		default:
			op["security"] = []map[string][]string{}
		}
		var params []map[string]any
		for _, m := range pathParam.FindAllStringSubmatch(r.path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": str("")})
		}
		for _, q := range r.query {
			params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.doc, "schema": q.schema()})
		}
		if r.idempotent() {
			params = append(params, map[string]any{"name": "Idempotency-Key", "in": "header", "description": idempotencyDoc,
				"schema": map[string]any{"type": "string", "minLength": 1, "maxLength": idempotency.MaxKey}})
		}
		if params != nil {
			op["parameters"] = params
		}
		if r.body != "" {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": ref(r.body)}}}
		}
		resp := map[string]any{}
		ok := map[string]any{"description": "Success"}
		switch {
		case r.okSchema != "":
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": ref(r.okSchema)}}
		case r.rawType != "":
			ok["content"] = map[string]any{r.rawType: map[string]any{"schema": str("")}}
		}
		resp[fmt.Sprint(r.ok)] = ok
		for _, st := range r.errorStatuses() {
			// A raw route's errors are in its own type (dyndns2 answers text).
			content := map[string]any{"application/json": map[string]any{"schema": ref("Error")}}
			if r.rawType != "" {
				content = map[string]any{r.rawType: map[string]any{"schema": str("")}}
			}
			resp[fmt.Sprint(st)] = map[string]any{"description": statusText[st], "content": content}
		}
		op["responses"] = resp
		if paths[r.path] == nil {
			paths[r.path] = map[string]any{}
		}
		paths[r.path][strings.ToLower(r.method)] = op
	}
	schemas := map[string]any{}
	for name, sc := range s.schemas() {
		c := maps.Clone(sc)
		delete(c, "x-order")
		schemas[name] = c
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Hostmint API", "version": Version,
			"description": intro + fmt.Sprintf(" Both behaviour profiles are described; [P1] and [P2] mark what holds in one only. "+
				"This deployment runs profile %d.", s.cfg.Profile)},
		"servers": []map[string]string{{"url": s.cfg.BaseURL}},
		"paths":   paths,
		"components": map[string]any{
			"schemas": schemas,
			"securitySchemes": map[string]any{
				"apiKey":     map[string]any{"type": "http", "scheme": "bearer", "description": "svc_<key_id>_<secret>"},
				"adminToken": map[string]any{"type": "http", "scheme": "bearer", "description": "The operator's admin token (admin_token_file)"},
			},
		},
	}
}

// description is the route's doc, saying first when only one profile has it.
func (r route) description() string {
	if r.profile == profile.Both {
		return r.doc
	}
	return strings.TrimSpace(fmt.Sprintf("Profile %d only (other deployments answer 404). %s", r.profile, r.doc))
}

func operationID(r route) string {
	p := pathParam.ReplaceAllString(r.path, "by_$1")
	p = strings.NewReplacer("/api/", "", "/", "_", "-", "_", ".", "_").Replace(strings.TrimPrefix(p, "/"))
	return strings.ToLower(r.method) + "_" + strings.Trim(p, "_")
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(s.openAPI())
}

// serveLLMs writes the same description as plain text, for readers and tools.
func (s *Server) serveLLMs(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, s.llmsText())
}

func (s *Server) llmsText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Hostmint API %s\n\n%s\n\nBoth behaviour profiles are described; [P1] and [P2] mark what holds in one only. "+
		"This deployment runs profile %d.\n\nBase URL: %s\n\n", Version, intro, s.cfg.Profile, s.cfg.BaseURL)
	b.WriteString("## Authentication\n\n" +
		"- API endpoints: `Authorization: Bearer svc_<key_id>_<secret>`. A missing, malformed, unknown or revoked key: " +
		"401 UNAUTHORIZED `Missing or invalid API key`; a key past its lifetime: 401 KEY_EXPIRED.\n" +
		"- Scopes: hostnames:read, hostnames:write, dns01:write, each with a reach: the whole team, one domain (hostnames " +
		"minted there later included) or one hostname. A key made without scopes has all three team-wide. A key without " +
		"the scope an endpoint needs, or whose reach excludes the hostname or domain, gets 403 FORBIDDEN naming both. " +
		"A key (or acme-dns credential) of a team the operator suspended, or whose plan ended, gets 403 FORBIDDEN saying which.\n" +
		"- Admin endpoints (/api/admin/...): `Authorization: Bearer <admin token>` (the Corefile's admin_token_file).\n\n")
	b.WriteString("## Errors\n\nEvery non-2xx answer is `{\"error\": \"<message>\", \"code\": \"<CODE>\"}`.\n\n")
	for _, st := range slices.Sorted(maps.Keys(statusText)) {
		fmt.Fprintf(&b, "- %d %s\n", st, statusText[st])
	}
	b.WriteString("\n## Endpoints\n")
	for _, r := range s.routes {
		fmt.Fprintf(&b, "\n### %s %s\n\n%s.", r.method, r.path, r.summary)
		if d := r.description(); d != "" {
			b.WriteString(" " + d)
		}
		b.WriteString("\n\n")
		switch r.auth {
		case authKey:
			b.WriteString("- Auth: API key\n")
		case authAdmin:
			b.WriteString("- Auth: admin token\n")
		default:
			b.WriteString("- Auth: none\n")
		}
		for _, q := range r.query {
			fmt.Fprintf(&b, "- Query `%s` (%s): %s\n", q.name, q.describe(), q.doc)
		}
		if r.idempotent() {
			fmt.Fprintf(&b, "- Header `Idempotency-Key` (optional): %s\n", idempotencyDoc)
		}
		if r.body != "" {
			fmt.Fprintf(&b, "- Request body: %s (see Schemas)\n", r.body)
		}
		out := r.okSchema
		if out == "" {
			out = r.rawType
		}
		fmt.Fprintf(&b, "- Success: %d %s\n", r.ok, out)
		if len(r.errors) > 0 {
			var es []string
			for _, e := range r.errorStatuses() {
				es = append(es, fmt.Sprint(e))
			}
			fmt.Fprintf(&b, "- Errors: %s\n", strings.Join(es, ", "))
		}
	}
	b.WriteString("\n## Schemas\n")
	sc := s.schemas()
	for _, name := range slices.Sorted(maps.Keys(sc)) {
		o := sc[name]
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", name, o["description"])
		props := o["properties"].(map[string]any)
		required := map[string]bool{}
		if rq, ok := o["required"].([]string); ok {
			for _, r := range rq {
				required[r] = true
			}
		}
		for _, f := range o["x-order"].([]string) {
			p := props[f].(schema)
			need := "optional"
			if required[f] {
				need = "required"
			}
			fmt.Fprintf(&b, "- `%s` (%s, %s): %s\n", f, typeName(p), need, p["description"])
		}
	}
	return b.String()
}

func typeName(p schema) string {
	if r, ok := p["$ref"].(string); ok {
		return strings.TrimPrefix(r, "#/components/schemas/")
	}
	switch t := p["type"].(type) {
	case string:
		if t == "array" {
			return "array of " + typeName(p["items"].(schema))
		}
		if e, ok := p["enum"].([]string); ok {
			return t + ": " + strings.Join(e, " | ")
		}
		return t
	case []string:
		return strings.Join(t, " or ")
	}
	return "any"
}

func (q param) schema() map[string]any {
	switch q.kind {
	case "":
		return map[string]any{"type": "integer", "default": q.def}
	case "date-time":
		return map[string]any{"type": "string", "format": "date-time"}
	}
	return map[string]any{"type": q.kind}
}

func (q param) describe() string {
	switch q.kind {
	case "":
		return fmt.Sprintf("integer, default %d", q.def)
	case "date-time":
		return "RFC 3339 date-time"
	}
	return q.kind
}
