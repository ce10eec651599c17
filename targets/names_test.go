package targets

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/miekg/dns"
)

func TestNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		policy *Names
		target string
		ok     bool
	}{
		{"a public name", nil, "app.platform.example", true},
		{"documentation names stay open", nil, "app.platform.test", true},
		{"a single label", nil, "db", false},
		{".internal", nil, "db.corp.internal", false},
		{".local", nil, "printer.local", false},
		{".home.arpa", nil, "nas.home.arpa", false},
		{".localhost", nil, "api.localhost", false},
		{"a suffix itself", nil, "internal.", false},
		{"a name merely ending in the letters", nil, "notinternal.example", true},
		{"denied by the operator", &Names{Deny: []string{"corp.example"}}, "db.corp.example", false},
		{"outside the allowed", &Names{Allow: []string{"platform.example"}}, "app.other.example", false},
		{"inside the allowed", &Names{Allow: []string{"platform.example"}}, "app.platform.example", true},
		{"an allow lifts the default", &Names{Allow: []string{"corp.internal"}}, "db.corp.internal", true},
		{"deny wins over allow", &Names{Allow: []string{"platform.example"}, Deny: []string{"db.platform.example"}}, "x.db.platform.example", false},
	} {
		err := tc.policy.Check(tc.target)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrNameRefused) {
			t.Errorf("%s: Check(%q) = %v, want ok %v", tc.name, tc.target, err, tc.ok)
		}
	}
}

// An outside name whose answer leads through a CNAME into an inside one is
// refused: the address behind it is the internal network's.
func TestCNAMEIntoRefusedName(t *testing.T) {
	t.Parallel()
	addr := resolverOf(t, func(r *dns.Msg) *dns.Msg {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		m.Answer = append(m.Answer, &dns.CNAME{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60},
			Target: "db.corp.internal."})
		if q.Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: "db.corp.internal.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
				A: net.IPv4(10, 0, 0, 5)})
		}
		return m
	})
	r := &Resolver{Servers: []string{addr}}
	if a, err := r.Resolve(context.Background(), "app.platform.example"); !errors.Is(err, ErrNameRefused) {
		t.Errorf("Resolve through a CNAME into .internal = %v, %v; want ErrNameRefused", a, err)
	}
	r.Names = &Names{Allow: []string{"platform.example", "corp.internal"}}
	if a, err := r.Resolve(context.Background(), "app.platform.example"); err != nil || len(a.Addrs) != 1 {
		t.Errorf("with corp.internal allowed: %v, %v", a, err)
	}
}
