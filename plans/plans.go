// Package plans holds the plans accounts are on and what each allows: the
// names a plan may have, its active-hostname cap and, in profile 1, what
// the Pro and Business plans unlock. Whatever asks about a plan asks here.
package plans

import (
	"maps"
	"regexp"
	"slices"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/storage"
)

// Profile 1's plans.
const (
	Free     = "free"
	Pro      = "pro"
	Business = "business"
)

// Profile1 are profile 1's plans, cheapest first. Profile 2's plans are
// whatever the operator names (Check).
var Profile1 = []string{Free, Pro, Business}

// defaultCaps are profile 1's active-hostname caps; free is the spec's
// 25, the others are this service's defaults (Corefile plan_cap changes
// them).
var defaultCaps = map[string]int{Free: 25, Pro: 100, Business: 1000}

// DefaultCaps is a copy of the default caps by plan, for a configuration
// to change.
func DefaultCaps() map[string]int { return maps.Clone(defaultCaps) }

// DefaultTeamCap is the cap of a profile-2 plan that no plan_cap names.
const DefaultTeamCap = 25

var name = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// Check refuses a plan name the profile does not have (400).
func Check(p profile.Profile, plan string) error {
	if !p.NamedPlans() && !slices.Contains(Profile1, plan) {
		return apierror.BadRequest("plan must be free, pro or business, got %q", plan)
	}
	if !name.MatchString(plan) {
		return apierror.BadRequest("plan must be 1 to 32 of a-z 0-9 _ -, got %q", plan)
	}
	return nil
}

// Cap is a's active-hostname cap: its own if the operator set one, else
// its plan's in caps, else DefaultTeamCap.
func Cap(a *storage.Account, caps map[string]int) int {
	if a.Cap != nil {
		return *a.Cap
	}
	if c, ok := caps[a.Plan]; ok {
		return c
	}
	return DefaultTeamCap
}

// [P1] an account's creates and updates are rate limited by its cap: an
// hour's allowance of CreatesPerName creates and UpdatesPerName updates
// for each hostname the cap allows, and never less than the free plan's
// (MinCreates, MinUpdates), however small an operator makes a cap. An
// update every two and a half minutes per name covers any updater; the
// floor lets a small account release and re-create as tests do.
const (
	CreatesPerName = 4
	UpdatesPerName = 24
	MinCreates     = CreatesPerName * 25
	MinUpdates     = UpdatesPerName * 25
)

// CreatesPerHour is the [P1] create allowance of an account whose cap is c.
func CreatesPerHour(c int) int { return max(MinCreates, CreatesPerName*c) }

// UpdatesPerHour is the [P1] update allowance of an account whose cap is c.
func UpdatesPerHour(c int) int { return max(MinUpdates, UpdatesPerName*c) }

// CustomLabels reports whether [P1] plan may choose its labels.
func CustomLabels(plan string) bool { return plan == Pro || plan == Business }

// PrivateAddresses reports whether [P1] plan may point names at private
// and reserved addresses.
func PrivateAddresses(plan string) bool { return plan == Business }
