package dnsupdate_test

import (
	"context"
	"testing"

	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// BenchmarkUpdateNoop is a message that changes nothing (a prerequisite
// alone), as external-dns sends at every sync: its reads, and the commit
// of its MAC. BenchmarkUpdateRefused is one whose prerequisite fails: its
// reads, rolled back, then its MAC alone.
func BenchmarkUpdateNoop(b *testing.B) {
	benchOne(b, []string{"bench.example.org ANY ANY"}, dns.RcodeSuccess)
}

func BenchmarkUpdateRefused(b *testing.B) {
	benchOne(b, []string{"bench.example.org NONE ANY"}, dns.RcodeYXDomain)
}

func benchOne(b *testing.B, prereqs []string, rcode int) {
	for _, dialect := range storagetest.Dialects {
		b.Run(string(dialect), func(b *testing.B) {
			d := newDoor(b, dialect)
			if a := d.send(b, msg(b, "example.org", nil, []string{"bench.example.org. 60 IN A 198.41.0.1"})); a.Rcode != dns.RcodeSuccess {
				b.Fatalf("mint: %v", a.EDE)
			}
			m := wire(b, msg(b, "example.org", prereqs, nil))
			stmts := d.stmts
			stmts.Store(0)
			for b.Loop() {
				a, err := d.u.Update(context.Background(), signedBy(d.key+"."), "127.0.0.1:53", m)
				if err != nil || a.Rcode != rcode {
					b.Fatalf("%v %s %v", err, dns.RcodeToString[a.Rcode], a.EDE)
				}
			}
			b.ReportMetric(float64(stmts.Load())/float64(b.N), "stmts/op")
		})
	}
}
