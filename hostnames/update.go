package hostnames

import (
	"context"
	"errors"
	"net/netip"
	"strings"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/addrclass"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/targets"
)

// UpdateInput is a PUT request, fields as sent (nil: not sent).
type UpdateInput struct {
	IP     *string
	Target *string // [P2]
}

// Update points the hostname at a new address or ([P2]) a target to follow.
// [P1] the hostname comes back live with expires_at moved out, even if it
// had expired. [P2] the address must stay in the hostname's class; the same
// address again changes nothing; a new one reads pending until every
// nameserver serves it.
func (s *Service) Update(ctx context.Context, p *access.Principal, id string, in UpdateInput) (*storage.Hostname, error) {
	if !s.profile.Teams() {
		if in.Target != nil {
			return nil, apierror.BadRequest("target is not a field of this deployment (profile 1)")
		}
		return s.updateP1(ctx, p, id, in)
	}
	if (in.IP == nil) == (in.Target == nil) {
		return nil, apierror.BadRequest("send exactly one of ip and target")
	}
	var (
		target string
		answer *targets.Answer
	)
	if in.Target != nil {
		if target = domains.Normalize(*in.Target); target == "" {
			return nil, apierror.BadRequest("target %q is not a host name", *in.Target)
		}
		if err := s.cfg.Resolver.Check(target); err != nil {
			return nil, apierror.BadRequest("target %s is a name this service does not follow: %s", target,
				strings.TrimPrefix(err.Error(), targets.ErrNameRefused.Error()+": "))
		}
		if _, err := netip.ParseAddr(strings.Trim(target, "[]")); err == nil {
			return nil, apierror.BadRequest("target %q is an address, not a host name to follow; send it as ip", *in.Target)
		}
		// Only a caller who may change the hostname gets our resolver's time.
		h, err := s.owned(ctx, s.store.Reader(), p, id, access.HostnamesWrite)
		if err != nil {
			return nil, err
		}
		if err := refuseState(h); err != nil {
			return nil, err
		}
		// The lookup costs the update's token even when it is refused, so
		// the operator's resolver is not a free oracle. The token is not
		// the update: the audit log records the update, or its refusal.
		if err := s.store.WriteVisible(storage.WithoutAudit(ctx), func(ctx context.Context, tx *storage.Tx) error {
			if _, err := tx.LockAccount(ctx, p.AccountID); err != nil {
				return err
			}
			return ratelimit.Take(ctx, tx, p.AccountID, ratelimit.Updates, s.now())
		}); err != nil {
			return nil, err
		}
		if answer, err = s.resolve(ctx, target); err != nil {
			return nil, err
		}
	}
	return s.change(ctx, p, id, func(ctx context.Context, tx *storage.Tx, h *storage.Hostname, acct *account) error {
		now := s.now()
		class := ClassOf(h)
		var addrs []netip.Addr
		if in.IP != nil {
			addr, err := parseIP(in.IP)
			if err != nil {
				return err
			}
			if addr.class != class {
				return crossing(h, class)
			}
			addrs = []netip.Addr{addr.addr}
		} else if addrs = targets.OfClass(answer.Addrs, class); len(addrs) == 0 {
			return crossing(h, class)
		}
		if pointsAt(h, addrs, target) {
			// The same address again: a no-op, which spends no update of
			// the team's minute (as dyndns2's nochg does not).
			tx.NoAudit()
			return nil
		}
		if answer == nil { // a target's token was taken before its lookup
			if err := acct.take(ctx, ratelimit.Updates, now); err != nil {
				return err
			}
		}
		var refreshAt int64
		if target != "" {
			refreshAt = now.Add(answer.TTL).UnixMilli()
		}
		repoint(h, addrs, target, refreshAt, now)
		tx.UpdateHostnameLater(h)
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
}

func crossing(h *storage.Hostname, class addrclass.Class) error {
	return apierror.Conflict("hostname %s is %s for life and cannot move to a %s address; release it and register a new one",
		h.Name, class, other(class))
}

func other(c addrclass.Class) addrclass.Class {
	if c == addrclass.Public {
		return addrclass.Private
	}
	return addrclass.Public
}

// resolve looks a target up, mapping resolution failures to API errors.
func (s *Service) resolve(ctx context.Context, target string) (*targets.Answer, error) {
	a, err := s.cfg.Resolver.Resolve(ctx, target)
	switch {
	case err == nil:
		return a, nil
	case errors.Is(err, targets.ErrNoResolver):
		return nil, apierror.NotImplemented("targets need a resolver, and this deployment has none configured")
	case errors.Is(err, targets.ErrNoAddress):
		return nil, apierror.BadRequest("target %s has no A or AAAA records", target)
	case errors.Is(err, targets.ErrNameRefused):
		return nil, apierror.BadRequest("target %s: %v", target, strings.TrimPrefix(err.Error(), targets.ErrNameRefused.Error()+": "))
	default:
		s.log.Warn("resolving a target failed", "target", target, "err", err)
		return nil, apierror.Unavailable("could not resolve target %s right now; retry later", target)
	}
}

func (s *Service) updateP1(ctx context.Context, p *access.Principal, id string, in UpdateInput) (*storage.Hostname, error) {
	return s.change(ctx, p, id, func(ctx context.Context, tx *storage.Tx, h *storage.Hostname, acct *account) error {
		addr, err := parseIP(in.IP)
		if err != nil {
			return err
		}
		return s.setP1(ctx, tx, h, acct, addr)
	})
}

// setP1 points a profile-1 hostname at addr, under the plan gate, and
// renews it: shared by PUT and dyndns2, so both apply the same rules.
func (s *Service) setP1(ctx context.Context, tx *storage.Tx, h *storage.Hostname, acct *account, addr parsedIP) error {
	if addr.class == addrclass.Private {
		a, err := acct.lock(ctx)
		if err != nil {
			return err
		}
		if !plans.PrivateAddresses(a.Plan) {
			return apierror.Forbidden("private and reserved addresses need the Business plan (this account is on %s)", a.Plan)
		}
	}
	h.IP, h.Addrs = addr.text, addr.text
	return s.touch(ctx, tx, acct, h)
}
