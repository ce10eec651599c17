// Package access holds who a request acts for and what it may reach: the
// scopes of API keys and their reach (the whole team, one domain, one
// hostname), and the 403 answers when a key falls short. It knows nothing
// of storage or HTTP.
package access

import (
	"encoding/json"
	"strings"

	"github.com/hostmint/hostmint/apierror"
)

// Scope names.
const (
	HostnamesRead  = "hostnames:read"
	HostnamesWrite = "hostnames:write"
	DNS01Write     = "dns01:write"
)

// Scope is one grant of a key: a scope and its reach (the whole team when
// both Domain and Hostname are empty; Domain is a domain name, Hostname a
// hostname id).
type Scope struct {
	Scope    string `json:"scope"`
	Domain   string `json:"domain,omitempty"`
	Hostname string `json:"hostname,omitempty"`
}

// All is what a key created without scopes gets: every scope, team-wide.
func All() []Scope {
	return []Scope{{Scope: HostnamesRead}, {Scope: HostnamesWrite}, {Scope: DNS01Write}}
}

// Known reports whether name is a scope.
func Known(name string) bool {
	return name == HostnamesRead || name == HostnamesWrite || name == DNS01Write
}

// ParseScopes reads a stored scope list.
func ParseScopes(s string) []Scope {
	var out []Scope
	if json.Unmarshal([]byte(s), &out) != nil || len(out) == 0 {
		return All()
	}
	return out
}

// Principal is who a request acts for: a key of a team.
type Principal struct {
	AccountID string
	KeyID     string
	Scopes    []Scope
	// Names are the names of the hostnames Scopes are limited to, by id,
	// for messages a person reads; one missing is named by its id.
	Names map[string]string
	// Credential names the kind of key in messages: "API key" when empty,
	// "TSIG key" for DNS UPDATE.
	Credential string
}

func (p *Principal) credential() string {
	if p.Credential == "" {
		return "API key"
	}
	return p.Credential
}

// Target is what a request touches: a hostname (by id, with its domain and
// name for messages), or only a domain (minting), or the team (neither).
type Target struct {
	Hostname string // id
	Name     string // FQDN, for messages
	Domain   string // domain name
}

// Allows reports whether the key holds scope with a reach that covers t.
func (p *Principal) Allows(scope string, t Target) bool {
	for _, s := range p.Scopes {
		if s.Scope != scope {
			continue
		}
		switch {
		case s.Domain == "" && s.Hostname == "":
			return true
		case s.Hostname != "" && s.Hostname == t.Hostname:
			return true
		case s.Domain != "" && s.Domain == t.Domain:
			return true
		}
	}
	return false
}

// Require is nil when the key may use scope on t, else 403 FORBIDDEN naming
// the scope, what was asked for, and what the key is limited to.
func (p *Principal) Require(scope string, t Target) error {
	if p.Allows(scope, t) {
		return nil
	}
	what := "the whole team"
	switch {
	case t.Name != "":
		what = "hostname " + t.Name
	case t.Hostname != "":
		what = "hostname " + t.Hostname
	case t.Domain != "":
		what = "domain " + t.Domain
	}
	if limits := p.limits(scope, false); len(limits) > 0 {
		return apierror.Forbidden("this %s's %s scope is limited to %s; it does not reach %s", p.credential(), scope, strings.Join(limits, " and "), what)
	}
	return apierror.Forbidden("this %s lacks the %s scope for %s; it is limited to %s", p.credential(), scope, what, strings.Join(p.limits("", true), ", "))
}

// limits describes the reach of the key's grants of scope (all grants, each
// with its scope, when all is set).
func (p *Principal) limits(scope string, all bool) []string {
	var out []string
	for _, s := range p.Scopes {
		if !all && s.Scope != scope {
			continue
		}
		reach := "the whole team"
		switch {
		case s.Hostname != "":
			reach = "hostname " + s.Hostname
			if name := p.Names[s.Hostname]; name != "" {
				reach = "hostname " + name + " (" + s.Hostname + ")"
			}
		case s.Domain != "":
			reach = "domain " + s.Domain
		}
		if all {
			reach = s.Scope + " on " + reach
		}
		out = append(out, reach)
	}
	if all && len(out) == 0 {
		out = append(out, "no scope at all")
	}
	return out
}

// Reach is the part of a team a scope of the key covers.
type Reach struct {
	Team      bool
	Domains   []string // names
	Hostnames []string // ids
}

// Reach returns what the key may touch with scope.
func (p *Principal) Reach(scope string) Reach {
	var r Reach
	for _, s := range p.Scopes {
		switch {
		case s.Scope != scope:
		case s.Hostname != "":
			r.Hostnames = append(r.Hostnames, s.Hostname)
		case s.Domain != "":
			r.Domains = append(r.Domains, s.Domain)
		default:
			r.Team = true
		}
	}
	return r
}

// Empty reports whether r reaches nothing.
func (r Reach) Empty() bool { return !r.Team && len(r.Domains) == 0 && len(r.Hostnames) == 0 }
