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

// SweepClosedTeams runs one pass of EndClosedTeams.
func (s *Service) SweepClosedTeams(ctx context.Context) error {
	return s.endClosedTeams(ctx, func(string, ...any) {})
}
