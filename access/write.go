package access

import (
	"strings"

	"github.com/hostmint/hostmint/apierror"
)

// Writes reports whether the key holds a scope that writes
// (hostnames:write or dns01:write), whatever its reach.
func (p *Principal) Writes() bool {
	return !p.Reach(HostnamesWrite).Empty() || !p.Reach(DNS01Write).Empty()
}

// RequireWrite is nil when the key Writes, else 403 FORBIDDEN saying that
// what (the act asked for, such as "issuing a TSIG key") needs a write
// scope, and what the key is limited to.
func (p *Principal) RequireWrite(what string) error {
	if p.Writes() {
		return nil
	}
	return apierror.Forbidden("%s needs the %s or %s scope; this %s is limited to %s",
		what, HostnamesWrite, DNS01Write, p.credential(), strings.Join(p.limits("", true), ", "))
}
