package answer

import (
	"testing"

	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/miekg/dns"
)

func TestTypeLabel(t *testing.T) {
	for _, tc := range []struct {
		qtype uint16
		want  string
	}{
		{dns.TypeA, "A"}, {dns.TypeHTTPS, "HTTPS"}, {dns.TypeANY, "ANY"},
		{dns.TypeNULL, "other"}, {65280, "other"}, {dns.TypeAXFR, "other"},
	} {
		if got := typeLabel(tc.qtype); got != tc.want {
			t.Errorf("typeLabel(%d) = %q, want %q", tc.qtype, got, tc.want)
		}
	}
}

// The per-answer cost of the answers metric, paid on every DNS answer.
func BenchmarkCountAnswer(b *testing.B) {
	for b.Loop() {
		Count(dns.RcodeSuccess, dns.TypeA, index.KindTeam)
	}
}
