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
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/storage"
)

// ErrNotName is FindWritable's answer to a name that is not a fully
// qualified host name.
var ErrNotName = errors.New("not a fully qualified host name")

// FindWritable finds the hostname called name that the key may update: the
// caller's team's, reached by hostnames:write, neither released nor
// terminated. Every other case answers HostnameNotFound, so a dyndns2
// client learns nothing about names it may not touch. The name is split
// into its label and the served domain under it and found through the
// (domain_id, label) index, never by scanning names.
func (s *Service) FindWritable(ctx context.Context, p *access.Principal, name string) (*storage.Hostname, error) {
	n := domains.Normalize(name)
	if n == "" {
		return nil, ErrNotName
	}
	label, domain, _ := strings.Cut(n, ".")
	q := s.store.Reader()
	d, err := q.DomainByName(ctx, domain)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierror.HostnameNotFound()
	}
	if err != nil {
		return nil, err
	}
	h, err := q.HostnameByLabel(ctx, d.ID, label)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierror.HostnameNotFound()
	}
	if err != nil {
		return nil, err
	}
	if h, err = s.owned(ctx, q, p, h.ID, access.HostnamesWrite); err != nil {
		// A key without write reach is told what a stranger is: nothing.
		if pe, ok := apierror.As(err); ok && (pe.Code == apierror.CodeForbidden || pe.Code == apierror.CodeNotFound) {
			return nil, apierror.HostnameNotFound()
		}
		return nil, err
	}
	if h.Status == storage.StatusTerminated {
		return nil, apierror.HostnameNotFound()
	}
	return h, nil
}

// SetAddrs points the hostname at exactly addrs, under the rules of Update:
// [P2] at most one IPv4 and one IPv6 (dual stack), all of the hostname's
// class for life (409 otherwise), the team's update rate (429), suspended
// (403), a new address reads pending until every nameserver serves it; the
// addresses it already has write nothing, not even a rate token, so a client
// that repeats itself costs nothing. [P1] one address, private ones on the
// Business plan only (403); as every authenticated use, it renews the idle
// expiry (and revives an expired hostname) even when the address is the
// same. changed reports whether the addresses differ from the stored ones.
func (s *Service) SetAddrs(ctx context.Context, p *access.Principal, id string, addrs []netip.Addr) (h *storage.Hostname, changed bool, err error) {
	if err := checkAddrs(s.profile, addrs); err != nil {
		return nil, false, err
	}
	h, err = s.change(ctx, p, id, func(ctx context.Context, tx *storage.Tx, h *storage.Hostname, acct *account) error {
		changed = !pointsAt(h, addrs, "")
		if !s.profile.BothFamilies() {
			a := addrs[0]
			return s.setP1(ctx, tx, h, acct, parsedIP{addr: a, text: a.String(), class: addrclass.Of(a)})
		}
		if !changed {
			tx.NoAudit()
			return nil
		}
		now := s.now()
		if err := acct.take(ctx, ratelimit.Updates, now); err != nil {
			return err
		}
		class := ClassOf(h)
		for _, a := range addrs {
			if addrclass.Of(a) != class {
				return crossing(h, class)
			}
		}
		repoint(h, addrs, "", 0, now)
		if err := tx.UpdateHostname(ctx, h); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	if err != nil {
		return nil, false, err
	}
	return h, changed, nil
}

// checkAddrs refuses what a profile cannot store: a profile-1 hostname has
// one address, a profile-2 one at most one of each family (IPv4 first, the
// stored order).
func checkAddrs(p profile.Profile, addrs []netip.Addr) error {
	if len(addrs) == 0 {
		return apierror.BadRequest("an address is required")
	}
	for _, a := range addrs {
		if !a.IsValid() || a.Zone() != "" || a.Is4In6() {
			return apierror.BadRequest("%q is not an IPv4 or IPv6 address", a)
		}
	}
	if !p.BothFamilies() && len(addrs) > 1 {
		return apierror.BadRequest("a hostname of this deployment (profile 1) has one address")
	}
	if len(addrs) > 2 || len(addrs) == 2 && !(addrs[0].Is4() && addrs[1].Is6()) {
		return apierror.BadRequest("send at most one IPv4 and one IPv6 address, IPv4 first")
	}
	return nil
}
