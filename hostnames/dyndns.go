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

// Families is what a dyndns2 request says of a hostname's addresses, by
// family: an IPv4, an IPv6, or an IPv6 prefix (at most /64) whose bits
// replace the current IPv6 address's, keeping its interface identifier.
// A family the request does not name stays as it is ([P2]).
type Families struct {
	V4, V6   netip.Addr
	V6Prefix netip.Prefix
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
	return s.setAddrs(ctx, p, id, func(*storage.Hostname) ([]netip.Addr, error) { return addrs, nil })
}

// SetFamilies is SetAddrs for what a dyndns2 request says: [P2] a family f
// leaves out keeps its address (a router that sends IPv4 and IPv6 in
// separate requests keeps both), and an IPv6 prefix keeps the current IPv6
// address's interface identifier; [P1] the one address, the IPv4 if f has
// one.
func (s *Service) SetFamilies(ctx context.Context, p *access.Principal, id string, f Families) (h *storage.Hostname, changed bool, err error) {
	if !f.V4.IsValid() && !f.V6.IsValid() && !f.V6Prefix.IsValid() {
		return nil, false, apierror.BadRequest("an address is required")
	}
	if f.V6Prefix.IsValid() && (!f.V6Prefix.Addr().Is6() || f.V6Prefix.Bits() > 64) {
		return nil, false, apierror.BadRequest("an IPv6 prefix is at most /64, got %s", f.V6Prefix)
	}
	return s.setAddrs(ctx, p, id, func(h *storage.Hostname) ([]netip.Addr, error) {
		addrs, err := s.familiesOf(h, f)
		if err != nil {
			return nil, err
		}
		return addrs, checkAddrs(s.profile, addrs)
	})
}

// setAddrs points the hostname at the addresses pick gives for it as it
// stands in the write's transaction (see SetAddrs).
func (s *Service) setAddrs(ctx context.Context, p *access.Principal, id string, pick func(*storage.Hostname) ([]netip.Addr, error)) (h *storage.Hostname, changed bool, err error) {
	h, err = s.change(ctx, p, id, func(ctx context.Context, tx *storage.Tx, h *storage.Hostname, acct *account) error {
		addrs, err := pick(h)
		if err != nil {
			return err
		}
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
		tx.UpdateHostnameLater(h)
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	if err != nil {
		return nil, false, err
	}
	return h, changed, nil
}

// familiesOf is the addresses h is to have after f: [P2] one of each
// family f or h has, IPv4 first; [P1] the one address f gives.
func (s *Service) familiesOf(h *storage.Hostname, f Families) ([]netip.Addr, error) {
	var cur4, cur6 netip.Addr
	for _, a := range h.ServedAddrs() {
		if a.Is4() {
			cur4 = a
		} else {
			cur6 = a
		}
	}
	v6 := f.V6
	if !v6.IsValid() && f.V6Prefix.IsValid() {
		if !cur6.IsValid() {
			return nil, apierror.BadRequest("hostname %s has no IPv6 address whose interface identifier the prefix %s could keep; send the whole address",
				h.Name, f.V6Prefix)
		}
		v6 = withPrefix(f.V6Prefix, cur6)
	}
	if !s.profile.BothFamilies() {
		if f.V4.IsValid() {
			return []netip.Addr{f.V4}, nil
		}
		return []netip.Addr{v6}, nil
	}
	v4 := f.V4
	if !v4.IsValid() {
		v4 = cur4
	}
	if !v6.IsValid() {
		v6 = cur6
	}
	var addrs []netip.Addr
	for _, a := range []netip.Addr{v4, v6} {
		if a.IsValid() {
			addrs = append(addrs, a)
		}
	}
	return addrs, nil
}

// withPrefix is a with its first p.Bits() bits replaced by p's.
func withPrefix(p netip.Prefix, a netip.Addr) netip.Addr {
	pb, ab := p.Masked().Addr().As16(), a.As16()
	for i := range 16 {
		keep := byte(0xff) // the bits of a kept in byte i
		switch bits := p.Bits() - 8*i; {
		case bits >= 8:
			keep = 0
		case bits > 0:
			keep = 0xff >> bits
		}
		ab[i] = pb[i]&^keep | ab[i]&keep
	}
	return netip.AddrFrom16(ab)
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
