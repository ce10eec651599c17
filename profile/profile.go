// Package profile is the behaviour profile a deployment runs, [P1] or [P2]
// of the specification. It is chosen once (the Corefile's profile) and
// passed down as a value that the layers ask what they need to know
// ("does this route exist?", "do names expire when idle?", "are there
// teams?") instead of comparing profile numbers.
package profile

import "fmt"

// Profile is a behaviour profile.
type Profile int

// The profiles, and Both for what exists in either.
const (
	Both Profile = 0
	P1   Profile = 1 // pool domains, idle expiry, plans free/pro/business
	P2   Profile = 2 // teams, scoped keys, dedicated domains, records, certificates
)

// Parse reads "1" or "2".
func Parse(s string) (Profile, error) {
	switch s {
	case "1":
		return P1, nil
	case "2":
		return P2, nil
	}
	return 0, fmt.Errorf("must be 1 or 2, got %q", s)
}

// String is the profile's number.
func (p Profile) String() string { return fmt.Sprint(int(p)) }

// Serves reports whether something marked for only (a route, a page, an
// option; Both for either) exists in this profile.
func (p Profile) Serves(only Profile) bool { return only == Both || only == p }

// IdleExpiry reports whether names expire when their owner stops using
// them, an authenticated read renews them, and a hostname shows when it
// expires ([P1]).
func (p Profile) IdleExpiry() bool { return p == P1 }

// Teams reports whether accounts are teams ([P2]): keys with scopes and
// reach, the team's own domains and subdomains, records, certificates,
// targets, hostnames pending until the nameservers serve them, abuse
// actions, billing, and lists paged with their totals.
func (p Profile) Teams() bool { return p == P2 }

// BothFamilies reports whether a hostname may hold an IPv4 and an IPv6
// address at once ([P2]); a [P1] hostname holds one address.
func (p Profile) BothFamilies() bool { return p == P2 }

// NamedPlans reports whether plans are whatever the operator names them
// ([P2]); [P1] has free, pro and business.
func (p Profile) NamedPlans() bool { return p == P2 }

// PlanGates reports whether plans gate features ([P1]): custom labels
// need Pro or Business, private addresses Business.
func (p Profile) PlanGates() bool { return p == P1 }

// RetiresLabels reports whether a released label is retired for good
// ([P1]); a [P2] team's released name stays the team's to mint again.
func (p Profile) RetiresLabels() bool { return p == P1 }
