package hostname

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/hostmint/hostmint/plugin/hostname/chain"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/hostmint/hostmint/plugin/hostname/xfr"
	"github.com/miekg/dns"
)

// signedFixture is example.org. signed with a fresh key, holding n hostnames
// h000000.example.org. ...
func signedFixture(tb testing.TB, n int, signed bool) *Handler {
	tb.Helper()
	h := newTestHandler(tb, "nameserver ns1.example.org 192.0.2.53\n", "example.org.")
	if signed {
		k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: "example.org.", Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
			Flags: 257, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
		priv, err := k.Generate(256)
		if err != nil {
			tb.Fatal(err)
		}
		z := (*h.index.Zones())["example.org."]
		z.Signed, z.Signer, z.Chain = true, sign.New("example.org.", k, priv.(crypto.Signer)), chain.New("example.org.", k, priv.(crypto.Signer))
		h.index.KeepOrders()
	}
	for i := range n {
		nd := &index.Node{Owner: index.Holder(fmt.Sprint(i)), Host: true, Addrs: index.PackAddrs([]netip.Addr{netip.AddrFrom4([4]byte{198, 51, byte(i >> 8), byte(i)})})}
		h.index.Put(fmt.Sprintf("h%06d.example.org.", i), nd)
	}
	return h
}

func TestSignedAnswersVerify(t *testing.T) {
	h := signedFixture(t, 10, true)
	z := (*h.index.Zones())["example.org."]
	tests := []struct {
		qname string
		qtype uint16
		rcode int
		nsec  bool
	}{
		{"h000001.example.org.", dns.TypeA, dns.RcodeSuccess, false},
		{"H000001.Example.ORG.", dns.TypeA, dns.RcodeSuccess, false},
		{"h000001.example.org.", dns.TypeMX, dns.RcodeSuccess, true},
		{"missing.example.org.", dns.TypeA, dns.RcodeSuccess, true}, // black lie
		{"example.org.", dns.TypeDNSKEY, dns.RcodeSuccess, false},
		{"example.org.", dns.TypeSOA, dns.RcodeSuccess, false},
		// RFC 8482's HINFO is signed like any RRset.
		{"h000001.example.org.", dns.TypeANY, dns.RcodeSuccess, false},
		{"example.org.", dns.TypeANY, dns.RcodeSuccess, false},
	}
	for _, tc := range tests {
		m := new(dns.Msg)
		m.SetQuestion(tc.qname, tc.qtype)
		m.SetEdns0(1232, true)
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		h.ServeDNS(context.Background(), rec, m)
		r := rec.Msg
		if r.Rcode != tc.rcode {
			t.Errorf("%s %s: rcode %s", tc.qname, dns.TypeToString[tc.qtype], dns.RcodeToString[r.Rcode])
		}
		sawNSEC := false
		for _, sect := range [][]dns.RR{r.Answer, r.Ns} {
			verifySection(t, z.Signer.DNSKEY(), sect)
			for _, rr := range sect {
				if n, ok := rr.(*dns.NSEC); ok {
					sawNSEC = true
					if n.Hdr.Name != tc.qname || n.NextDomain != "\\000."+tc.qname {
						t.Errorf("%s: NSEC %s", tc.qname, n)
					}
				}
			}
		}
		if sawNSEC != tc.nsec {
			t.Errorf("%s %s: NSEC present %v, want %v", tc.qname, dns.TypeToString[tc.qtype], sawNSEC, tc.nsec)
		}
		// Without answer.DO: no DNSSEC records at all.
		m.Extra = nil
		rec = dnstest.NewRecorder(&test.ResponseWriter{})
		h.ServeDNS(context.Background(), rec, m)
		for _, rr := range append(rec.Msg.Answer, rec.Msg.Ns...) {
			if t2 := rr.Header().Rrtype; t2 == dns.TypeRRSIG || t2 == dns.TypeNSEC {
				t.Errorf("%s without answer.DO: %s", tc.qname, rr)
			}
		}
	}
}

// verifySection checks that every RRset in rrs has a valid RRSIG.
func verifySection(t *testing.T, key *dns.DNSKEY, rrs []dns.RR) {
	t.Helper()
	sets := map[uint16][]dns.RR{}
	sigs := map[uint16]*dns.RRSIG{}
	for _, rr := range rrs {
		if s, ok := rr.(*dns.RRSIG); ok {
			sigs[s.TypeCovered] = s
			continue
		}
		sets[rr.Header().Rrtype] = append(sets[rr.Header().Rrtype], rr)
	}
	for typ, set := range sets {
		sig := sigs[typ]
		if sig == nil {
			t.Errorf("%s %s has no RRSIG", set[0].Header().Name, dns.TypeToString[typ])
			continue
		}
		// Validators verify at the signed TTL, in canonical (lowercase) form.
		canon := make([]dns.RR, len(set))
		for i, rr := range set {
			c := dns.Copy(rr)
			c.Header().Ttl = sig.OrigTtl
			canon[i] = c
		}
		if err := sig.Verify(key, canon); err != nil {
			t.Errorf("%s %s: %v", set[0].Header().Name, dns.TypeToString[typ], err)
		}
		if !sig.ValidityPeriod(time.Now()) {
			t.Errorf("%s %s: signature not valid now", set[0].Header().Name, dns.TypeToString[typ])
		}
	}
}

// benchServe answers 100k names, 80% existing and 20% not, with or without
// DNSSEC. Signed: every RRset signed once, then answered from the cache.
func benchServe(b *testing.B, signed bool) {
	const n = 100_000
	h := signedFixture(b, n, signed)
	rng := rand.New(rand.NewPCG(1, 2))
	qs := make([]*dns.Msg, 4096)
	for i := range qs {
		m := new(dns.Msg)
		name := fmt.Sprintf("h%06d.example.org.", rng.IntN(n))
		if i%5 == 4 {
			name = fmt.Sprintf("m%06d.example.org.", rng.IntN(n))
		}
		m.SetQuestion(name, dns.TypeA)
		m.SetEdns0(1232, signed)
		qs[i] = m
	}
	w := &packWriter{}
	ctx := context.Background()
	for _, q := range qs { // warm the signature cache, as a running server has
		h.ServeDNS(ctx, w, q)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		h.ServeDNS(ctx, w, qs[i%len(qs)])
	}
}

// packWriter packs each reply as the server would before sending it, so
// that the benchmark counts what a bigger, signed reply costs on the wire.
type packWriter struct {
	test.ResponseWriter
	buf []byte
}

func (w *packWriter) WriteMsg(m *dns.Msg) error {
	var err error
	w.buf, err = m.PackBuffer(w.buf)
	return err
}

func BenchmarkServeDNSUnsigned(b *testing.B) { benchServe(b, false) }
func BenchmarkServeDNSSigned(b *testing.B)   { benchServe(b, true) }

// A zone the store marks signed whose key this node cannot open (another
// cert_encryption_key_file) is never answered or transferred unsigned:
// SERVFAIL, no transfer, no NOTIFY, and the node is not ready.
func TestSignedZoneWithoutKey(t *testing.T) {
	t.Parallel()
	h := signedFixture(t, 3, false)
	(*h.index.Zones())["example.org."].Signed = true // marked signed, no signer
	if got := h.index.Unservable(); !slices.Equal(got, []string{"example.org"}) {
		t.Errorf("Unservable = %v", got)
	}
	if (indexNode{h.index}).Ready() {
		t.Error("ready with a signed zone it cannot sign")
	}
	for _, qtype := range []uint16{dns.TypeA, dns.TypeSOA, dns.TypeDNSKEY} {
		m := new(dns.Msg)
		m.SetQuestion("h000001.example.org.", qtype)
		m.SetEdns0(1232, true)
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		h.ServeDNS(context.Background(), rec, m)
		checkRefusal(t, dns.TypeToString[qtype], m, rec.Msg, dns.RcodeServerFailure)
	}
	if _, err := h.Transfer("example.org.", 0); !errors.Is(err, xfr.ErrNoKey) {
		t.Errorf("transfer: %v, want xfr.ErrNoKey", err)
	}
	if got := h.index.Transferable([]string{"example.org."}); len(got) != 0 {
		t.Errorf("transferable (NOTIFYed) = %v, want none", got)
	}
}

// askSigned asks h for qname's A with the answer.DO bit.
func askSigned(h *Handler, qname string) {
	m := new(dns.Msg)
	m.SetQuestion(qname, dns.TypeA)
	m.SetEdns0(1232, true)
	h.ServeDNS(context.Background(), &packWriter{}, m)
}

// BenchmarkSignedDenials is what a flood of random names under a signed
// zone costs: each answer a fresh NSEC and its signature (ECDSA P-256),
// against BenchmarkServeDNSSigned's cached ones.
func BenchmarkSignedDenials(b *testing.B) {
	h := signedFixture(b, 10, true)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		askSigned(h, fmt.Sprintf("r%d.example.org.", i))
	}
}
