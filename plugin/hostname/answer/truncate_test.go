package answer

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func rrs(t *testing.T, lines ...string) []dns.RR {
	t.Helper()
	var out []dns.RR
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rr)
	}
	return out
}

const sig = "RRSIG %s 13 3 3600 20261210000000 20261126000000 12345 example.org. " +
	"MEUCIQDd3n8HVkZ3xJmZy9vqVb6Q8sYk3n9l8c2VhQk1n0Q0vQIgXq1yLQ3p3tDq4Hk7mQm9rT1Yx8Jd3mX0mY8b0o1n2c3dd2Vh"

// size is m's packed length with these answer and additional records.
func size(t *testing.T, answer, extra []dns.RR) int {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion("example.org.", dns.TypeNS)
	m.Answer, m.Extra = answer, extra
	m.SetEdns0(1232, true)
	m.Compress = true
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// Only the additional section's RRSIGs left out: TC stays clear (RFC 4035
// 3.1.1); a glue address or an answer's RRSIG left out: TC is set.
func TestTruncate(t *testing.T) {
	var ns, addrs, sigs []string
	for _, n := range []string{"ns1", "ns2", "ns3", "ns4", "ns5", "ns6"} {
		ns = append(ns, "example.org. 3600 IN NS "+n+".example.org.")
		addrs = append(addrs, n+".example.org. 3600 IN A 192.0.2.53", n+".example.org. 3600 IN AAAA 2001:db8::53")
		sigs = append(sigs, n+".example.org. 3600 IN "+strings.Replace(sig, "%s", "A", 1), n+".example.org. 3600 IN "+strings.Replace(sig, "%s", "AAAA", 1))
	}
	ns = append(ns, "example.org. 3600 IN "+strings.Replace(sig, "%s", "NS", 1))
	answer := rrs(t, ns...)
	withAddrs := size(t, answer, rrs(t, addrs...))
	all := size(t, answer, rrs(t, append(append([]string{}, addrs...), sigs...)...))
	for _, tc := range []struct {
		name    string
		limit   int
		tc      bool
		answers int
		extra   int // without the OPT
	}{
		{"everything fits", all, false, len(ns), len(addrs) + len(sigs)},
		{"the glue's RRSIGs do not", withAddrs, false, len(ns), len(addrs)},
		{"one glue RRSIG does", withAddrs + 130, false, len(ns), len(addrs) + 1},
		{"the glue does not", withAddrs - 1, true, len(ns), len(addrs) - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.limit < dns.MinMsgSize {
				t.Fatalf("limit %d: below what Truncate takes", tc.limit)
			}
			m := new(dns.Msg)
			m.SetQuestion("example.org.", dns.TypeNS)
			m.Response, m.Authoritative = true, true
			m.Answer = rrs(t, ns...)
			// Signatures among the addresses, as the answerer builds them.
			for i := range addrs {
				m.Extra = append(m.Extra, rrs(t, addrs[i], sigs[i])...)
			}
			m.SetEdns0(1232, true)
			truncate(m, tc.limit)
			extra := len(m.Extra) - 1
			if m.Truncated != tc.tc || len(m.Answer) != tc.answers || extra != tc.extra {
				t.Errorf("TC %v, %d answers, %d additional; want TC %v, %d, %d\n%s", m.Truncated, len(m.Answer), extra, tc.tc, tc.answers, tc.extra, m)
			}
			if m.IsEdns0() == nil {
				t.Error("the OPT is gone")
			}
			if b, err := m.Pack(); err != nil || len(b) > tc.limit {
				t.Errorf("packs to %d bytes (%v), limit %d", len(b), err, tc.limit)
			}
		})
	}
}
