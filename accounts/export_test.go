package accounts

import (
	"context"
	"time"
)

// SetClock sets the clock of s and a (either may be nil).
func SetClock(s *Service, a *Authenticator, now func() time.Time) {
	if s != nil {
		s.now = now
	}
	if a != nil {
		a.now = now
	}
}

// SweepPlanEnds runs one pass of EndClosedTeams from *since.
func (s *Service) SweepPlanEnds(ctx context.Context, since *int64) error {
	return s.sweepPlanEnds(ctx, since, func(string, ...any) {})
}
