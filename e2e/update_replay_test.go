package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// signedUpdate is an UPDATE of zone (with EDNS, for the answer's Extended
// DNS Error) carrying updates, signed with k now: its bytes on the wire.
func signedUpdate(t testing.TB, k tsigKey, id uint16, zone string, prereqs, updates []string) []byte {
	t.Helper()
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	m.Id = id
	for _, s := range prereqs {
		m.Answer = append(m.Answer, mustRR(t, s))
	}
	for _, s := range updates {
		m.Ns = append(m.Ns, mustRR(t, s))
	}
	m.SetEdns0(1232, false)
	m.SetTsig(k.name+".", dns.HmacSHA256, 300, time.Now().Unix())
	b, _, err := dns.TsigGenerate(m, k.secret, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustRR reads a record; "NAME 0 ANY TYPE" (and NONE) is the form without
// rdata of RRset deletes and prerequisites.
func mustRR(t testing.TB, s string) dns.RR {
	t.Helper()
	if f := strings.Fields(s); len(f) == 4 && (f[2] == "ANY" || f[2] == "NONE") {
		return &dns.ANY{Hdr: dns.RR_Header{Name: dns.Fqdn(f[0]), Rrtype: dns.StringToType[f[3]], Class: dns.StringToClass[f[2]]}}
	}
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return rr
}

// sendUDP sends b, as it is, in one datagram and reads the answer.
func (s *server) sendUDP(t testing.TB, b []byte) *dns.Msg {
	t.Helper()
	c, err := net.Dial("udp", s.dnsAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("reading the answer to an UPDATE: %v", err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(buf[:n]); err != nil {
		t.Fatal(err)
	}
	return r
}

// ede is the text of r's Extended DNS Error, if any.
func ede(r *dns.Msg) string {
	if o := r.IsEdns0(); o != nil {
		for _, opt := range o.Option {
			if e, ok := opt.(*dns.EDNS0_EDE); ok {
				return e.ExtraText
			}
		}
	}
	return ""
}

// A signed UPDATE captured on the way and sent again, the same bytes, is
// refused: it does not move the address back to what it set. So too with
// a tsig block (the operator's keys), which the tsig plugin verifies.
func TestUpdateReplay(t *testing.T) {
	type variant struct {
		name  string
		d     storage.Dialect
		block []string
	}
	var variants []variant
	for _, d := range storagetest.Dialects {
		variants = append(variants, variant{name: string(d), d: d})
	}
	variants = append(variants, variant{name: "sqlite with a tsig block", d: storage.SQLite,
		block: []string{fmt.Sprintf("tsig {\n    secret %s %s\n  }", xfrKeyName, xfrSecret)}})
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			o := updateOptions(t, v.d, 1)
			o.block = v.block
			s, _ := spawn(t, o)
			acct, _ := s.account("pro")
			k := s.tsig("/api/admin/accounts/"+acct+"/tsig-keys", s.admin, nil)
			s.mustUpdate(k, "update add replay.example.org 60 A 198.41.0.1")
			repoint := func(id uint16, to string) []byte {
				return signedUpdate(t, k, id, "example.org", nil, []string{"replay.example.org. 0 ANY A", "replay.example.org. 60 IN A " + to})
			}
			captured := repoint(1, "198.41.0.2")
			if r := s.sendUDP(t, captured); r.Rcode != dns.RcodeSuccess {
				t.Fatalf("the repoint: %s %q", dns.RcodeToString[r.Rcode], ede(r))
			}
			s.resolves("replay.example.org", dns.TypeA, "198.41.0.2")
			if r := s.sendUDP(t, repoint(2, "198.41.0.3")); r.Rcode != dns.RcodeSuccess {
				t.Fatalf("the owner's next repoint: %s %q", dns.RcodeToString[r.Rcode], ede(r))
			}
			s.resolves("replay.example.org", dns.TypeA, "198.41.0.3")
			r := s.sendUDP(t, captured)
			if r.Rcode != dns.RcodeRefused || !strings.Contains(ede(r), "already received") {
				t.Errorf("the captured repoint sent again: %s %q, want REFUSED as a replay", dns.RcodeToString[r.Rcode], ede(r))
			}
			s.resolves("replay.example.org", dns.TypeA, "198.41.0.3")
			// Sent twice at once, as a client that retransmits.
			again := repoint(3, "198.41.0.4")
			answers := make(chan *dns.Msg, 2)
			for range 2 {
				go func() { answers <- s.sendUDP(t, again) }()
			}
			a, b := <-answers, <-answers
			if ok := (a.Rcode == dns.RcodeSuccess) != (b.Rcode == dns.RcodeSuccess); !ok {
				t.Errorf("one message sent twice at once: %s %q and %s %q, want one applied and one refused",
					dns.RcodeToString[a.Rcode], ede(a), dns.RcodeToString[b.Rcode], ede(b))
			}
			s.resolves("replay.example.org", dns.TypeA, "198.41.0.4")
		})
	}
}
