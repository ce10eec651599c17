package hostnames

import (
	"context"
	"errors"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/storage"
)

// owned reads a hostname of the caller's team that the key may use with
// one of scopes; another team's hostname is as unknown as one that does not
// exist.
func (s *core) owned(ctx context.Context, q interface {
	Hostname(context.Context, string) (*storage.Hostname, error)
}, p *access.Principal, id string, scopes ...string) (*storage.Hostname, error) {
	read := q.Hostname
	if tx, ok := q.(*storage.Tx); ok {
		read = tx.LockHostname // a write: hold the row until it commits
	}
	h, err := read(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || err == nil && h.AccountID != p.AccountID {
		return nil, apierror.HostnameNotFound()
	}
	if err != nil {
		return nil, err
	}
	t := access.Target{Hostname: h.ID, Name: h.Name, Domain: h.Zone()}
	for _, sc := range scopes {
		if p.Allows(sc, t) {
			return h, nil
		}
	}
	return nil, p.Require(scopes[0], t)
}

// Get reads one hostname. [P1] reading a live hostname is authenticated use:
// it slides expires_at, at most once per renewEvery (a read soon after a
// renewal answers the stored expiry and writes nothing); an expired one is
// returned as it is, not revived.
func (s *Service) Get(ctx context.Context, p *access.Principal, id string) (*storage.Hostname, error) {
	h, err := s.owned(ctx, s.store.Reader(), p, id, access.HostnamesRead)
	if err != nil || !s.profile.IdleExpiry() || !s.renewDue(h, s.now()) {
		return h, err
	}
	err = s.write(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		if h, err = s.owned(ctx, tx, p, id, access.HostnamesRead); err != nil {
			return err
		}
		now := s.now()
		if !s.renewDue(h, now) {
			return nil // renewed by another read since
		}
		h.ExpiresAt, h.UpdatedAt = s.expiry(now), now.UnixMilli()
		if err := tx.UpdateHostname(ctx, h); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	return h, err
}

// renewEvery is how often a [P1] read renews a hostname at most: a client
// polling its hostname many times a minute costs one write a minute, and
// the expiry it is shown is at most that much short of a fresh one. A
// hundredth of idle_expiry when that is shorter (tests run with seconds).
func (s *core) renewEvery() time.Duration { return min(time.Minute, s.idleExpiry/100) }

// renewDue reports whether a read at now renews h: it is live and its
// expiry was last moved more than renewEvery ago.
func (s *core) renewDue(h *storage.Hostname, now time.Time) bool {
	return s.Status(h, now) == storage.StatusLive && h.ExpiresAt < now.Add(s.idleExpiry-s.renewEvery()).UnixMilli()
}

// Page is one page of a list, with the [P2] envelope's counts.
type Page struct {
	Hostnames          []storage.Hostname
	Total, Active, Cap int
	Limit, Skip        int
}

// List returns the hostnames the key may read, newest first: released ones
// are left out, and [P2] terminated ones. Listing renews nothing. Total and
// Active count what the key may read; Cap is the team's.
func (s *Service) List(ctx context.Context, p *access.Principal, limit, skip int) (*Page, error) {
	reach := p.Reach(access.HostnamesRead)
	if reach.Empty() {
		return nil, p.Require(access.HostnamesRead, access.Target{})
	}
	q := s.store.Reader()
	f := storage.Filter{AccountID: p.AccountID, Team: reach.Team, HostnameIDs: reach.Hostnames, Exclude: []string{storage.StatusReleased}}
	if s.profile.Teams() {
		f.Exclude = append(f.Exclude, storage.StatusTerminated)
	}
	if len(reach.Domains) > 0 {
		ds, err := q.Domains(ctx)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			for _, name := range reach.Domains {
				if d.Name == name && d.AccountID == p.AccountID {
					f.DomainIDs = append(f.DomainIDs, d.ID)
				}
			}
		}
	}
	hs, err := q.FindHostnames(ctx, f, limit, skip)
	if err != nil {
		return nil, err
	}
	page := &Page{Hostnames: hs, Limit: limit, Skip: skip}
	if !s.profile.Teams() {
		return page, nil
	}
	if page.Total, err = q.CountHostnames(ctx, f); err != nil {
		return nil, err
	}
	if page.Active, err = q.CountHostnames(ctx, f, storage.ActiveStatuses...); err != nil {
		return nil, err
	}
	acct, err := q.Account(ctx, p.AccountID)
	if err != nil {
		return nil, err
	}
	page.Cap = s.Cap(acct)
	return page, nil
}

// changeable reads the caller's hostname for a change, refusing the states
// that take none.
func (s *core) changeable(ctx context.Context, tx *storage.Tx, p *access.Principal, id string) (*storage.Hostname, error) {
	h, err := s.owned(ctx, tx, p, id, access.HostnamesWrite)
	if err != nil {
		return nil, err
	}
	// The team's access as it stands in this transaction, read with the
	// row: a team suspended while the request waited (a slow target) is
	// refused here, not only when its key was checked.
	if err := accounts.CheckOpen(&storage.Account{ID: h.AccountID, SuspendedAt: h.AccountSuspendedAt, PlanEndsAt: h.AccountPlanEndsAt}, s.now()); err != nil {
		return nil, err
	}
	if err := refuseState(h); err != nil {
		return nil, err
	}
	return h, nil
}

// account is the account a change is checked against (caps, plan, rate
// limits), locked when first asked for: a change that needs none of them
// (a [P1] repoint to a public address) does not read it. The hostname's
// row is locked first either way, so locks are taken in one order.
type account struct {
	tx  *storage.Tx
	id  string
	row *storage.Account
}

func (a *account) lock(ctx context.Context) (*storage.Account, error) {
	if a.row != nil {
		return a.row, nil
	}
	row, err := a.tx.LockAccount(ctx, a.id)
	if err != nil {
		return nil, err
	}
	a.row = row
	return row, nil
}

// take counts one action against l for the account (locking it first).
func (a *account) take(ctx context.Context, l ratelimit.Limit, now time.Time) error {
	if _, err := a.lock(ctx); err != nil {
		return err
	}
	return ratelimit.Take(ctx, a.tx, a.id, l, now)
}

// refuseState answers a change to a hostname in a state that takes none.
func refuseState(h *storage.Hostname) error {
	switch h.Status {
	case storage.StatusReleased:
		return apierror.Conflict("hostname %s was released and cannot be changed; register a new hostname", h.Name)
	case storage.StatusTerminated:
		return apierror.Conflict("hostname %s was terminated after an abuse review and cannot be changed", h.Name)
	case storage.StatusSuspended:
		return apierror.Forbidden("hostname %s is suspended while an abuse report is reviewed", h.Name)
	}
	return nil
}

// Renew is the profile-1 heartbeat: expires_at moves out and an expired,
// unreleased hostname comes back live.
func (s *Service) Renew(ctx context.Context, p *access.Principal, id string) (*storage.Hostname, error) {
	return s.change(ctx, p, id, func(ctx context.Context, tx *storage.Tx, h *storage.Hostname, acct *account) error {
		return s.touch(ctx, tx, acct, h)
	})
}

// change runs fn in one transaction on the caller's hostname, once
// changeable has let it through, and returns the hostname as fn left it.
func (s *core) change(ctx context.Context, p *access.Principal, id string,
	fn func(context.Context, *storage.Tx, *storage.Hostname, *account) error) (*storage.Hostname, error) {
	var h *storage.Hostname
	// What the write reads first, for its batch to read with the others'.
	ctx = storage.Expect(ctx, storage.ExpectLockedHostname(id))
	err := s.write(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		var err error
		if h, err = s.changeable(ctx, tx, p, id); err != nil {
			return err
		}
		return fn(ctx, tx, h, &account{tx: tx, id: p.AccountID})
	})
	return h, err
}

// touch makes a profile-1 hostname live with a fresh expiry and writes it.
// Reviving an expired hostname makes it active again, so it counts against
// the cap like a create.
func (s *Service) touch(ctx context.Context, tx *storage.Tx, acct *account, h *storage.Hostname) error {
	now := s.now()
	if s.Status(h, now) == StatusExpired {
		a, err := acct.lock(ctx)
		if err != nil {
			return err
		}
		if err := s.checkCap(ctx, tx, a, now); err != nil {
			return err
		}
	}
	ratelimit.Charge(tx, h.AccountID, updatesOf(s.Cap(&storage.Account{Plan: h.AccountPlan, Cap: h.AccountCap})), now)
	h.Status, h.ExpiresAt, h.UpdatedAt = storage.StatusLive, s.expiry(now), now.UnixMilli()
	tx.UpdateHostnameLater(h) // the write's last statement: no round trip of its own
	return tx.Changed(ctx, storage.KindHostname, h.ID)
}

// Release stops serving the hostname and retires its label: for everyone
// ([P1]), or for every team but the one that released it ([P2]). Releasing
// a released hostname changes nothing and succeeds.
func (s *Service) Release(ctx context.Context, p *access.Principal, id string) error {
	return s.write(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		h, err := s.owned(ctx, tx, p, id, access.HostnamesWrite)
		if err != nil || h.Status == storage.StatusReleased {
			return err
		}
		if err := refuseState(h); err != nil {
			return err
		}
		// Its records, DNS-01 credentials and challenge values go with it:
		// nothing can use them again, and a name minted anew starts bare.
		// Closing an account releases its hostnames by the same statements.
		_, err = tx.ReleaseHostnames(ctx, storage.HostnameSet{ID: h.ID}, s.now().UnixMilli())
		return err
	})
}
