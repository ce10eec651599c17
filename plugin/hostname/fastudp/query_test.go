package fastudp

import (
	"bytes"
	"testing"

	"github.com/miekg/dns"
)

func TestParseQuery(t *testing.T) {
	t.Parallel()
	plain := func(edit func(m *dns.Msg)) []byte {
		m := new(dns.Msg)
		m.SetQuestion("Host-1_x.example.org.", dns.TypeAAAA)
		edit(m)
		b, _ := m.Pack()
		return b
	}
	optFlagsByte := func(b []byte, i int, v byte) []byte { b[len(b)-11+i] = v; return b }
	for _, tc := range []struct {
		name  string
		q     []byte
		ok    bool
		flags uint8 // 1: EDNS, 2: DO
		size  int
	}{
		{"plain", plain(func(*dns.Msg) {}), true, 0, 512},
		{"EDNS", plain(func(m *dns.Msg) { m.SetEdns0(1400, false) }), true, 1, 1232},
		{"EDNS, small", plain(func(m *dns.Msg) { m.SetEdns0(1000, false) }), true, 1, 1000},
		{"EDNS, DO, small buffer", plain(func(m *dns.Msg) { m.SetEdns0(100, true) }), true, 3, 512},
		{"EDNS option", plain(func(m *dns.Msg) {
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_NSID{Code: dns.EDNS0NSID})
		}), false, 0, 0},
		{"EDNS version 1", optFlagsByte(plain(func(m *dns.Msg) { m.SetEdns0(1232, false) }), 6, 1), false, 0, 0},
		{"EDNS flag other than DO", optFlagsByte(plain(func(m *dns.Msg) { m.SetEdns0(1232, false) }), 7, 0x40), true, 1, 1232},
		{"response", plain(func(m *dns.Msg) { m.Response = true }), false, 0, 0},
		{"NOTIFY", plain(func(m *dns.Msg) { m.Opcode = dns.OpcodeNotify }), false, 0, 0},
		{"two questions", plain(func(m *dns.Msg) { m.Question = append(m.Question, m.Question[0]) }), false, 0, 0},
		{"an answer", plain(func(m *dns.Msg) {
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeA, Class: 1}}}
		}), false, 0, 0},
		{"TSIG", plain(func(m *dns.Msg) { m.SetTsig("k.", dns.HmacSHA256, 300, 0) }), false, 0, 0},
		{"class CH", plain(func(m *dns.Msg) { m.Question[0].Qclass = dns.ClassCHAOS }), false, 0, 0},
		{"escaped octet", plain(func(m *dns.Msg) { m.Question[0].Name = `a\032b.example.org.` }), false, 0, 0},
		{"root", plain(func(m *dns.Msg) { m.Question[0].Name = "." }), false, 0, 0},
		{"cut short", plain(func(*dns.Msg) {})[:20], false, 0, 0},
		{"trailing bytes", append(plain(func(*dns.Msg) {}), 0), false, 0, 0},
	} {
		var nb [256]byte
		p, ok := ParseQuery(tc.q, &nb)
		if ok != tc.ok {
			t.Errorf("%s: ok %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		var flags uint8
		if p.EDNS {
			flags |= 1
		}
		if p.DO {
			flags |= 2
		}
		if p.Name != "host-1_x.example.org." || p.Qtype != dns.TypeAAAA || flags != tc.flags || p.Limit != tc.size ||
			!bytes.Equal(p.Wire, tc.q[12:12+len(p.Wire)]) || len(p.Wire) != len(p.Name)+1 {
			t.Errorf("%s: %+v", tc.name, p)
		}
	}
}
