// Package nsprobe observes the service's own nameservers: does every one of
// them answer for a name with exactly the expected addresses? It sends real
// DNS queries and knows nothing of storage or the hostname lifecycle.
package nsprobe

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Prober asks a fixed set of nameservers.
type Prober struct {
	Servers []string // host:port
	Timeout time.Duration
}

// Serves reports whether every nameserver answers name with exactly addrs
// (its A records are the IPv4 ones, its AAAA records the IPv6 ones). With
// no nameserver to ask, there is nothing to wait for: true.
func (p *Prober) Serves(ctx context.Context, name string, addrs []netip.Addr) bool {
	var v4, v6 []netip.Addr
	for _, a := range addrs {
		if a.Is4() {
			v4 = append(v4, a)
		} else {
			v6 = append(v6, a)
		}
	}
	ok := true
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, server := range p.Servers {
		for qt, want := range map[uint16][]netip.Addr{dns.TypeA: v4, dns.TypeAAAA: v6} {
			wg.Go(func() {
				if !p.answers(ctx, server, dns.Fqdn(name), qt, want) {
					mu.Lock()
					ok = false
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return ok
}

func (p *Prober) answers(ctx context.Context, server, name string, qt uint16, want []netip.Addr) bool {
	timeout := p.Timeout
	if timeout == 0 {
		timeout = time.Second
	}
	m := new(dns.Msg)
	m.SetQuestion(name, qt)
	m.RecursionDesired = false
	c := &dns.Client{Timeout: timeout}
	r, _, err := c.ExchangeContext(ctx, m, server)
	if err != nil || r.Rcode != dns.RcodeSuccess && !(len(want) == 0 && r.Rcode == dns.RcodeNameError) {
		return false
	}
	w := slices.Clone(want)
	slices.SortFunc(w, netip.Addr.Compare)
	return slices.Equal(Addrs(r.Answer), w)
}

// Addrs is the A and AAAA data among rrs, sorted.
func Addrs(rrs []dns.RR) []netip.Addr {
	var out []netip.Addr
	for _, rr := range rrs {
		switch v := rr.(type) {
		case *dns.A:
			a, _ := netip.AddrFromSlice(v.A.To4())
			out = append(out, a)
		case *dns.AAAA:
			a, _ := netip.AddrFromSlice(v.AAAA)
			out = append(out, a)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}
