package hostname

import (
	"testing"
	"time"

	"github.com/hostmint/hostmint/adminapi"
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
		countAnswer(dns.RcodeSuccess, dns.TypeA, kindTeam)
	}
}

// The per-request cost of the API metrics.
func BenchmarkObserveAPI(b *testing.B) {
	o := adminapi.Outcome{Route: "PUT /api/v1/hostnames/{id}", Auth: "key", Status: 200, Duration: 3 * time.Millisecond}
	for b.Loop() {
		observeAPI(o)
	}
}
