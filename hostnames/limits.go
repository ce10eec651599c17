package hostnames

import (
	"time"

	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/ratelimit"
)

// createsOf and updatesOf are a [P1] account's hourly allowances, by its
// cap (plans.CreatesPerHour, UpdatesPerHour). Every door's creates and
// updates (PUT, renew, dyndns2, DNS UPDATE) draw on the same two.
func createsOf(cap int) ratelimit.Bucket {
	return ratelimit.Bucket{Kind: "create", Size: plans.CreatesPerHour(cap), Period: time.Hour, What: "creates"}
}

func updatesOf(cap int) ratelimit.Bucket {
	return ratelimit.Bucket{Kind: "update", Size: plans.UpdatesPerHour(cap), Period: time.Hour, What: "updates"}
}
