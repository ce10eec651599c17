package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// A node started with another cert_encryption_key_file than the one that
// signed a domain never serves that domain unsigned (its parent publishes
// a DS: an unsigned answer is bogus): it answers SERVFAIL, transfers
// nothing, logs why, and reports not ready; the other domains answer.
func TestSignedDomainWithoutItsKey(t *testing.T) {
	t.Parallel()
	xfr := []string{
		"transfer {\n    to 127.0.0.1:9\n  }",
		fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret),
	}
	a := start(t, options{profile: 2, dialect: storage.Postgres, extra: []string{recKeyLine(t)}})
	const domain = "sealed.example.net"
	_, key := a.team(t, domain)
	_, host := a.recHost(t, key, "web", "198.41.0.4")
	a.must(200, "PATCH", "/api/admin/domains/"+a.recDomainID(t, domain), a.admin, recObj{"dnssec": true})

	o := options{profile: 2, dialect: storage.Postgres, dsn: a.dsn, dir: a.dir, block: xfr, extra: []string{recKeyLine(t)}} // another key
	text, b := corefile(t, &o)
	p, _ := launch(t, b, text)
	eventually(t, 20*time.Second, func() bool {
		return strings.Contains(p.output(), "cannot be opened")
	}, "node B does not say that it cannot open the signed domain's key")
	eventually(t, 10*time.Second, func() bool {
		// The log line comes before the API listens.
		if r, err := http.Get(b.api + "/api/health"); err != nil {
			return false
		} else {
			r.Body.Close()
		}
		h := b.do("GET", "/api/health", "", nil)
		return h.status == 503 && strings.Contains(h.str("error"), domain)
	}, "node B's health does not answer 503 naming %s", domain)
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{host, dns.TypeA}, {domain, dns.TypeSOA}, {domain, dns.TypeDNSKEY}} {
		if m := b.query(q.name, q.qtype, "udp"); m.Rcode != dns.RcodeServerFailure || len(m.Answer) > 0 {
			t.Errorf("node B, %s %s: %s, want SERVFAIL and no answer", q.name, dns.TypeToString[q.qtype], dns.RcodeToString[m.Rcode])
		}
	}
	if rrs, err := axfr(b.dnsAddr, domain); err == nil {
		t.Errorf("node B transferred the signed domain unsigned: %d records", len(rrs))
	}
	b.resolves("ns1.example.org", dns.TypeA, "127.0.0.1") // the pool domain still answers
	a.resolves(host, dns.TypeA, "198.41.0.4")
}
