package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// signedPool is a profile 1 server whose pool domain example.org is signed,
// with a second served domain, other.test, also signed, whose nameserver
// (ns1.example.org) lives in example.org; and one hostname, returned.
func signedPool(t *testing.T, extra ...string) (*server, string) {
	t.Helper()
	s := start(t, options{profile: 1, extra: append([]string{certKeyFile(t), "domain other.test"}, extra...)})
	s.diagSign(t, "example.org")
	s.diagSign(t, "other.test")
	_, key := s.account("pro")
	name := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "web"}).str("hostname")
	s.resolves(name, dns.TypeA, "198.41.0.4")
	return s, name
}

// ask sends one question with the DO bit over proto, with an EDNS buffer
// of size.
func (s *server) ask(t *testing.T, name string, qtype uint16, proto string, size uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.SetEdns0(size, true)
	c := &dns.Client{Net: proto, Timeout: 3 * time.Second}
	r, _, err := c.Exchange(m, s.dnsAddr)
	if err != nil {
		t.Fatalf("%s %s over %s: %v", name, dns.TypeToString[qtype], proto, err)
	}
	return r
}

// Transfers without the transfer plugin are refused at once (RFC 5936
// 2.2), not answered like a query while the client waits; meta-types are
// not implemented.
func TestTransfersAndMetaTypesRefused(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 1})
	for _, qt := range []uint16{dns.TypeAXFR, dns.TypeIXFR} {
		m := new(dns.Msg)
		m.SetQuestion("example.org.", qt)
		if qt == dns.TypeIXFR {
			m.SetIxfr("example.org.", 1, "ns1.example.org.", "hostmaster.example.org.")
		}
		tr := &dns.Transfer{ReadTimeout: 2 * time.Second}
		begin := time.Now()
		env, err := tr.In(m, s.dnsAddr)
		var rcode = -1
		if err == nil {
			for e := range env {
				if e.Error != nil {
					err = e.Error
				}
			}
		}
		if err != nil && strings.Contains(err.Error(), "REFUSED") || err != nil && strings.Contains(err.Error(), "bad xfr rcode: 5") {
			rcode = dns.RcodeRefused
		}
		if rcode != dns.RcodeRefused || time.Since(begin) > time.Second {
			t.Errorf("%s without the transfer plugin: %v after %s, want REFUSED at once", dns.TypeToString[qt], err, time.Since(begin))
		}
	}
	for _, qt := range []uint16{dns.TypeTKEY, dns.TypeTSIG, dns.TypeMAILA, dns.TypeMAILB} {
		if m := s.query("example.org", qt, "udp"); m.Rcode != dns.RcodeNotImplemented || len(m.Answer)+len(m.Ns) > 0 {
			t.Errorf("%s: %s with %d records, want NOTIMP and none", dns.TypeToString[qt], dns.RcodeToString[m.Rcode], len(m.Answer)+len(m.Ns))
		}
	}
}

// In a signed zone a query for NSEC or RRSIG is answered, as BIND and
// Knot answer it, never with NODATA whose NSEC lists the type asked for
// (which validating resolvers take as bogus, RFC 4035 3.1.3.1).
func TestSignedNSECAndRRSIGQueries(t *testing.T) {
	t.Parallel()
	s, name := signedPool(t)
	for _, q := range []struct {
		name  string
		types []uint16 // the NSEC's bitmap
	}{
		{name + ".", []uint16{dns.TypeA, dns.TypeRRSIG, dns.TypeNSEC}},
		{"example.org.", []uint16{dns.TypeNS, dns.TypeSOA, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeDNSKEY, dns.TypeCDS, dns.TypeCDNSKEY}},
		{"nothing-here.example.org.", []uint16{dns.TypeRRSIG, dns.TypeNSEC, 128}}, // NXNAME: RFC 9824
	} {
		m := s.ask(t, q.name, dns.TypeNSEC, "udp", 1232)
		n, ok := first[*dns.NSEC](m.Answer)
		if m.Rcode != dns.RcodeSuccess || !ok || !sameTypes(n.TypeBitMap, q.types) {
			t.Errorf("%s NSEC: %s %v, want the name's NSEC listing %v", q.name, dns.RcodeToString[m.Rcode], m.Answer, typeNames(q.types))
			continue
		}
		if sig, ok := first[*dns.RRSIG](m.Answer); !ok || sig.TypeCovered != dns.TypeNSEC || sig.SignerName != "example.org." {
			t.Errorf("%s NSEC: the NSEC is not signed by example.org: %v", q.name, m.Answer)
		}

		m = s.ask(t, q.name, dns.TypeRRSIG, "udp", 1232)
		covered := map[uint16]bool{}
		for _, rr := range m.Answer {
			sig, ok := rr.(*dns.RRSIG)
			if !ok {
				t.Errorf("%s RRSIG: a %s in the answer", q.name, dns.TypeToString[rr.Header().Rrtype])
				continue
			}
			covered[sig.TypeCovered] = true
		}
		for _, want := range q.types {
			if want != dns.TypeRRSIG && want != 128 && !covered[want] { // NXNAME is no RRset (RFC 9824)
				t.Errorf("%s RRSIG: no signature over %s in %v", q.name, dns.TypeToString[want], m.Answer)
			}
		}
		if m.Rcode != dns.RcodeSuccess || len(m.Ns) > 0 {
			t.Errorf("%s RRSIG: %s with %d authority records, want the signatures as the answer", q.name, dns.RcodeToString[m.Rcode], len(m.Ns))
		}
	}
}

// A signed denial for a name of 254-255 octets still fits in a name: its
// NSEC's next name is the owner's successor that fits (RFC 4471 3.1.2).
func TestSignedDenialOfLongNames(t *testing.T) {
	t.Parallel()
	s, _ := signedPool(t)
	for _, length := range []int{250, 253, 254, 255} { // octets on the wire
		name := longName(length - 13)
		if n, err := dns.PackDomainName(name, make([]byte, 300), 0, nil, false); err != nil || n != length {
			t.Fatalf("%q is %d octets (%v), want %d", name, n, err, length)
		}
		m := s.ask(t, name, dns.TypeA, "udp", 1232)
		n, ok := first[*dns.NSEC](m.Ns)
		if !ok {
			t.Errorf("%d octets: no NSEC in %v", length, m)
			continue
		}
		if _, err := dns.PackDomainName(n.NextDomain, make([]byte, 300), 0, nil, false); err != nil {
			t.Errorf("%d octets: next name %q does not fit: %v", length, n.NextDomain, err)
		}
		if dns.CompareDomainName(n.NextDomain, "example.org.") < 2 || !canonicalLess(name, n.NextDomain) {
			t.Errorf("%d octets: next name %q is not after %q in the zone", length, n.NextDomain, name)
		}
	}
}

// longName is a name of labels of 'a' that take wire octets in front of
// example.org. (13 octets on the wire).
func longName(wire int) string {
	var labels []string
	for wire > 0 {
		n := min(63, wire-1)
		labels = append(labels, strings.Repeat("a", n))
		wire -= n + 1
	}
	return strings.Join(labels, ".") + ".example.org."
}

// canonicalLess reports a < b in DNS canonical order (RFC 4034 6.1).
func canonicalLess(a, b string) bool {
	la, lb := dns.SplitDomainName(strings.ToLower(a)), dns.SplitDomainName(strings.ToLower(b))
	for i, j := len(la)-1, len(lb)-1; ; i, j = i-1, j-1 {
		switch {
		case i < 0:
			return j >= 0
		case j < 0:
			return false
		}
		x, y := unescapeLabel(la[i]), unescapeLabel(lb[j])
		if x != y {
			return x < y
		}
	}
}

func unescapeLabel(l string) string {
	rr, err := dns.NewRR(l + ". 60 IN TXT x")
	if err != nil {
		return l
	}
	b := make([]byte, 300)
	n, _ := dns.PackDomainName(rr.Header().Name, b, 0, nil, false)
	if n < 2 {
		return l
	}
	return string(b[1 : 1+b[0]])
}

// The nameservers' addresses in the additional section come from another
// served domain: they are not signed by the queried zone (RFC 4035 5.3.1).
func TestAdditionalNotSignedByOtherZone(t *testing.T) {
	t.Parallel()
	s, _ := signedPool(t)
	m := s.ask(t, "other.test.", dns.TypeNS, "udp", 1232)
	if len(m.Extra) == 0 {
		t.Fatalf("NS other.test: no additional records: %v", m)
	}
	for _, rr := range m.Extra {
		if sig, ok := rr.(*dns.RRSIG); ok && !dns.IsSubDomain(sig.SignerName, sig.Hdr.Name) {
			t.Errorf("additional %s signed by %s, which does not hold it", sig.Hdr.Name, sig.SignerName)
		}
	}
	if _, ok := first[*dns.A](m.Extra); !ok {
		t.Errorf("NS other.test: no address of ns1.example.org in the additional section: %v", m.Extra)
	}
}

// The answer's OPT advertises our own buffer size (1232), whatever the
// client's (RFC 6891 6.2.5), on the cached path as well.
func TestAnswerAdvertisesOwnBufferSize(t *testing.T) {
	t.Parallel()
	s, name := signedPool(t)
	for range 3 { // the second and third come from the packed answer
		for _, q := range []struct {
			name  string
			qtype uint16
		}{{name + ".", dns.TypeA}, {"nothing.example.org.", dns.TypeA}, {"example.org.", dns.TypeSOA}} {
			m := s.ask(t, q.name, q.qtype, "udp", 4096)
			if o := m.IsEdns0(); o == nil || o.UDPSize() != 1232 {
				t.Fatalf("%s: OPT %v, want buffer size 1232", q.name, o)
			}
		}
	}
}

// soa sets every zone's contact and timers; a signed zone publishes CDS and
// CDNSKEY matching its key (RFC 7344, RFC 8078).
func TestSOAValuesAndCDS(t *testing.T) {
	t.Parallel()
	s, _ := signedPool(t, "soa dns-admin@example.net 7200 900 2419200 300")
	for _, zone := range []string{"example.org.", "other.test."} {
		m := s.ask(t, zone, dns.TypeSOA, "udp", 1232)
		soa, ok := first[*dns.SOA](m.Answer)
		if !ok || soa.Mbox != "dns-admin.example.net." || soa.Refresh != 7200 || soa.Retry != 900 || soa.Expire != 2419200 ||
			soa.Minttl != 300 || soa.Hdr.Ttl != 300 {
			t.Errorf("%s SOA: %v", zone, m.Answer)
		}
		k, ok := first[*dns.DNSKEY](s.ask(t, zone, dns.TypeDNSKEY, "udp", 1232).Answer)
		if !ok {
			t.Fatalf("%s: no DNSKEY", zone)
		}
		cds, ok := first[*dns.CDS](s.ask(t, zone, dns.TypeCDS, "udp", 1232).Answer)
		if ds := k.ToDS(dns.SHA256); !ok || cds.Digest != ds.Digest || cds.KeyTag != ds.KeyTag || cds.DigestType != dns.SHA256 {
			t.Errorf("%s CDS: %v, want the DS of %v", zone, cds, k)
		}
		ck, ok := first[*dns.CDNSKEY](s.ask(t, zone, dns.TypeCDNSKEY, "udp", 1232).Answer)
		if !ok || ck.PublicKey != k.PublicKey || ck.Algorithm != k.Algorithm || ck.Flags != k.Flags {
			t.Errorf("%s CDNSKEY: %v, want %v", zone, ck, k)
		}
		if m := s.query(zone, dns.TypeCDS, "udp"); len(m.Answer) != 1 {
			t.Errorf("%s CDS without DO: %v", zone, m.Answer)
		}
	}
	// A name that does not exist is denied for the SOA's MINIMUM.
	m := s.ask(t, "nothing.example.org.", dns.TypeA, "udp", 1232)
	if n, ok := first[*dns.NSEC](m.Ns); !ok || n.Hdr.Ttl != 300 {
		t.Errorf("denial's NSEC TTL: %v, want 300", m.Ns)
	}
}

// first is the first record of type T in rrs.
func first[T dns.RR](rrs []dns.RR) (T, bool) {
	for _, rr := range rrs {
		if v, ok := rr.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

func sameTypes(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[uint16]bool{}
	for _, t := range a {
		seen[t] = true
	}
	for _, t := range b {
		if !seen[t] {
			return false
		}
	}
	return true
}

func typeNames(ts []uint16) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = dns.TypeToString[t]
	}
	return out
}

// CoreDNS's nsid plugin is compiled into the build: an anycast operator
// tells nodes apart by the NSID each answer carries (RFC 5001), on every
// path.
func TestNSID(t *testing.T) {
	t.Parallel()
	o := options{profile: 1, block: []string{"nsid node-a"}}
	text, s := corefile(t, &o)
	launch(t, s, text)
	s.ready()
	_, key := s.account("pro")
	name := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "label": "web"}).str("hostname")
	s.resolves(name, dns.TypeA, "198.41.0.4")
	for _, q := range []string{name + ".", name + ".", "nothing.example.org.", "example.org."} {
		m := new(dns.Msg)
		m.SetQuestion(q, dns.TypeA)
		m.SetEdns0(1232, false)
		o := m.IsEdns0()
		o.Option = append(o.Option, &dns.EDNS0_NSID{Code: dns.EDNS0NSID})
		r, err := dns.Exchange(m, s.dnsAddr)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if ro := r.IsEdns0(); ro != nil {
			for _, opt := range ro.Option {
				if n, ok := opt.(*dns.EDNS0_NSID); ok {
					got = n.Nsid
				}
			}
		}
		if got != "6e6f64652d61" { // "node-a"
			t.Errorf("%s: NSID %q, want node-a's", q, got)
		}
	}
}
