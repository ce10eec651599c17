// Package targets resolves the platform endpoints ([P2] `target`) that a
// hostname follows, through the resolvers configured for the deployment, and
// keeps the answers that a hostname of a given address class may publish.
// It knows nothing of storage or HTTP.
package targets

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/hostmint/hostmint/addrclass"
	"github.com/miekg/dns"
)

// Errors of a resolution.
var (
	ErrNoResolver  = errors.New("targets: no resolver configured")
	ErrNoAddress   = errors.New("targets: the target has no A or AAAA records")
	ErrUnreachable = errors.New("targets: no resolver answered")
)

// TTL bounds for refreshes: never hammer a resolver, never hold a stale
// answer for long.
const (
	MinTTL = 5 * time.Second
	MaxTTL = time.Hour
)

// Resolver asks recursive resolvers for a target's A and AAAA records.
type Resolver struct {
	Servers []string // host:port, tried in order
	Timeout time.Duration
	// Names is the policy of names a target may follow, the CNAMEs its
	// answer leads through included; nil: the default (Names.Check).
	Names *Names
}

// Check refuses a target the policy does not let a hostname follow.
func (r *Resolver) Check(name string) error {
	var p *Names
	if r != nil {
		p = r.Names
	}
	return p.Check(name)
}

// Answer is what a target resolved to.
type Answer struct {
	Addrs []netip.Addr  // IPv4 first, each family sorted
	TTL   time.Duration // the smallest TTL seen, within MinTTL..MaxTTL
}

// Resolve looks up name's A and AAAA records.
func (r *Resolver) Resolve(ctx context.Context, name string) (*Answer, error) {
	if r == nil || len(r.Servers) == 0 {
		return nil, ErrNoResolver
	}
	if err := r.Check(name); err != nil {
		return nil, err
	}
	var last error
	for _, server := range r.Servers {
		a, err := r.ask(ctx, server, dns.Fqdn(name))
		if err == nil || errors.Is(err, ErrNoAddress) || errors.Is(err, ErrNameRefused) {
			return a, err
		}
		last = err
	}
	return nil, fmt.Errorf("%w: %v", ErrUnreachable, last)
}

func (r *Resolver) ask(ctx context.Context, server, name string) (*Answer, error) {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	c := &dns.Client{Timeout: timeout}
	ans := &Answer{TTL: MaxTTL}
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
		m := new(dns.Msg)
		m.SetQuestion(name, qt)
		m.SetEdns0(1232, false)
		resp, err := exchange(ctx, c, m, server)
		if err == nil && resp.Truncated {
			c.Net = "tcp"
			resp, err = exchange(ctx, c, m, server)
			c.Net = ""
		}
		if err != nil {
			return nil, err
		}
		switch resp.Rcode {
		case dns.RcodeSuccess:
		case dns.RcodeNameError:
			continue
		default:
			return nil, fmt.Errorf("%s answered %s", server, dns.RcodeToString[resp.Rcode])
		}
		// Only the name asked and the names its CNAME chain leads to count.
		chain := map[string]bool{strings.ToLower(name): true}
		for _, rr := range resp.Answer {
			if c, ok := rr.(*dns.CNAME); ok && chain[strings.ToLower(c.Hdr.Name)] {
				// An outside name must not lead to an inside one.
				if err := r.Check(strings.ToLower(c.Target)); err != nil {
					return nil, err
				}
				chain[strings.ToLower(c.Target)] = true
			}
		}
		for _, rr := range resp.Answer {
			if !chain[strings.ToLower(rr.Header().Name)] {
				continue
			}
			var a netip.Addr
			switch v := rr.(type) {
			case *dns.A:
				a, _ = netip.AddrFromSlice(v.A.To4())
			case *dns.AAAA:
				a, _ = netip.AddrFromSlice(v.AAAA)
			default:
				continue
			}
			ans.Addrs = append(ans.Addrs, a.Unmap())
			ans.TTL = min(ans.TTL, time.Duration(rr.Header().Ttl)*time.Second)
		}
	}
	if len(ans.Addrs) == 0 {
		return nil, ErrNoAddress
	}
	slices.SortFunc(ans.Addrs, func(a, b netip.Addr) int {
		if a.Is4() != b.Is4() {
			if a.Is4() {
				return -1
			}
			return 1
		}
		return a.Compare(b)
	})
	ans.Addrs = slices.Compact(ans.Addrs)
	ans.TTL = max(MinTTL, ans.TTL)
	return ans, nil
}

// exchange is c.ExchangeContext that also gives up when ctx is cancelled:
// miekg/dns obeys only a context's deadline, and a shutdown must not wait
// out the timeout of a resolver that never answers.
func exchange(ctx context.Context, c *dns.Client, m *dns.Msg, server string) (*dns.Msg, error) {
	conn, err := c.DialContext(ctx, server)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// Closing the connection ends a read in progress at once.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	resp, _, err := c.ExchangeWithConnContext(ctx, m, conn)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return resp, err
}

// OfClass returns addrs if every one is of class c, and nil if any is not:
// an answer that mixes in an address of the other class is refused whole
// (a public name must never start pointing into a private network).
func OfClass(addrs []netip.Addr, c addrclass.Class) []netip.Addr {
	for _, a := range addrs {
		if addrclass.Of(a) != c {
			return nil
		}
	}
	return addrs
}
