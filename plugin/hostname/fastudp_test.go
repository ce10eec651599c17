package hostname

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/hostmint/hostmint/plugin/hostname/fastudp"
	"github.com/hostmint/hostmint/plugin/hostname/rrl"
	"github.com/miekg/dns"
)

var fastClient = netip.MustParseAddrPort("192.0.2.99:5353")

// fastOf is h's fast_udp answerer on a server of routes.
func fastOf(h *Handler, routes map[string]bool) *fastudp.Server {
	return fastudp.Answering(fastAnswers{h}, routes)
}

// fastQuery is a query's bytes.
func fastQuery(t *testing.T, qname string, qtype uint16, edns, do, rd, cd bool) (*dns.Msg, []byte) {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(qname, qtype)
	q.Id, q.RecursionDesired, q.CheckingDisabled = 4242, rd, cd
	if edns {
		q.SetEdns0(4096, do)
	}
	b, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return q, b
}

// What fast_udp sends for a query is, byte for byte, what ServeDNS sends
// for it; what it cannot answer so it leaves to the server.
func TestFastAnswersAsServeDNS(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	a := fastOf(h, map[string]bool{"example.org.": true, "example.net.": true})
	for _, tc := range []struct {
		name             string
		qname            string
		qtype            uint16
		edns, do, rd, cd bool
		fast             bool
	}{
		{name: "a name", qname: "abc.example.org.", qtype: dns.TypeA, fast: true},
		{name: "its case, RD", qname: "AbC.Example.ORG.", qtype: dns.TypeA, rd: true, fast: true},
		{name: "answer.EDNS, answer.DO, CD", qname: "abc.example.org.", qtype: dns.TypeA, edns: true, do: true, cd: true, fast: true},
		{name: "AAAA", qname: "v6.example.org.", qtype: dns.TypeAAAA, fast: true},
		{name: "NODATA", qname: "v6.example.org.", qtype: dns.TypeA, fast: true},
		{name: "missing", qname: "nope.example.org.", qtype: dns.TypeA, fast: true},
		{name: "missing, answer.EDNS and answer.DO, RD", qname: "Nope.Example.net.", qtype: dns.TypeTXT, edns: true, do: true, rd: true, fast: true},
		{name: "missing below a name", qname: "x.abc.example.org.", qtype: dns.TypeA, fast: true},
		{name: "missing, DS", qname: "nope.example.org.", qtype: dns.TypeDS},
		{name: "missing, NSEC, unsigned", qname: "nope.example.org.", qtype: dns.TypeNSEC, fast: true},
		{name: "missing, AXFR", qname: "nope.example.org.", qtype: dns.TypeAXFR},
		{name: "missing, TKEY", qname: "nope.example.org.", qtype: dns.TypeTKEY},
		{name: "missing, ANY", qname: "nope.example.org.", qtype: dns.TypeANY},
		{name: "a name, DS", qname: "abc.example.org.", qtype: dns.TypeDS},
		{name: "a name, MAILB", qname: "abc.example.org.", qtype: dns.TypeMAILB},
		{name: "expired", qname: "old.example.org.", qtype: dns.TypeA, fast: true},
		{name: "apex", qname: "example.org.", qtype: dns.TypeSOA, fast: true},
		{name: "nameserver", qname: "ns1.example.org.", qtype: dns.TypeA, fast: true},
		{name: "above a nameserver", qname: "example.org.", qtype: dns.TypeA, fast: true},
		{name: "outside", qname: "example.com.", qtype: dns.TypeA},
		{name: "escaped", qname: `a\.b.example.org.`, qtype: dns.TypeA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, raw := fastQuery(t, tc.qname, tc.qtype, tc.edns, tc.do, tc.rd, tc.cd)
			serve(h, q) // keeps the bytes
			w := serve(h, q)
			got, drop := a.Answer(nil, raw, fastClient)
			if drop {
				t.Fatal("dropped")
			}
			if !tc.fast {
				if got != nil {
					t.Fatalf("answered %x; want it left to the server", got)
				}
				return
			}
			want := w.wire
			if want == nil {
				var err error
				if want, err = w.msg.Pack(); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Errorf("fast_udp sent\n%x\nServeDNS\n%x", got, want)
			}
		})
	}
}

// A missing name is left to the server unless its names are this
// block's: another block's zone below it, or its zone routed elsewhere.
func TestFastMissingRoutes(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	_, raw := fastQuery(t, "nope.example.org.", dns.TypeA, false, false, false, false)
	for _, tc := range []struct {
		name   string
		routes map[string]bool
		fast   bool
	}{
		{"its zone", map[string]bool{"example.org.": true}, true},
		{"the root", map[string]bool{".": true}, true},
		{"the root, its zone elsewhere", map[string]bool{".": true, "example.org.": false}, false},
		{"a zone below it elsewhere", map[string]bool{"example.org.": true, "sub.example.org.": false}, false},
		{"unknown", nil, false},
	} {
		a := fastOf(h, tc.routes)
		if got, _ := a.Answer(nil, raw, fastClient); (got != nil) != tc.fast {
			t.Errorf("%s: answered %v, want %v", tc.name, got != nil, tc.fast)
		}
	}
}

// response_rate_limit holds for answers from bytes: past the rate a
// client gets every second one truncated and empty, the rest nothing.
func TestFastRateLimited(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.answers.SetLimiter(rrl.New(1, 0, 0, 2))
	a := fastOf(h, map[string]bool{"example.org.": true})
	q, raw := fastQuery(t, "abc.example.org.", dns.TypeA, false, false, true, false)
	serve(h, q)
	var sent, slipped, dropped int
	for range 10 {
		got, drop := a.Answer(nil, raw, fastClient)
		switch {
		case drop:
			dropped++
		case got == nil:
			t.Fatal("left to the server")
		default:
			m := new(dns.Msg)
			if err := m.Unpack(got); err != nil {
				t.Fatal(err)
			}
			if m.Truncated {
				slipped++
				if m.Id != q.Id || !m.Authoritative || len(m.Answer) != 0 || !m.RecursionDesired || len(m.Question) != 1 {
					t.Errorf("slipped reply %v", m)
				}
			} else {
				sent++
			}
		}
	}
	if sent > 1 || slipped == 0 || dropped == 0 {
		t.Errorf("sent %d, slipped %d, dropped %d; want at most 1 sent and both others", sent, slipped, dropped)
	}
}

// A slipped reply from bytes is the one ServeDNS slips: its question, and
// with answer.EDNS the query's OPT handed back.
func TestFastSlipAsServeDNS(t *testing.T) {
	t.Parallel()
	for _, qname := range []string{"abc.example.org.", "nope.example.org."} {
		for _, edns := range []bool{false, true} {
			q, raw := fastQuery(t, qname, dns.TypeA, edns, edns, true, false)
			slow, fast := fixture(t), fixture(t)
			slow.answers.SetLimiter(rrl.New(1, 0, 0, 1))
			fast.answers.SetLimiter(rrl.New(1, 0, 0, 1))
			serve(slow, q)
			a := fastOf(fast, map[string]bool{"example.org.": true})
			serve(fast, q) // keeps the bytes, and spends the allowance
			w := serve(slow, q)
			got, _ := a.Answer(nil, raw, netip.MustParseAddrPort("10.240.0.1:40212")) // test.ResponseWriter's client
			want := w.wire
			if want == nil {
				want, _ = w.msg.Pack()
			}
			if m := new(dns.Msg); m.Unpack(want) != nil || !m.Truncated {
				t.Fatalf("%s, answer.EDNS %v: ServeDNS did not slip: %x", qname, edns, want)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s, answer.EDNS %v: fast_udp slipped\n%x\nServeDNS\n%x", qname, edns, got, want)
			}
		}
	}
}

// An answer from bytes allocates nothing but what RRL keeps.
func BenchmarkFastAnswer(b *testing.B) {
	h := fixture(b)
	a := fastOf(h, map[string]bool{"example.org.": true})
	q := new(dns.Msg)
	q.SetQuestion("abc.example.org.", dns.TypeA)
	serve(h, q)
	raw, _ := q.Pack()
	miss := new(dns.Msg)
	miss.SetQuestion("nope.example.org.", dns.TypeA)
	rawMiss, _ := miss.Pack()
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%5 == 4 {
			a.Answer(buf[:0], rawMiss, fastClient)
		} else if got, _ := a.Answer(buf[:0], raw, fastClient); got == nil {
			b.Fatal("not answered")
		}
	}
}

// In a signed zone a signed answer comes from bytes as ServeDNS sends it; a
// denial with answer.DO (signed per name) too, once ServeDNS has sent it in the
// same case; one without answer.DO is the plain NXDOMAIN.
func TestFastSigned(t *testing.T) {
	t.Parallel()
	h := signedFixture(t, 2, true)
	a := fastOf(h, map[string]bool{"example.org.": true})
	for _, tc := range []struct {
		name  string
		qname string
		qtype uint16
		do    bool
		fast  bool
	}{
		{"signed answer", "h000001.example.org.", dns.TypeA, true, true},
		{"unsigned answer", "h000001.example.org.", dns.TypeA, false, true},
		{"denial, answer.DO", "nope.example.org.", dns.TypeA, true, true},
		{"denial, answer.DO, another type", "nope.example.org.", dns.TypeTXT, true, true},
		{"denial, answer.DO, NSEC", "nope.example.org.", dns.TypeNSEC, true, true},
		{"missing, no answer.DO", "nope.example.org.", dns.TypeA, false, true},
	} {
		q, raw := fastQuery(t, tc.qname, tc.qtype, true, tc.do, false, false)
		serve(h, q) // keeps the bytes
		w := serve(h, q)
		got, _ := a.Answer(nil, raw, fastClient)
		if !tc.fast {
			if got != nil {
				t.Errorf("%s: answered from bytes", tc.name)
			}
			continue
		}
		want := w.wire
		if want == nil {
			want, _ = w.msg.Pack()
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: fast_udp sent\n%x\nServeDNS\n%x", tc.name, got, want)
		}
	}
	// A denial is kept once for every case of the name: its NSEC's owner
	// is the question's, as asked.
	q, raw := fastQuery(t, "NOPE.example.org.", dns.TypeA, true, true, false, false)
	got := answerOrNil(a, raw)
	m := new(dns.Msg)
	if err := m.Unpack(got); err != nil || len(m.Ns) < 2 || m.Ns[1].Header().Name != q.Question[0].Name {
		t.Errorf("a denial in another case: %v (%v)", m, err)
	}
	// A change moves the serial: the kept denial is not used again.
	_, before := h.answers.KeptCount()
	h.index.SetSerial(h.index.Serial() + 1)
	_, raw = fastQuery(t, "nope.example.org.", dns.TypeA, true, true, false, false)
	answerOrNil(a, raw)
	if e := kept(h, "nope.example.org.", dns.TypeA, true, true); e == nil || e.serial != h.index.Serial() {
		_, now := h.answers.KeptCount()
		t.Errorf("a denial answered from bytes of an older serial: %+v (%d kept, %d before)", e, now, before)
	}
}

func answerOrNil(a *fastudp.Server, raw []byte) []byte {
	got, _ := a.Answer(nil, raw, fastClient)
	return got
}
