package plans

import (
	"testing"

	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/storage"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile profile.Profile
		plan    string
		ok      bool
	}{
		{1, "free", true}, {1, "pro", true}, {1, "business", true},
		{1, "enterprise", false}, {1, "Free", false}, {1, "", false},
		{2, "enterprise", true}, {2, "team-10", true}, {2, "free", true},
		{2, "", false}, {2, "Team", false}, {2, "-x", false},
		{2, "a23456789012345678901234567890123", false}, // 33 characters
	} {
		if err := Check(tc.profile, tc.plan); (err == nil) != tc.ok {
			t.Errorf("Check(%d, %q) = %v, want ok %v", tc.profile, tc.plan, err, tc.ok)
		}
	}
}

func TestCap(t *testing.T) {
	t.Parallel()
	own := 7
	caps := map[string]int{Free: 25, "team": 40}
	for _, tc := range []struct {
		name string
		a    storage.Account
		want int
	}{
		{"the plan's", storage.Account{Plan: Free}, 25},
		{"the account's own wins", storage.Account{Plan: Free, Cap: &own}, 7},
		{"a named team plan", storage.Account{Plan: "team"}, 40},
		{"a plan no cap names", storage.Account{Plan: "other"}, DefaultTeamCap},
	} {
		if got := Cap(&tc.a, caps); got != tc.want {
			t.Errorf("%s: Cap = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestUnlocks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		plan             string
		labels, privates bool
	}{
		{Free, false, false}, {Pro, true, false}, {Business, true, true}, {"team", false, false},
	} {
		if CustomLabels(tc.plan) != tc.labels || PrivateAddresses(tc.plan) != tc.privates {
			t.Errorf("%s: custom labels %v, private addresses %v; want %v, %v",
				tc.plan, CustomLabels(tc.plan), PrivateAddresses(tc.plan), tc.labels, tc.privates)
		}
	}
	DefaultCaps()[Free] = 1
	if defaultCaps[Free] != 25 {
		t.Errorf("DefaultCaps is not a copy")
	}
}
