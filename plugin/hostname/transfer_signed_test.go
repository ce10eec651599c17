package hostname

import (
	"crypto"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/plugin/hostname/chain"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/miekg/dns"
)

// A signed zone transfers signed: the DNSKEY set, an RRSIG over every
// RRset that verifies with it, and an NSEC chain over every name in
// canonical order, back to the apex.
func TestSignedAXFR(t *testing.T) {
	t.Parallel()
	for _, nsec3 := range []bool{false, true} {
		t.Run(denialName(nsec3), func(t *testing.T) { testSignedAXFR(t, nsec3) })
	}
}

func denialName(nsec3 bool) string {
	if nsec3 {
		return "nsec3"
	}
	return "nsec"
}

// signedFixtureDenial is signedFixture's signed zone denying by NSEC3 or
// NSEC.
func signedFixtureDenial(tb testing.TB, n int, nsec3 bool) *Handler {
	h := signedFixture(tb, n, true)
	(*h.index.Zones())["example.org."].NSEC3 = nsec3
	h.index.KeepOrders()
	return h
}

func testSignedAXFR(t *testing.T, nsec3 bool) {
	h := signedFixtureDenial(t, 40, nsec3)
	// A name with records below it: an empty non-terminal between.
	h.index.Put("_acme-challenge.h000003.example.org.", &index.Node{Owner: index.Holder("3"),
		RRsets: map[uint16][]dns.RR{dns.TypeTXT: {mustRR(t, "_acme-challenge.h000003.example.org. 60 IN TXT \"v\"")}}})
	h.index.Put("b.a._tcp.h000004.example.org.", &index.Node{Owner: index.Holder("4"),
		RRsets: map[uint16][]dns.RR{dns.TypeTXT: {mustRR(t, "b.a._tcp.h000004.example.org. 300 IN TXT \"w\"")}}})
	h.index.Put("a._tcp.h000004.example.org.", &index.Node{Owner: index.Holder("4")})
	h.index.Put("_tcp.h000004.example.org.", &index.Node{Owner: index.Holder("4")})
	h.index.Put("v6.example.org.", &index.Node{Owner: index.Holder("v6"), Host: true,
		Addrs: index.PackAddrs([]netip.Addr{netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("192.0.2.9")})})
	z := (*h.index.Zones())["example.org."]
	rrs := transferAll(t, h, 0)
	checkSignedZone(t, rrs, z.Chain.DNSKEY(), time.Now())

	// Again: the same bytes (signatures are deterministic, and cached).
	again := transferAll(t, h, 0)
	if len(again) != len(rrs) {
		t.Fatalf("second AXFR: %d records, first %d", len(again), len(rrs))
	}
	for i := range rrs {
		if rrs[i].String() != again[i].String() {
			t.Fatalf("second AXFR differs at %d:\n%v\n%v", i, rrs[i], again[i])
		}
	}
}

// The canonical order the chain follows (RFC 4034 6.1's example).
func TestCanonicalOrder(t *testing.T) {
	t.Parallel()
	want := []string{"example.", "a.example.", "yljkjljk.a.example.", "Z.a.example.", "zABC.a.EXAMPLE.",
		"z.example.", "\\001.z.example.", "*.z.example.", "a\\.b.z.example.", "\\200.z.example."}
	got := slices.Clone(want)
	for i := range 20 {
		slices.Reverse(got)
		if i%2 == 0 {
			got[0], got[len(got)-1] = got[len(got)-1], got[0]
		}
		slices.SortFunc(got, chain.Compare)
		if !slices.Equal(got, want) {
			t.Fatalf("sorted %v\nwant   %v", got, want)
		}
	}
}

// A signed zone's IXFR takes a secondary's copy to exactly what an AXFR
// sends now, through random creates, removals and changes (the chain's
// first and last names among them, records below names, empty
// non-terminals), and across a week of the clock (renewals): what it
// deletes, the secondary holds, and what it adds, it lacks.
func TestSignedIXFR(t *testing.T) {
	t.Parallel()
	for _, nsec3 := range []bool{false, true} {
		t.Run(denialName(nsec3), func(t *testing.T) { testSignedIXFR(t, nsec3) })
	}
}

func testSignedIXFR(t *testing.T, nsec3 bool) {
	h := signedFixtureDenial(t, 30, nsec3)
	ix := h.index
	journalFrom(ix, testSerial)
	z := (*ix.Zones())["example.org."]
	serial := uint32(testSerial)
	copy := zoneSet(transferAll(t, h, 0))
	first := maps.Clone(copy)
	r := rand.New(rand.NewPCG(3, 4))
	names := []string{"a", "h000001", "h000015", "zz", "m", "_x._tcp.h000002"}
	clock := time.Now()
	for step := range 30 {
		ix.Freeze()
		next := serial + 1
		for range 1 + r.IntN(4) {
			n := names[r.IntN(len(names))] + ".example.org."
			old := z.Names.Get(n)
			ix.Journal(next, z.Name, n, old)
			switch op := r.IntN(3); {
			case op == 0 && old != nil:
				(*ix.Zones()).Drop(n, old.Owner)
			case op == 1 && strings.Contains(n, "_"):
				ix.Put(n, &index.Node{Owner: index.Holder(n), RRsets: map[uint16][]dns.RR{
					dns.TypeTXT: {mustRR(t, n+" 300 IN TXT \"step "+fmt.Sprint(step)+"\"")}}})
			default:
				ix.Put(n, &index.Node{Owner: index.Holder(n), Host: true,
					Addrs: index.PackAddrs([]netip.Addr{netip.AddrFrom4([4]byte{192, 0, 2, byte(r.IntN(250))})})})
			}
			if ent := "_tcp.h000002.example.org."; strings.HasSuffix(n, ent) {
				// The empty non-terminal between a record and its
				// hostname comes and goes with the record, as the
				// projection makes it.
				had := z.Names.Get(ent)
				switch {
				case z.Names.Get(n) != nil && had == nil:
					ix.Journal(next, z.Name, ent, had)
					ix.Put(ent, &index.Node{Owner: index.Holder(n)})
				case z.Names.Get(n) == nil && had != nil:
					ix.Journal(next, z.Name, ent, had)
					(*ix.Zones()).Drop(ent, had.Owner)
				}
			}
		}
		switch step {
		case 6:
			clock = clock.Add(9 * 24 * time.Hour) // every window moves
		case 12, 20:
			clock = clock.Add(37 * time.Hour) // some do
		}
		ix.Tick(next, clock.UnixMilli())
		ix.SetSerial(next)
		ix.Thaw()

		diff := transferAll(t, h, serial)
		applyIXFR(t, copy, diff, serial, next)
		whole := transferAll(t, h, 0)
		checkSignedZone(t, whole, z.Chain.DNSKEY(), clock)
		if want := zoneSet(whole); !maps.Equal(copy, want) {
			for k := range want {
				if !copy[k] {
					t.Errorf("step %d: the secondary lacks %s", step, k)
				}
			}
			for k := range copy {
				if !want[k] {
					t.Errorf("step %d: the secondary keeps %s", step, k)
				}
			}
			t.FailNow()
		}
		serial = next
	}
	// A secondary thirty changes and two clock jumps behind.
	diff := transferAll(t, h, testSerial)
	applyIXFR(t, first, diff, testSerial, serial)
	if !maps.Equal(first, copy) {
		t.Errorf("an IXFR across every step does not give the zone now")
	}
}

// BenchmarkSignedAXFR100k is the first AXFR of a 100 000-name signed zone
// (every signature made: each run has a fresh signer) and, with
// -bench SignedAXFR100k/again, a second (every signature found again).
func BenchmarkSignedAXFR100k(b *testing.B) {
	h := signedFixture(b, 100_000, true)
	z := (*h.index.Zones())["example.org."]
	drain := func() {
		ch, err := h.Transfer("example.org.", 0)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rrs := range ch {
			n += len(rrs)
		}
		if n < 300_000 {
			b.Fatalf("%d records", n)
		}
	}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			z.Chain = chain.New(z.Name, z.Chain.DNSKEY(), z.Chain.Key())
			drain()
		}
	})
	b.Run("again", func(b *testing.B) {
		drain()
		for b.Loop() {
			drain()
		}
	})
}

// A signed AXFR is the zone at its SOA's serial, though the feed changes
// every name, and adds and drops some, while it reads them: the chain is
// copied with the serial, and the journal sets back what changed since.
func TestSignedAXFRIsASnapshot(t *testing.T) {
	t.Parallel()
	h := signedFixture(t, 200, true)
	ix := h.index
	journalFrom(ix, testSerial)
	z := (*ix.Zones())["example.org."]
	before := zoneSet(transferAll(t, h, 0))
	ix.OnCopy(func() {
		ix.Freeze()
		defer ix.Thaw()
		for i := range 200 {
			n := fmt.Sprintf("h%06d.example.org.", i)
			old := z.Names.Get(n)
			ix.Journal(testSerial+1, z.Name, n, old)
			if i%10 == 0 {
				(*ix.Zones()).Drop(n, old.Owner)
				continue
			}
			ix.Put(n, &index.Node{Owner: old.Owner, Host: true, Addrs: index.PackAddrs([]netip.Addr{netip.MustParseAddr("192.0.2.99")})})
		}
		ix.Journal(testSerial+1, z.Name, "new.example.org.", nil)
		ix.Put("new.example.org.", &index.Node{Owner: 7, Host: true, Addrs: index.PackAddrs([]netip.Addr{netip.MustParseAddr("192.0.2.98")})})
		ix.SetSerial(testSerial + 1)
	})
	rrs := transferAll(t, h, 0)
	ix.OnCopy(nil)
	if soa := rrs[0].(*dns.SOA); soa.Serial != testSerial {
		t.Fatalf("the AXFR's serial is %d, want %d (when it started)", soa.Serial, testSerial)
	}
	if got := zoneSet(rrs); !maps.Equal(got, before) {
		t.Errorf("the AXFR is not the zone at its serial: %d records, %d before", len(got), len(before))
	}
	checkSignedZone(t, rrs, z.Chain.DNSKEY(), time.Now())
}

// A key rollover reaches a secondary by IXFR, step by step: start (a new
// key in the set, and every RRset signed by both: each restated), finish
// (the old key and its signatures gone); after each, the secondary's copy
// is exactly the zone, and every RRset validates with each key of its set.
func TestSignedIXFRRollover(t *testing.T) {
	t.Parallel()
	h := signedFixture(t, 30, true)
	ix := h.index
	journalFrom(ix, testSerial)
	z0 := (*ix.Zones())["example.org."]
	old := sign.Key{DNSKEY: z0.Chain.DNSKEY(), Private: z0.Chain.Key()}
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: "example.org.", Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags: 257, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
	priv, err := k.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	next := sign.Key{DNSKEY: k, Private: priv.(crypto.Signer)}
	copy := zoneSet(transferAll(t, h, 0))
	serial := uint32(testSerial)
	for _, step := range []struct {
		name   string
		signs  sign.Key
		others []sign.Key
	}{
		{"start", old, []sign.Key{next}},
		{"finish", next, nil},
	} {
		z := *(*ix.Zones())["example.org."]
		z.Signer = sign.New(z.Name, step.signs.DNSKEY, step.signs.Private).WithOthers(step.others)
		z.Chain = chain.New(z.Name, step.signs.DNSKEY, step.signs.Private).WithOthers(step.others)
		z.DNSKEY = step.name
		ix.Freeze()
		ix.ChangeDomains(index.Set{z.Name: &z}, serial+1)
		ix.Thaw()
		diff := transferAll(t, h, serial)
		applyIXFR(t, copy, diff, serial, serial+1)
		whole := transferAll(t, h, 0)
		var more []*dns.DNSKEY
		for _, o := range step.others {
			more = append(more, o.DNSKEY)
		}
		checkSignedZone(t, whole, step.signs.DNSKEY, time.Now(), more...)
		if !maps.Equal(copy, zoneSet(whole)) {
			t.Fatalf("%s: the secondary's copy is not the zone", step.name)
		}
		if len(diff) < len(whole)/4 {
			t.Errorf("%s: an IXFR of %d records for a zone of %d: not every RRset's signatures", step.name, len(diff), len(whole))
		}
		serial++
	}
}
