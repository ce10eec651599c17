package accounts

import (
	"context"
	"errors"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
)

// A team's access is closed when the operator suspends it or its plan ends
// (storage.Account.Access). Closing ends what lets people in: its dashboard
// sessions and unused sign-in links are deleted, in the same transaction as
// a suspension and by a sweep (EndClosedTeams) once a plan's end passes;
// its keys and DNS-01 credentials answer 403 from that moment on every
// node, as do sessions and links a sweep has not reached yet. What the
// team published stays served: to take a hostname down, suspend it.

func stamp(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// CheckOpen is the answer to a closed account's key, credential or link
// (403 saying why), nil when a is open at now; the DNS-01 update calls it
// inside its transaction.
func CheckOpen(a *storage.Account, now time.Time) error {
	switch a.Access(now.UnixMilli()) {
	case storage.AccountSuspended:
		return apierror.Forbidden("account %s is suspended; its operator can restore it", a.ID)
	case storage.AccountEnded:
		return apierror.Forbidden("the plan of account %s ended at %s; its operator can extend it", a.ID, stamp(a.PlanEndsAt))
	}
	return nil
}

// Access is what can open a team's dashboard: its live sessions and unused
// sign-in links.
type Access struct {
	Sessions    []storage.Session
	SigninLinks []storage.SigninLink
}

// TeamAccess lists an account's live sessions and unused sign-in links.
// A closed team has none, whatever a sweep has done yet.
func (s *Service) TeamAccess(ctx context.Context, accountID string) (*Access, error) {
	a, err := s.Get(ctx, accountID)
	if err != nil {
		return nil, err
	}
	now := s.now().UnixMilli()
	if a.Access(now) != storage.AccountActive {
		return &Access{Sessions: []storage.Session{}, SigninLinks: []storage.SigninLink{}}, nil
	}
	ss, ls, err := s.store.Reader().TeamAccess(ctx, accountID, now)
	if err != nil {
		return nil, err
	}
	return &Access{Sessions: ss, SigninLinks: ls}, nil
}

// Ended counts what EndTeamAccess ended.
type Ended struct {
	Sessions    int `json:"sessions_ended"`
	SigninLinks int `json:"signin_links_ended"`
}

// EndTeamAccess signs out every browser of a team and withdraws its unused
// sign-in links, on every node at once.
func (s *Service) EndTeamAccess(ctx context.Context, accountID string) (Ended, error) {
	var e Ended
	_, err := s.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if _, err := tx.LockAccount(ctx, accountID); errors.Is(err, storage.ErrNotFound) {
			return accountNotFound()
		} else if err != nil {
			return err
		}
		var err error
		e.Sessions, e.SigninLinks, err = tx.EndTeamAccess(ctx, accountID)
		return err
	})
	return e, err
}

// EndTeamSession signs out one browser of a team; 404 when the team has no
// such session.
func (s *Service) EndTeamSession(ctx context.Context, accountID, id string) error {
	return s.endOne(ctx, accountID, "Session", func(ctx context.Context, tx *storage.Tx) (bool, error) {
		return tx.EndTeamSession(ctx, accountID, id)
	})
}

// EndSigninLink withdraws one unused sign-in link of a team; 404 when the
// team has no such unused link.
func (s *Service) EndSigninLink(ctx context.Context, accountID, id string) error {
	return s.endOne(ctx, accountID, "Sign-in link", func(ctx context.Context, tx *storage.Tx) (bool, error) {
		return tx.EndSigninLink(ctx, accountID, id)
	})
}

func (s *Service) endOne(ctx context.Context, accountID, what string, end func(context.Context, *storage.Tx) (bool, error)) error {
	_, err := s.store.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if _, err := tx.Account(ctx, accountID); errors.Is(err, storage.ErrNotFound) {
			return accountNotFound()
		} else if err != nil {
			return err
		}
		found, err := end(ctx, tx)
		if err == nil && !found {
			return apierror.NotFound("%s not found", what)
		}
		return err
	})
	return err
}

// EndClosedTeams ends the sessions and sign-in links of the teams whose
// plan ends, at start and every interval until ctx ends. Each pass takes
// the plans that ended since the last one (at start: within the longest a
// session or link lives, as anything older has expired by itself), so its
// cost follows the plans ending, not the accounts. Every node runs it; a
// pass that finds another's work done ends nothing.
func (s *Service) EndClosedTeams(ctx context.Context, interval time.Duration, infof, warnf func(format string, args ...any)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	since := s.now().Add(-max(SigninLinkTTL, SessionTTL)).UnixMilli()
	for {
		if err := s.sweepPlanEnds(ctx, &since, infof); err != nil && ctx.Err() == nil {
			warnf("ending the dashboard access of teams whose plan ended failed; trying again in %s: %v", interval, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepPlanEnds ends the access of the teams whose plan ended after
// *since, and moves *since to now once every one is done.
func (s *Service) sweepPlanEnds(ctx context.Context, since *int64, infof func(format string, args ...any)) error {
	now := s.now().UnixMilli()
	ids, err := s.store.Reader().PlansEnded(ctx, *since, now)
	if err != nil {
		return err
	}
	for _, id := range ids {
		e, err := s.EndTeamAccess(ctx, id)
		if err != nil {
			return err
		}
		if e.Sessions+e.SigninLinks > 0 {
			infof("the plan of team %s ended: ended %d dashboard sessions and %d unused sign-in links", id, e.Sessions, e.SigninLinks)
		}
	}
	*since = now
	return nil
}
