package hostnames

import (
	"context"
	"net/netip"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/storage"
)

// Lookup is the operator's question "who holds this?": by a hostname, by
// an address DNS serves, or by an account; exactly one of the three.
// Cursor is the previous page's next cursor.
type Lookup struct {
	Hostname, IP, AccountID string
	Cursor                  string
	Limit                   int
}

// Found is a page of an operator's look-up, newest first, released and
// terminated hostnames included; Next is "" on the last page.
type Found struct {
	Hostnames []storage.Hostname
	Next      string
}

// Find answers a Lookup for the operator (the admin API and the dashboard
// both ask here).
func (s *Service) Find(ctx context.Context, l Lookup) (*Found, error) {
	var q storage.HostnameQuery
	given := 0
	if l.Hostname != "" {
		given++
		if q.Name = domains.Normalize(l.Hostname); q.Name == "" {
			return nil, apierror.BadRequest("hostname %q is not a domain name", l.Hostname)
		}
	}
	if l.IP != "" {
		given++
		a, err := netip.ParseAddr(l.IP)
		if err != nil || a.Zone() != "" {
			return nil, apierror.BadRequest("ip %q is not an IPv4 or IPv6 address", l.IP)
		}
		q.Addr = a.Unmap().String()
	}
	if l.AccountID != "" {
		given++
		q.AccountID = l.AccountID
	}
	if given != 1 {
		return nil, apierror.BadRequest("send exactly one of hostname, ip and account_id")
	}
	var err error
	if q.After, err = storage.ParseCursor(l.Cursor); err != nil {
		return nil, apierror.BadCursor()
	}
	q.Limit = l.Limit
	hs, next, err := s.store.Reader().FindHostnamesFor(ctx, q)
	if err != nil {
		return nil, err
	}
	return &Found{Hostnames: hs, Next: next.String()}, nil
}
