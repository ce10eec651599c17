package hostname

import (
	"context"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	"github.com/coredns/coredns/plugin/test"
	"github.com/coredns/coredns/request"
	"github.com/hostmint/hostmint/plugin/hostname/answer"
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/miekg/dns"
)

// byteWriter keeps what is sent to it, as bytes or as a message.
type byteWriter struct {
	test.ResponseWriter
	wire []byte
	msg  *dns.Msg
}

func (w *byteWriter) Write(b []byte) (int, error) {
	w.wire, w.msg = append([]byte(nil), b...), nil
	return len(b), nil
}

func (w *byteWriter) WriteMsg(m *dns.Msg) error {
	w.wire, w.msg = nil, m
	return nil
}

// sent is what w was sent, as a message, and whether it came as bytes.
func (w *byteWriter) sent(t *testing.T) (*dns.Msg, bool) {
	t.Helper()
	if w.msg != nil {
		return w.msg, false
	}
	m := new(dns.Msg)
	if err := m.Unpack(w.wire); err != nil {
		t.Fatalf("the bytes sent do not unpack: %v", err)
	}
	return m, true
}

// serve asks h as the server does: through its ScrubWriter.
func serve(h *Handler, q *dns.Msg) *byteWriter {
	w := &byteWriter{}
	h.ServeDNS(context.Background(), request.NewScrubWriter(q, w), q)
	return w
}

// A name's second answer comes from its packed bytes and says what the
// first did, with the query's ID and RD bit (CD cleared) and the case of its name;
// each set of answer.EDNS flags has its own bytes.
func TestWireAnswers(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	for _, tc := range []struct {
		name  string
		qname string
		qtype uint16
		edns  bool
		do    bool
		rd    bool
		cd    bool
	}{
		{name: "plain", qname: "abc.example.org.", qtype: dns.TypeA},
		{name: "mixed case, RD", qname: "AbC.ExAmple.ORG.", qtype: dns.TypeA, rd: true},
		{name: "answer.EDNS", qname: "abc.example.org.", qtype: dns.TypeA, edns: true},
		{name: "answer.EDNS and answer.DO, CD", qname: "aBc.example.org.", qtype: dns.TypeA, edns: true, do: true, cd: true},
		{name: "AAAA", qname: "V6.example.org.", qtype: dns.TypeAAAA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var first string
			for round := range 3 {
				q := new(dns.Msg)
				q.SetQuestion(tc.qname, tc.qtype)
				q.Id, q.RecursionDesired, q.CheckingDisabled = uint16(1000+round), tc.rd, tc.cd
				if tc.edns {
					q.SetEdns0(4096, tc.do)
				}
				m, _ := serve(h, q).sent(t)
				if m.Id != q.Id || m.RecursionDesired != tc.rd || m.CheckingDisabled || !m.Authoritative || !m.Response { // CD cleared: RFC 4035 3.1.6
					t.Errorf("round %d: header %+v, query %+v", round, m.MsgHdr, q.MsgHdr)
				}
				if m.Question[0] != q.Question[0] {
					t.Errorf("round %d: question %v, want %v exactly", round, m.Question[0], q.Question[0])
				}
				if o := m.IsEdns0(); (o != nil) != tc.edns || o != nil && (o.Do() != tc.do || o.UDPSize() != answer.MaxUDPSize) {
					t.Errorf("round %d: OPT %v, query had answer.EDNS %t answer.DO %t", round, o, tc.edns, tc.do)
				}
				m.Id, m.RecursionDesired, m.CheckingDisabled = 0, false, false
				if round == 0 {
					first = m.String()
				} else if m.String() != first {
					t.Errorf("round %d answered\n%s\nthe first\n%s", round, m, first)
				}
			}
			if kept(h, tc.qname, tc.qtype, tc.edns, tc.do) == nil {
				t.Error("the answer was not kept")
			}
		})
	}
}

// keptAnswer is what kept says of a kept answer.
type keptAnswer struct {
	until  int64
	serial uint32
}

// kept is the answer h keeps for a question, nil if none.
func kept(h *Handler, qname string, qtype uint16, edns, do bool) *keptAnswer {
	qname = dns.CanonicalName(qname)
	var flags uint8
	if edns {
		flags |= answer.EDNS
	}
	if do {
		flags |= answer.DO
	}
	until, serial, ok := h.answers.Kept(h.index.ZoneOf(qname), qname, qtype, flags)
	if !ok {
		return nil
	}
	return &keptAnswer{until, serial}
}

// The bytes belong to one version of a name: after a change the name
// answers its new address; an expiring name's shortening TTLs, a missing
// name's SOA and a query through a plugin that reads messages never come
// from bytes.
func TestWireFreshness(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	ask := func(qname string, qtype uint16) (*dns.Msg, bool) {
		q := new(dns.Msg)
		q.SetQuestion(qname, qtype)
		return serve(h, q).sent(t)
	}
	ask("abc.example.org.", dns.TypeA)
	addHost(h, "abc.example.org.", "192.0.2.99", 0)
	if m, _ := ask("abc.example.org.", dns.TypeA); len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != "192.0.2.99" {
		t.Errorf("after a change: %v, want 192.0.2.99", m.Answer)
	}

	soon := time.Now().Add(30 * time.Second).UnixMilli() // less than a TTL left
	addHost(h, "soon.example.org.", "192.0.2.30", soon)
	for range 2 {
		if m, _ := ask("soon.example.org.", dns.TypeA); len(m.Answer) != 1 || m.Answer[0].Header().Ttl > 30 {
			t.Errorf("expiring name: %v, want its TTL capped at 30 s", m.Answer)
		}
	}
	if kept(h, "soon.example.org.", dns.TypeA, false, false) != nil {
		t.Error("an expiring name's answer was kept")
	}
	// A missing name's NXDOMAIN is the zone's, kept apart from names'
	// answers and good only at its serial.
	before, _ := h.answers.KeptCount()
	for _, qname := range []string{"nope.example.org.", "other.example.org.", "nope.example.org."} {
		if m, _ := ask(qname, dns.TypeA); m.Rcode != dns.RcodeNameError || m.Question[0].Name != qname {
			t.Errorf("missing name: rcode %s, question %v", dns.RcodeToString[m.Rcode], m.Question)
		}
	}
	if after, _ := h.answers.KeptCount(); after != before {
		t.Errorf("%d names' answers kept after NXDOMAINs, was %d", after, before)
	}
	if _, got := h.answers.KeptCount(); got != 1 {
		t.Errorf("%d NXDOMAINs kept, want the zone's one", got)
	}
	addHost(h, "nope.example.org.", "192.0.2.98", 0)
	if m, _ := ask("nope.example.org.", dns.TypeA); len(m.Answer) != 1 {
		t.Errorf("a new name answered %v from the NXDOMAIN kept before it", m)
	}

	// As a chain with prometheus before hostname hands it over: the
	// recorder wrapped in CoreDNS's per-plugin writer. Bytes still go out,
	// through both, which count them and note who wrote.
	for _, tc := range []struct {
		qname string
		rcode int
	}{{"abc.example.org.", dns.RcodeSuccess}, {"abc.example.org.", dns.RcodeSuccess}, {"gone.example.org.", dns.RcodeNameError}} {
		q := new(dns.Msg)
		q.SetQuestion(tc.qname, dns.TypeA)
		bw := &byteWriter{}
		rec := metrics.NewRecorder(request.NewScrubWriter(q, bw))
		plugin.NextOrFailure("prometheus", h, context.Background(), rec, q)
		if rec.Rcode != tc.rcode || rec.Len == 0 || rec.Plugin != "hostname" || bw.wire == nil {
			t.Errorf("%s through prometheus: rcode %d, %d bytes, plugin %q, as bytes %t; want %s counted, written as bytes by hostname",
				tc.qname, rec.Rcode, rec.Len, rec.Plugin, bw.wire != nil, dns.RcodeToString[tc.rcode])
		}
	}
}

// A signed answer is kept with its signature, and only until the
// signature is due for renewal.
func TestWireSigned(t *testing.T) {
	t.Parallel()
	h := signedFixture(t, 3, true)
	q := new(dns.Msg)
	q.SetQuestion("h000000.example.org.", dns.TypeA)
	q.SetEdns0(1232, true)
	first, _ := serve(h, q).sent(t)
	again, _ := serve(h, q).sent(t)
	if again.String() != first.String() || len(again.Answer) != 2 {
		t.Fatalf("signed answer again:\n%s\nfirst:\n%s", again, first)
	}
	e := kept(h, "h000000.example.org.", dns.TypeA, true, true)
	sig := first.Answer[1].(*dns.RRSIG)
	if want := (int64(sig.Expiration) - int64(sign.Refresh/time.Second)) * 1000; e == nil || e.until != want {
		t.Errorf("kept until %v, want the signature's renewal %d", e, want)
	}
}

// BenchmarkServeDNSWire is BenchmarkServeDNS through the server's writer:
// names that exist answer from their bytes.
func BenchmarkServeDNSWire(b *testing.B) {
	h := newTestHandler(b, "nameserver ns1.example.org 192.0.2.53\n", "example.org.")
	const n = 100_000
	for i := range n {
		ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		addHost(h, "h"+strconv.Itoa(i)+".example.org.", ip.String(), 0)
	}
	qs := make([]*dns.Msg, 4096)
	for i := range qs {
		m := new(dns.Msg)
		name := "h" + strconv.Itoa(i*7919%n) + ".example.org."
		if i%5 == 4 {
			name = "m" + strconv.Itoa(i) + ".example.org."
		}
		m.SetQuestion(name, dns.TypeA)
		qs[i] = m
	}
	w := &test.ResponseWriter{}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q := qs[i%len(qs)]
		h.ServeDNS(ctx, request.NewScrubWriter(q, w), q)
	}
}
