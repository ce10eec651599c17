package hostname

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/transfer"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/plugin/hostname/xfr"
	"github.com/miekg/dns"
)

func drain(t testing.TB, ch <-chan []dns.RR) []dns.RR {
	var out []dns.RR
	for rrs := range ch {
		out = append(out, rrs...)
	}
	return out
}

func TestTransfer(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	ch, err := h.Transfer("example.org.", 0)
	if err != nil {
		t.Fatal(err)
	}
	rrs := drain(t, ch)
	if len(rrs) < 2 || rrs[0].Header().Rrtype != dns.TypeSOA || rrs[len(rrs)-1].Header().Rrtype != dns.TypeSOA {
		t.Fatalf("an AXFR must start and end with the SOA: %v", rrs)
	}
	var got []string
	for _, rr := range rrs[1 : len(rrs)-1] {
		got = append(got, rr.Header().Name+" "+dns.TypeToString[rr.Header().Rrtype])
	}
	want := []string{"example.org. NS", "example.org. NS", "example.org. NS", "ns1.example.org. A", "ns3.example.org. AAAA",
		"abc.example.org. A", "v6.example.org. AAAA"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("AXFR of example.org (less the SOAs):\n got %v\nwant %v (no expired name, nothing of example.net)", got, want)
	}

	for _, tc := range []struct {
		name   string
		serial uint32
		soas   bool // the SOA alone
	}{
		{"current", testSerial, true},
		{"newer (a secondary that knew a later serial)", testSerial + 5, true},
		{"older: the whole zone", testSerial - 1, false},
	} {
		ch, err := h.Transfer("example.org.", tc.serial)
		if err != nil {
			t.Fatal(err)
		}
		if rrs := drain(t, ch); (len(rrs) == 1) != tc.soas {
			t.Errorf("IXFR from %s: %d records, want the SOA alone: %v", tc.name, len(rrs), tc.soas)
		}
	}
	if _, err := h.Transfer("example.com.", 0); !errors.Is(err, transfer.ErrNotAuthoritative) {
		t.Errorf("a zone not served: %v, want ErrNotAuthoritative", err)
	}
	unkeyed := signedFixture(t, 3, false)
	(*unkeyed.index.Zones())["example.org."].Signed = true // its key not opened
	if _, err := unkeyed.Transfer("example.org.", 0); !errors.Is(err, xfr.ErrNoKey) {
		t.Errorf("a signed zone without its key: %v, want xfr.ErrNoKey", err)
	}
}

// The AXFR of a 100 000-name zone, streamed from the index.
func BenchmarkAXFR100k(b *testing.B) {
	h := signedFixture(b, 100_000, false)
	b.ReportAllocs()
	for b.Loop() {
		ch, err := h.Transfer("example.org.", 0)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rrs := range ch {
			n += len(rrs)
		}
		if n < 100_000 {
			b.Fatalf("%d records", n)
		}
	}
}

// An AXFR is the zone at its SOA's serial, though the feed changes every
// name while it streams: the names are a snapshot, not read shard by shard
// as the feed goes on (an IXFR after a mixed copy deletes what the
// secondary never had, fails, and starts another whole transfer).
func TestAXFRIsASnapshot(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, "nameserver ns1.example.org 192.0.2.53:53\n", "example.org.")
	const names = 5000
	for i := range names {
		addHost(h, fmt.Sprintf("h%d.example.org.", i), "192.0.2.1", 0)
	}
	ch, err := h.Transfer("example.org.", 0)
	if err != nil {
		t.Fatal(err)
	}
	first := <-ch
	// The feed applies a change of every name, as Apply does: under the
	// journal's lock, with the serial after.
	ix := h.index
	ix.Freeze()
	for i := range names {
		n := &index.Node{Owner: index.Holder(fmt.Sprint("hn_", i)), Host: true, Addrs: index.PackAddrs([]netip.Addr{netip.MustParseAddr("192.0.2.2")})}
		ix.Put(fmt.Sprintf("h%d.example.org.", i), n)
	}
	ix.SetSerial(testSerial + 1)
	ix.Thaw()

	rrs := append(first, drain(t, ch)...)
	if soa := rrs[0].(*dns.SOA); soa.Serial != testSerial {
		t.Fatalf("the AXFR's serial is %d, want %d (when it started)", soa.Serial, testSerial)
	}
	counts := map[string]int{}
	for _, rr := range rrs {
		if a, ok := rr.(*dns.A); ok && strings.HasPrefix(a.Hdr.Name, "h") {
			counts[a.A.String()]++
		}
	}
	if counts["192.0.2.1"] != names || counts["192.0.2.2"] != 0 {
		t.Errorf("the AXFR holds %d names as they were at its serial and %d as they were after, want %d and 0",
			counts["192.0.2.1"], counts["192.0.2.2"], names)
	}
}

// The names the feed changes while a transfer copies them are put back as
// they were at the transfer's serial: changed, created and deleted ones.
func TestAXFRCopyPutsBackChanges(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, "nameserver ns1.example.org 192.0.2.53:53\n", "example.org.")
	ix := h.index
	ix.ResetJournal(testSerial)
	addHost(h, "kept.example.org.", "192.0.2.1", 0)
	addHost(h, "moved.example.org.", "192.0.2.1", 0)
	addHost(h, "gone.example.org.", "192.0.2.1", 0)
	a := func(ip string) *index.Node {
		return &index.Node{Owner: index.Holder("x"), Host: true, Addrs: index.PackAddrs([]netip.Addr{netip.MustParseAddr(ip)})}
	}
	ix.OnCopy(func() {
		// As Apply does, under the journal's lock: moved gets a new
		// address, gone is released, new is created; moved changes twice.
		ix.Freeze()
		tb := ix.Zones()
		for _, c := range []struct {
			name string
			n    *index.Node
		}{{"moved.example.org.", a("192.0.2.2")}, {"gone.example.org.", nil}, {"new.example.org.", a("192.0.2.3")}, {"moved.example.org.", a("192.0.2.4")}} {
			old := tb.Get(c.name)
			if c.n == nil {
				tb.Drop(c.name, old.Owner)
			} else {
				tb.Put(c.name, c.n)
			}
			ix.Journal(testSerial+1, "example.org.", c.name, old)
		}
		ix.SetSerial(testSerial + 1)
		ix.Thaw()
	})
	chunks, serial, _ := ix.ZoneNames("example.org.")
	got := map[string]string{}
	for _, c := range chunks {
		for _, e := range c {
			if e.Node != nil {
				got[e.Name] = h.xfr.NodeRRs((*ix.Zones())["example.org."], e.Name, e.Node)[0].(*dns.A).A.String()
			}
		}
	}
	want := map[string]string{"kept.example.org.": "192.0.2.1", "moved.example.org.": "192.0.2.1", "gone.example.org.": "192.0.2.1"}
	if serial != testSerial || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("zoneNames = %v at %d, want %v at %d", got, serial, want, testSerial)
	}
}

// BenchmarkZoneSnapshot1M times the copy of a million names' pointers an
// AXFR starts with (the feed goes on meanwhile).
func BenchmarkZoneSnapshot1M(b *testing.B) {
	h := signedFixture(b, 1_000_000, false)
	z := (*h.index.Zones())["example.org."]
	b.ReportAllocs()
	for b.Loop() {
		chunks, _, _ := h.index.ZoneNames(z.Name)
		n := 0
		for _, c := range chunks {
			n += len(c)
		}
		if n < 1_000_000 {
			b.Fatalf("%d names", n)
		}
	}
}

// What a transfer sends of a node follows gone, fixed when the node was
// built, never the clock: a name that expired since it was built is still
// sent (until its recorded expiry deletes it by IXFR), one built after its
// expiry is not.
func TestNodeRRsFollowGone(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, "nameserver ns1.example.org 192.0.2.53:53\n", "example.org.")
	z := (*h.index.Zones())["example.org."]
	addr := index.PackAddrs([]netip.Addr{netip.MustParseAddr("192.0.2.1")})
	for _, tc := range []struct {
		name string
		n    *index.Node
		sent bool
	}{
		{"never expires", &index.Node{Host: true, Addrs: addr}, true},
		{"expired since it was built", &index.Node{Host: true, Addrs: addr, Expires: 1}, true},
		{"built after its expiry", &index.Node{Host: true, Addrs: addr, Expires: 1, Gone: true}, false},
	} {
		if got := len(h.xfr.NodeRRs(z, "a.example.org.", tc.n)) > 0; got != tc.sent {
			t.Errorf("%s: sent %v, want %v", tc.name, got, tc.sent)
		}
	}
}

// teamZonesFixture is signedFixture's million names in example.org. and
// teams zones tNNNN.example.net. of 10 names each, the journal started.
func teamZonesFixture(b *testing.B, teams int) *Handler {
	h := signedFixture(b, 1_000_000, false)
	zs := maps.Clone(*h.index.Zones())
	for i := range teams {
		name := fmt.Sprintf("t%04d.example.net.", i)
		zs[name] = &index.Zone{Name: name, ID: fmt.Sprint("dom_t", i), Kind: index.KindTeam, Names: index.NewTable(0)}
	}
	h.index.SetZones(zs)
	for i := range teams {
		for j := range 10 {
			addHost(h, fmt.Sprintf("h%d.t%04d.example.net.", j, i), "192.0.2.1", 0)
		}
	}
	h.index.ResetJournal(testSerial)
	return h
}

// A team domain's AXFR and IXFR on a node of a million names cost the
// team domain: its 10 names, and its own changes.
func BenchmarkTeamZoneTransfer(b *testing.B) {
	h := teamZonesFixture(b, 1000)
	ix := h.index
	// Every team zone changed once, the pool zone 10 000 times: the
	// journal an IXFR of one team zone must not read whole.
	ix.Freeze()
	for i := range 10_000 {
		ix.Journal(testSerial+1, "example.org.", fmt.Sprintf("h%06d.example.org.", i), nil)
	}
	for i := range 1000 {
		ix.Journal(testSerial+1, fmt.Sprintf("t%04d.example.net.", i), fmt.Sprintf("h0.t%04d.example.net.", i), nil)
	}
	ix.SetSerial(testSerial + 1)
	ix.Thaw()
	for _, tc := range []struct {
		name   string
		serial uint32
		want   int
	}{{"AXFR", 0, 2 + 1 + 10}, {"IXFR", testSerial, 4 + 1}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ch, err := h.Transfer("t0500.example.net.", tc.serial)
				if err != nil {
					b.Fatal(err)
				}
				if rrs := drain(b, ch); len(rrs) != tc.want {
					b.Fatalf("%d records, want %d: %v", len(rrs), tc.want, rrs)
				}
			}
		})
	}
}

// A domain signed while its AXFR copies the names (here by a node that
// cannot open its key) is refused, not sent unsigned: the transfer goes by
// the zone as it stands with the names.
func TestAXFRSignedDuringCopy(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, "nameserver ns1.example.org 192.0.2.53:53\n", "example.org.")
	ix := h.index
	ix.ResetJournal(testSerial)
	addHost(h, "a.example.org.", "192.0.2.1", 0)
	ix.OnCopy(func() {
		// As Apply does for a domain change, under the journal's lock.
		ix.Freeze()
		signed := *(*ix.Zones())["example.org."]
		signed.Signed = true
		ix.SetZones(index.Set{"example.org.": &signed})
		ix.SetSerial(testSerial + 1)
		ix.ResetJournal(testSerial + 1)
		ix.Thaw()
	})
	if _, err := h.Transfer("example.org.", 0); !errors.Is(err, xfr.ErrNoKey) {
		t.Errorf("AXFR of a domain signed during the copy: %v, want xfr.ErrNoKey", err)
	}
}
