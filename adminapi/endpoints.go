package adminapi

import "github.com/hostmint/hostmint/profile"

// Endpoint is one route as a client sees it.
type Endpoint struct {
	Method, Path string
	Admin        bool            // bearer: the admin token
	Profile      profile.Profile // Both, or the one profile that serves it
}

// Endpoints lists every route of the table the server is made from, so
// that a client can be held to it (client.TestRoutes).
func Endpoints() []Endpoint {
	var out []Endpoint
	for _, r := range (&Server{}).routeTable() {
		out = append(out, Endpoint{Method: r.method, Path: r.path, Admin: r.auth == authAdmin, Profile: r.profile})
	}
	return out
}

// Schemas are the JSON Schemas of the bodies /openapi.json describes, by
// name, so that a client's types can be held to them.
func Schemas() map[string]map[string]any {
	return (&Server{}).schemas()
}
