package hostname

import (
	"errors"
	"slices"
	"testing"

	"github.com/coredns/coredns/plugin/transfer"
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
	if _, err := signedFixture(t, 3, true).Transfer("example.org.", 0); !errors.Is(err, errSigned) {
		t.Errorf("a signed zone: %v, want errSigned", err)
	}
}

func TestSerialOlder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b  uint32
		older bool
	}{
		{1, 2, true}, {2, 1, false}, {5, 5, false},
		{0xffffffff, 1, true}, // across the wrap
		{1, 0xffffffff, false},
	} {
		if got := serialOlder(tc.a, tc.b); got != tc.older {
			t.Errorf("serialOlder(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.older)
		}
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
