package hostname

import (
	"context"
	"fmt"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/hostmint/hostmint/plugin/hostname/rrl"
	"github.com/miekg/dns"
)

// A signed zone denies a random name with NOERROR and an NSEC of its own:
// those denials share the zone's allowance, as NXDOMAINs do, so a flood
// of random names with answer.DO draws no more than the limit either.
func TestRRLSignedDenials(t *testing.T) {
	t.Parallel()
	h := signedFixture(t, 3, true)
	h.answers.SetLimiter(rrl.New(5, 0, 0, 0))
	full := 0
	for i := range 200 {
		m := new(dns.Msg)
		m.SetQuestion(fmt.Sprintf("random%d.example.org.", i), dns.TypeA)
		m.SetEdns0(1232, true)
		rec := dnstest.NewRecorder(&test.ResponseWriter{}) // over UDP
		h.ServeDNS(context.Background(), rec, m)
		if rec.Msg != nil && !rec.Msg.Truncated {
			full++
		}
	}
	if full > 6 {
		t.Errorf("%d of 200 signed denials of random names sent, want the limit of 5", full)
	}
}
