package hostname

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/coredns/coredns/request"
	"github.com/hostmint/hostmint/plugin/hostname/fastudp"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// fuzzRecords are the records rec.example.org publishes in the fuzz
// fixture: every type, with text that needs escaping and splitting.
var fuzzRecords = []struct{ name, body string }{
	{"", `{"type":"TXT","text":"` + strings.Repeat(`say \"hi\" \\o/ \u00e9 `, 40) + `"}`},
	{"", `{"type":"TXT","text":["a","b"]}`},
	{"", `{"type":"MX","preference":10,"exchange":"mail.example.org"}`},
	{"", `{"type":"SSHFP","algorithm":4,"fptype":2,"fingerprint":"` + strings.Repeat("ab", 32) + `"}`},
	{"", `{"type":"HTTPS","priority":1,"target":".","params":{"alpn":["h2","h3"],"ipv4hint":["192.0.2.30"]}}`},
	{"_443._tcp", `{"type":"TLSA","usage":3,"selector":1,"matching_type":1,"association":"` + strings.Repeat("0f", 32) + `"}`},
	{"_sip._tcp", `{"type":"SRV","priority":10,"weight":60,"port":5060,"target":"sip.example.net"}`},
	{"_dns", `{"type":"SVCB","priority":2,"target":"svc.example.net","params":{"port":853,"ech":"AEX+DQ=="}}`},
	{"sub", `{"type":"CAA","flags":128,"tag":"issue","value":"ca.example; \"quoted\""}`},
}

// addFuzzRecords gives h's example.org a CAA policy and the hostname
// rec.example.org with fuzzRecords and a DNS-01 challenge, built by
// buildNodes as the change feed builds them.
func addFuzzRecords(tb testing.TB, h *Handler) {
	tb.Helper()
	z := (*h.index.Zones())["example.org."]
	policy, err := dns.NewRR(`example.org. 300 IN CAA 0 issue "letsencrypt.org"`)
	if err != nil {
		tb.Fatal(err)
	}
	z.CAA = []dns.RR{policy}
	host := &storage.Hostname{ID: "hn_rec", Name: "rec.example.org", Status: storage.StatusLive, Addrs: "192.0.2.30,2001:db8::30"}
	var recs []storage.Record
	for i, rec := range parsedFuzzRecords(tb) {
		data, err := json.Marshal(rec.Data)
		if err != nil {
			tb.Fatal(err)
		}
		recs = append(recs, storage.Record{ID: "r" + string(rune('a'+i)), HostnameID: host.ID,
			Name: strings.TrimSuffix(records.Owner(host.Name, rec.Label), "."), Type: rec.Type, Data: string(data)})
	}
	chals := []storage.Challenge{{HostnameID: host.ID, Value: strings.Repeat("K", 43), CreatedAt: time.Now().UnixMilli()}}
	h.index.PutHostname(host, recs, chals, time.Now().UnixMilli())
}

// parsedFuzzRecords are fuzzRecords as the records API takes them.
func parsedFuzzRecords(tb testing.TB) []*records.Record {
	tb.Helper()
	var out []*records.Record
	for _, r := range fuzzRecords {
		var in records.Input
		if err := json.Unmarshal([]byte(r.body), &in); err != nil {
			tb.Fatal(err)
		}
		in.Name = &r.name
		rec, err := records.Parse(in, true)
		if err != nil {
			tb.Fatalf("%s: %v", r.body, err)
		}
		out = append(out, rec)
	}
	return out
}

// fuzzQuery packs a query for name and type, changed by opts.
func fuzzQuery(tb testing.TB, name string, qtype uint16, opts ...func(*dns.Msg)) []byte {
	tb.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.Id = 0xbeef
	for _, o := range opts {
		o(m)
	}
	b, err := m.Pack()
	if err != nil {
		tb.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	return b
}

func edns(size uint16, do bool) func(*dns.Msg) { return func(m *dns.Msg) { m.SetEdns0(size, do) } }

// rawQuery is a header with qd questions followed by body, as written by
// hand: compression pointers and names miekg/dns would not write.
func rawQuery(qd uint16, body ...byte) []byte {
	h := make([]byte, 12, 12+len(body))
	binary.BigEndian.PutUint16(h[0:], 0x1234)
	binary.BigEndian.PutUint16(h[4:], qd)
	return append(h, body...)
}

// fuzzSeeds are the queries FuzzServeDNS starts from.
func fuzzSeeds(tb testing.TB) [][]byte {
	q := func(name string, qtype uint16, opts ...func(*dns.Msg)) []byte {
		return fuzzQuery(tb, name, qtype, opts...)
	}
	label63 := strings.Repeat("a", 63)
	seeds := [][]byte{
		// Normal questions, each kind of name.
		q("abc.example.org.", dns.TypeA), q("v6.example.org.", dns.TypeAAAA), q("AbC.ExAmPlE.oRg.", dns.TypeA),
		q("rec.example.org.", dns.TypeTXT), q("rec.example.org.", dns.TypeANY), q("rec.example.org.", dns.TypeCAA),
		q("rec.example.org.", dns.TypeMX), q("rec.example.org.", dns.TypeHTTPS), q("_443._tcp.rec.example.org.", dns.TypeTLSA),
		q("_tcp.rec.example.org.", dns.TypeA), q("_acme-challenge.rec.example.org.", dns.TypeTXT),
		q("sub.rec.example.org.", dns.TypeCAA), q("old.example.org.", dns.TypeA), q("nope.example.org.", dns.TypeA),
		q("example.org.", dns.TypeSOA), q("example.org.", dns.TypeNS), q("example.org.", dns.TypeANY),
		q("example.org.", dns.TypeDNSKEY), q("example.org.", dns.TypeCAA), q("ns1.example.org.", dns.TypeA),
		q("ns3.example.org.", dns.TypeAAAA), q("h000001.example.org.", dns.TypeA), q("web.example.net.", dns.TypeA),
		// DNSSEC: answer.DO bit, black lies, NODATA proofs.
		q("h000001.example.org.", dns.TypeA, edns(1232, true)), q("missing.example.org.", dns.TypeA, edns(1232, true)),
		q("rec.example.org.", dns.TypeANY, edns(4096, true)), q("example.org.", dns.TypeDNSKEY, edns(1232, true)),
		q("_tcp.rec.example.org.", dns.TypeTXT, edns(1232, true)),
		// answer.EDNS with odd sizes and versions, options, two OPT records.
		q("rec.example.org.", dns.TypeTXT, edns(0, false)), q("rec.example.org.", dns.TypeANY, edns(1, true)),
		q("rec.example.org.", dns.TypeANY, edns(511, false)), q("example.org.", dns.TypeNS, edns(512, true)),
		q("rec.example.org.", dns.TypeANY, edns(65535, true)),
		q("abc.example.org.", dns.TypeA, edns(1232, false), func(m *dns.Msg) { m.IsEdns0().SetVersion(1) }),
		q("abc.example.org.", dns.TypeA, edns(1232, true), func(m *dns.Msg) {
			m.IsEdns0().Option = append(m.IsEdns0().Option,
				&dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: []byte{192, 0, 2, 0}},
				&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"})
		}),
		q("abc.example.org.", dns.TypeA, edns(1232, true), func(m *dns.Msg) { m.Extra = append(m.Extra, m.Extra[0]) }),
		q("abc.example.org.", dns.TypeA, edns(1232, false), func(m *dns.Msg) { m.IsEdns0().SetExtendedRcode(dns.RcodeBadVers) }),
		// Several questions, none, other classes and opcodes, header bits.
		q("abc.example.org.", dns.TypeA, func(m *dns.Msg) {
			m.Question = append(m.Question, dns.Question{Name: "www.example.com.", Qtype: dns.TypeA, Qclass: dns.ClassINET})
		}),
		q("www.example.com.", dns.TypeA, func(m *dns.Msg) {
			m.Question = append(m.Question, dns.Question{Name: "abc.example.org.", Qtype: dns.TypeA, Qclass: dns.ClassINET})
		}),
		q("abc.example.org.", dns.TypeA, func(m *dns.Msg) { m.Question = nil }),
		q("abc.example.org.", dns.TypeA, func(m *dns.Msg) { m.Question[0].Qclass = dns.ClassCHAOS }),
		q("abc.example.org.", dns.TypeA, func(m *dns.Msg) { m.Opcode = dns.OpcodeUpdate }),
		q("abc.example.org.", dns.TypeA, func(m *dns.Msg) { m.Response, m.Truncated, m.Rcode = true, true, dns.RcodeNameError }),
		q("abc.example.org.", dns.TypeAXFR), q("example.org.", dns.TypeIXFR), q("abc.example.org.", 65535),
		q("abc.example.org.", dns.TypeA, func(m *dns.Msg) { m.Answer = []dns.RR{test.A("abc.example.org. 60 IN A 192.0.2.99")} }),
		// Names outside the zones.
		q("example.com.", dns.TypeA), q(".", dns.TypeNS), q("org.", dns.TypeSOA), q("example.org.example.com.", dns.TypeA),
		q("xexample.org.", dns.TypeA),
		// Huge and binary labels.
		q(label63+"."+label63+"."+label63+"."+strings.Repeat("b", 49)+".example.org.", dns.TypeA),
		q(label63+".example.org.", dns.TypeTXT, edns(4096, true)),
		q(`a\.b.example.org.`, dns.TypeA), q(`\000\255\"\\.example.org.`, dns.TypeA, edns(1232, true)),
		q(`rec\.example.org.`, dns.TypeTXT), q("*.example.org.", dns.TypeA),
		// Compression pointers: to the first question, into the header, to themselves.
		rawQuery(2, 3, 'a', 'b', 'c', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'o', 'r', 'g', 0, 0, 1, 0, 1,
			3, 'w', 'w', 'w', 0xc0, 12, 0, 16, 0, 1),
		rawQuery(1, 0xc0, 12, 0, 1, 0, 1),
		rawQuery(1, 0xc0, 2, 0, 1, 0, 1),
		rawQuery(1, 3, 'a', 'b', 'c', 0xc0, 12, 0, 1, 0, 1),
		rawQuery(0),
		{},
	}
	return seeds
}

// FuzzServeDNS sends arbitrary wire messages to the handler, over UDP and
// TCP, unsigned (fixture: two zones, nameservers with glue, expired names)
// and signed (signedFixture), with records of every type. Whatever arrives,
// the handler must not panic, and either write nothing and return an rcode
// the server answers for it, or write one reply that packs within the
// transport's size, with the query's ID and QR set.
func FuzzServeDNS(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	handlers := []*Handler{fixture(f), signedFixture(f, 3, true)}
	for _, h := range handlers {
		addFuzzRecords(f, h)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, wire []byte) {
		if new(dns.Msg).Unpack(wire) != nil {
			return // the server drops what it cannot unpack
		}
		for i, h := range handlers {
			for _, tcp := range []bool{false, true} {
				r := new(dns.Msg)
				r.Unpack(wire) // afresh: a handler may keep or change what it is given
				w := &test.ResponseWriter{TCP: tcp}
				rec := dnstest.NewRecorder(w)
				rcode, err := h.ServeDNS(ctx, rec, r)
				if err != nil {
					t.Fatalf("handler %d, tcp %t: ServeDNS = %d, %v; there is no next plugin to fail", i, tcp, rcode, err)
				}
				checkReply(t, wire, tcp, rcode, rec.Msg)
			}
		}
	})
}

// checkReply checks what ServeDNS did with the query in wire.
func checkReply(t *testing.T, wire []byte, tcp bool, rcode int, m *dns.Msg) {
	t.Helper()
	q := new(dns.Msg)
	q.Unpack(wire)
	if m == nil {
		// The server writes the reply for rcodes that say nothing was written.
		if plugin.ClientWrite(rcode) {
			t.Fatalf("tcp %t: nothing written, but rcode %s says the client got an answer", tcp, dns.RcodeToString[rcode])
		}
		return
	}
	if !plugin.ClientWrite(rcode) {
		t.Fatalf("tcp %t: a reply was written, but rcode %s makes the server write another", tcp, dns.RcodeToString[rcode])
	}
	if m.Id != q.Id || !m.Response {
		t.Fatalf("tcp %t: reply ID %#x QR %t; query ID %#x", tcp, m.Id, m.Response, q.Id)
	}
	if len(q.Question) > 0 && (len(m.Question) != 1 || m.Question[0] != q.Question[0]) {
		t.Fatalf("tcp %t: reply question %v; query's first %v", tcp, m.Question, q.Question[0])
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatalf("tcp %t: reply does not pack: %v\n%s", tcp, err, m)
	}
	if size := (&request.Request{W: &test.ResponseWriter{TCP: tcp}, Req: q}).Size(); len(b) > size {
		t.Fatalf("tcp %t: reply is %d bytes, over the %d the client takes\n%s", tcp, len(b), size, m)
	}
	if err := new(dns.Msg).Unpack(b); err != nil {
		t.Fatalf("tcp %t: reply does not unpack: %v\n%s", tcp, err, m)
	}
}

// FuzzFastAnswer gives fast_udp's answerer any datagram: it never panics,
// and what it answers from bytes is, byte for byte, what ServeDNS sends for
// the same query (asked once before, so that its bytes are kept).
func FuzzFastAnswer(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	handlers := []*Handler{fixture(f), signedFixture(f, 3, true)}
	answerers := make([]*fastudp.Server, len(handlers))
	for i, h := range handlers {
		addFuzzRecords(f, h)
		answerers[i] = fastOf(h, map[string]bool{"example.org.": true, "example.net.": true})
	}
	f.Fuzz(func(t *testing.T, wire []byte) {
		for i, h := range handlers {
			q := new(dns.Msg)
			if q.Unpack(wire) == nil && len(q.Question) > 0 {
				serve(h, q)
			}
			got, _ := answerers[i].Answer(nil, wire, fastClient)
			if got == nil {
				continue
			}
			q = new(dns.Msg)
			if err := q.Unpack(wire); err != nil {
				t.Fatalf("handler %d answered from bytes a query that does not unpack (%v): %x", i, err, wire)
			}
			w := serve(h, q)
			want := w.wire
			if want == nil {
				want, _ = w.msg.Pack()
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("handler %d, query %x: fast_udp sent\n%x\nServeDNS\n%x", i, wire, got, want)
			}
		}
	})
}
