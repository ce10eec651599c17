package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// answersA reports whether addr answers name's A record with ip (false on
// NXDOMAIN or no answer).
func answersA(addr, name, ip string) bool {
	m := askAt(addr, name, dns.TypeA)
	if m == nil || m.Rcode != dns.RcodeSuccess {
		return false
	}
	for _, rr := range m.Answer {
		if a, ok := rr.(*dns.A); ok && a.A.String() == ip {
			return true
		}
	}
	return false
}

// nxdomain reports whether addr answers NXDOMAIN for name.
func nxdomain(addr, name string) bool {
	m := askAt(addr, name, dns.TypeA)
	return m != nil && m.Rcode == dns.RcodeNameError
}

// ixfrFailed reports whether the secondary's log shows an incremental
// transfer it could not apply (it then fell back to the whole zone): told
// to delete a record it did not hold.
func (sec *secondary) ixfrFailed() bool {
	b, _ := os.ReadFile(sec.log)
	switch sec.name {
	case "knot":
		return strings.Contains(string(b), "failed to apply changes")
	case "nsd":
		return strings.Contains(string(b), "Failed to apply IXFR cleanly") || strings.Contains(string(b), "diff: ")
	}
	return false
}

// expiriesRecorded reads coredns_hostname_expiries_recorded_total from this
// process's registry, where the in-process servers count.
func expiriesRecorded() float64 {
	mfs, _ := prometheus.DefaultGatherer.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "coredns_hostname_expiries_recorded_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// An idle [P1] name that expires leaves the secondaries too: its expiry is
// recorded as a change once it has passed, so they are NOTIFYed and delete
// it by IXFR within a few seconds; renewing it brings it back the same way,
// without an IXFR that deletes again what they dropped.
// A name kept in use stays.
func TestTransferIdleExpiry(t *testing.T) {
	t.Parallel()
	for _, d := range []storage.Dialect{storage.SQLite, storage.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			knotPort, nsdPort := freePort(t), freePort(t)
			s := start(t, options{dialect: d, idle: "4s", block: []string{
				fmt.Sprintf("transfer {\n    to 127.0.0.1:%d 127.0.0.1:%d\n  }", knotPort, nsdPort),
				fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret),
			}})
			_, key := s.account("business")
			idle := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.1"})
			kept := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.2"})
			expires, err := time.Parse(time.RFC3339Nano, idle.str("expires_at"))
			if err != nil {
				t.Fatal(err)
			}
			secs := []*secondary{startSecondary(t, "knot", knotPort, s.dnsAddr), startSecondary(t, "nsd", nsdPort, s.dnsAddr)}
			for _, sec := range secs {
				if !within(3*time.Second, func() bool { return answersA(sec.addr, idle.str("hostname"), "198.41.0.1") }) {
					t.Fatalf("%s did not load the zone before the name expired", sec.name)
				}
			}
			// Keep one name in use while the other idles.
			done := make(chan struct{})
			defer close(done)
			go func() {
				for {
					select {
					case <-done:
						return
					case <-time.After(time.Second):
						s.do("POST", "/api/v1/hostnames/"+kept.str("id")+"/renew", key, nil)
					}
				}
			}()

			recorded := expiriesRecorded()
			time.Sleep(time.Until(expires))
			for _, sec := range secs {
				if !within(3*time.Second, func() bool { return nxdomain(sec.addr, idle.str("hostname")) }) {
					t.Errorf("%s still answers %s 3 s after it expired", sec.name, idle.str("hostname"))
				}
				if !answersA(sec.addr, kept.str("hostname"), "198.41.0.2") {
					t.Errorf("%s dropped %s, which was kept in use", sec.name, kept.str("hostname"))
				}
				if !within(2*time.Second, sec.incremental) {
					t.Errorf("%s did not drop the name by an incremental transfer", sec.name)
				}
			}
			if !nxdomain(s.dnsAddr, idle.str("hostname")) {
				t.Error("the primary still answers the expired name")
			}
			if got := expiriesRecorded(); got <= recorded {
				t.Errorf("coredns_hostname_expiries_recorded_total did not move (%v)", got)
			}

			// Renewed, it is back everywhere within a second.
			s.must(200, "POST", "/api/v1/hostnames/"+idle.str("id")+"/renew", key, nil)
			for _, sec := range secs {
				if !within(time.Second, func() bool { return answersA(sec.addr, idle.str("hostname"), "198.41.0.1") }) {
					t.Errorf("%s did not take the renewed name back within 1 s", sec.name)
				}
				if sec.ixfrFailed() {
					t.Errorf("%s was sent an IXFR it could not apply (a delete of what it no longer held)", sec.name)
				}
			}
		})
	}
}
