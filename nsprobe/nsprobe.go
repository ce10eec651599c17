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
	// Result hears each nameserver's answer to each probe; nil for none.
	Result func(server string, served bool)
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
	served := make([]bool, len(p.Servers))
	var wg sync.WaitGroup
	for i, server := range p.Servers {
		wg.Go(func() {
			served[i] = p.answers(ctx, server, dns.Fqdn(name), dns.TypeA, v4) &&
				p.answers(ctx, server, dns.Fqdn(name), dns.TypeAAAA, v6)
			if p.Result != nil && ctx.Err() == nil {
				p.Result(server, served[i])
			}
		})
	}
	wg.Wait()
	return !slices.Contains(served, false)
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
