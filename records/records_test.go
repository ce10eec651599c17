package records

import (
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/httperr"
	"github.com/miekg/dns"
)

const host = "host.example.org"

type M = map[string]any

// input builds an Input the way the API handler does: from a JSON body.
func input(t *testing.T, body M) Input {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var in Input
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

var (
	sha1Hex   = strings.Repeat("ab", 20)
	sha256Hex = strings.Repeat("0f", 32)
	sha512Hex = strings.Repeat("c3", 64)
)

func TestParseValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   M
		change bool // PUT rules
		label  string
		data   string // JSON of Data; "" = not checked
		rr     string // RR.String() after the header
	}{
		{name: "TXT", body: M{"type": "TXT", "text": "v=spf1 -all"},
			data: `{"text":"v=spf1 -all"}`, rr: `TXT	"v=spf1 -all"`},
		{name: "TXT lowercase type, list, name folded", body: M{"type": "txt", "name": "Sub.Dept_1", "text": []string{"a", "b"}},
			label: "sub.dept_1", data: `{"text":"ab","strings":["a","b"]}`, rr: `TXT	"a" "b"`},
		{name: "TXT one-item list", body: M{"type": "TXT", "text": []string{"only"}},
			data: `{"text":"only"}`, rr: `TXT	"only"`},
		{name: "TXT quote and backslash", body: M{"type": "TXT", "text": `say "hi" \o/`},
			data: `{"text":"say \"hi\" \\o/"}`, rr: `TXT	"say \"hi\" \\o/"`},
		{name: "TXT on PUT", change: true, body: M{"type": "TXT", "name": "", "text": strings.Repeat("x", 255)},
			rr: `TXT	"` + strings.Repeat("x", 255) + `"`},
		{name: "TLSA", body: M{"type": "TLSA", "name": "_443._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": sha256Hex},
			label: "_443._tcp", data: `{"usage":3,"selector":1,"matching_type":1,"association":"` + sha256Hex + `"}`,
			rr: "TLSA	3 1 1 " + sha256Hex},
		{name: "TLSA full cert under a label", body: M{"type": "TLSA", "name": "_25._TCP.mail", "usage": 0, "selector": 0, "matching_type": 0, "association": "3082"},
			label: "_25._tcp.mail", data: `{"usage":0,"selector":0,"matching_type":0,"association":"3082"}`, rr: "TLSA	0 0 0 3082"},
		{name: "TLSA SHA-512 sctp", body: M{"type": "TLSA", "name": "_65535._sctp", "usage": 2, "selector": 0, "matching_type": 2, "association": sha512Hex},
			label: "_65535._sctp", rr: "TLSA	2 0 2 " + sha512Hex},
		{name: "CAA flags default", body: M{"type": "CAA", "tag": "issue", "value": "letsencrypt.org"},
			data: `{"flags":0,"tag":"issue","value":"letsencrypt.org"}`, rr: `CAA	0 issue "letsencrypt.org"`},
		{name: "CAA iodef mailto critical", body: M{"type": "CAA", "flags": 128, "tag": "iodef", "value": "mailto:security@example.org"},
			rr: `CAA	128 iodef "mailto:security@example.org"`},
		{name: "CAA iodef https", body: M{"type": "CAA", "tag": "iodef", "value": "https://iodef.example.org/report"},
			rr: `CAA	0 iodef "https://iodef.example.org/report"`},
		{name: "CAA issuewild forbid", body: M{"type": "CAA", "tag": "issuewild", "value": ";"},
			rr: `CAA	0 issuewild ";"`},
		{name: "MX", body: M{"type": "MX", "preference": 10, "exchange": "Mail.Example.ORG."},
			data: `{"preference":10,"exchange":"mail.example.org"}`, rr: "MX	10 mail.example.org."},
		{name: "MX null", body: M{"type": "MX", "preference": 0, "exchange": "."},
			data: `{"preference":0,"exchange":"."}`, rr: "MX	0 ."},
		{name: "SRV", body: M{"type": "SRV", "name": "_sip._tcp", "priority": 10, "weight": 60, "port": 5060, "target": "sip.example.net"},
			label: "_sip._tcp", data: `{"priority":10,"weight":60,"port":5060,"target":"sip.example.net"}`,
			rr: "SRV	10 60 5060 sip.example.net."},
		{name: "SRV not offered", body: M{"type": "SRV", "name": "_imap._tcp", "priority": 0, "weight": 0, "port": 0, "target": "."},
			label: "_imap._tcp", rr: "SRV	0 0 0 ."},
		{name: "SSHFP Ed25519 SHA-256", body: M{"type": "SSHFP", "algorithm": 4, "fptype": 2, "fingerprint": sha256Hex},
			data: `{"algorithm":4,"fptype":2,"fingerprint":"` + sha256Hex + `"}`, rr: "SSHFP	4 2 " + strings.ToUpper(sha256Hex)},
		{name: "SSHFP Ed448 SHA-1", body: M{"type": "SSHFP", "algorithm": 6, "fptype": 1, "fingerprint": sha1Hex},
			rr: "SSHFP	6 1 " + strings.ToUpper(sha1Hex)},
		{name: "HTTPS service mode", body: M{"type": "HTTPS", "priority": 1, "target": ".", "params": M{"alpn": []string{"h2", "h3"}}},
			data: `{"priority":1,"target":".","params":{"alpn":["h2","h3"]}}`, rr: `HTTPS	1 . alpn="h2,h3"`},
		{name: "HTTPS alias mode", body: M{"type": "HTTPS", "priority": 0, "target": "cdn.example.net"},
			data: `{"priority":0,"target":"cdn.example.net"}`, rr: "HTTPS	0 cdn.example.net."},
		{name: "HTTPS alias mode, empty params", body: M{"type": "HTTPS", "priority": 0, "target": "cdn.example.net", "params": M{}},
			data: `{"priority":0,"target":"cdn.example.net"}`, rr: "HTTPS	0 cdn.example.net."},
		{name: "SVCB all params in key order", body: M{"type": "SVCB", "name": "_dns", "priority": 2, "target": "Svc.Example.net",
			"params": M{"ipv6hint": []string{"2001:DB8:0::1"}, "ech": "AEX+DQ==", "ipv4hint": []string{"192.0.2.1", "192.0.2.2"},
				"port": 8443, "noDefaultAlpn": true, "alpn": []string{"h3"}, "mandatory": []string{"ipv6hint", "alpn"}}},
			label: "_dns",
			data: `{"priority":2,"target":"svc.example.net","params":{"alpn":["h3"],"noDefaultAlpn":true,"port":8443,` +
				`"ipv4hint":["192.0.2.1","192.0.2.2"],"ipv6hint":["2001:db8::1"],"ech":"AEX+DQ==","mandatory":["alpn","ipv6hint"]}}`,
			rr: `SVCB	2 svc.example.net. mandatory="alpn,ipv6hint" alpn="h3" no-default-alpn="" port="8443" ipv4hint="192.0.2.1,192.0.2.2" ech="AEX+DQ==" ipv6hint="2001:db8::1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, err := Parse(input(t, tc.body), !tc.change)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if rec.Label != tc.label {
				t.Errorf("Label = %q, want %q", rec.Label, tc.label)
			}
			stored, err := json.Marshal(rec.Data)
			if err != nil {
				t.Fatal(err)
			}
			if tc.data != "" && string(stored) != tc.data {
				t.Errorf("data = %s\n          want %s", stored, tc.data)
			}
			owner := Owner(host, rec.Label)
			rr, err := rec.RR(owner, TTL)
			if err != nil {
				t.Fatalf("RR: %v", err)
			}
			if want := owner + "\t300\tIN\t" + tc.rr; rr.String() != want {
				t.Errorf("RR = %s\n     want %s", rr, want)
			}
			packUnpack(t, rr)

			// What is stored comes back equal and builds the same RR.
			back, err := Decode(rec.Type, stored)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(back, rec.Data) {
				t.Errorf("Decode = %+v, want %+v", back, rec.Data)
			}
			rr2, err := back.RR(rec.Type, owner, TTL)
			if err != nil || rr2.String() != rr.String() {
				t.Errorf("RR after Decode = %v, %v; want %s", rr2, err, rr)
			}
		})
	}
}

// packUnpack sends rr through a DNS message and checks that it comes back
// the same.
func packUnpack(t *testing.T, rr dns.RR) dns.RR {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(rr.Header().Name, rr.Header().Rrtype)
	m.Answer = []dns.RR{rr}
	wire, err := m.Pack()
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	var got dns.Msg
	if err := got.Unpack(wire); err != nil {
		t.Fatalf("Unpack: %v", err)
	}
	if len(got.Answer) != 1 || !dns.IsDuplicate(got.Answer[0], rr) {
		t.Fatalf("after Pack/Unpack: %v, want %s", got.Answer, rr)
	}
	return got.Answer[0]
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("a", n) }
	tlsa := func(kv M) M {
		b := M{"type": "TLSA", "name": "_443._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": sha256Hex}
		for k, v := range kv {
			b[k] = v
		}
		return b
	}
	svcb := func(params M) M {
		return M{"type": "SVCB", "priority": 1, "target": "svc.example.net", "params": params}
	}
	tests := []struct {
		name   string
		body   M
		change bool
		field  string // the message must name it
		also   string // and hold this, when set
	}{
		// type
		{"type missing", M{"text": "x"}, false, "type", ""},
		{"type A", M{"type": "A"}, false, "type", "PUT on the hostname"},
		{"type aaaa", M{"type": "aaaa"}, false, "type", "PUT on the hostname"},
		{"type CNAME", M{"type": "CNAME", "target": "x.example.org"}, false, "type", "not supported"},
		{"type NS", M{"type": "NS"}, false, "type", "not supported"},
		{"type SOA", M{"type": "SOA"}, false, "type", "not supported"},

		// fields of another type
		{"preference on TXT", M{"type": "TXT", "text": "x", "preference": 10}, false, "preference", "TXT"},
		{"text on MX", M{"type": "MX", "preference": 10, "exchange": "mail.example.org", "text": "x"}, false, "text", ""},
		{"port on HTTPS", M{"type": "HTTPS", "priority": 1, "target": ".", "port": 443}, false, "port", ""},
		{"params on SRV", M{"type": "SRV", "priority": 1, "weight": 1, "port": 1, "target": ".", "params": M{}}, false, "params", ""},
		{"target on CAA", M{"type": "CAA", "tag": "issue", "value": ";", "target": "x.example.org"}, false, "target", ""},
		{"flags on TLSA", tlsa(M{"flags": 0}), false, "flags", ""},
		{"usage on SSHFP", M{"type": "SSHFP", "algorithm": 4, "fptype": 2, "fingerprint": sha256Hex, "usage": 3}, false, "usage", ""},

		// name
		{"name empty label", M{"type": "TXT", "name": "a..b", "text": "x"}, false, "name", ""},
		{"name leading dot", M{"type": "TXT", "name": ".a", "text": "x"}, false, "name", ""},
		{"name trailing dot", M{"type": "TXT", "name": "a.", "text": "x"}, false, "name", ""},
		{"name wildcard", M{"type": "TXT", "name": "*", "text": "x"}, false, "name", "*"},
		{"name wildcard label", M{"type": "TXT", "name": "*.a", "text": "x"}, false, "name", ""},
		{"name space", M{"type": "TXT", "name": "a b", "text": "x"}, false, "name", ""},
		{"name non-ASCII", M{"type": "TXT", "name": "café", "text": "x"}, false, "name", ""},
		{"name Kelvin sign", M{"type": "TXT", "name": "\u212aey", "text": "x"}, false, "name", ""},
		{"name label 64", M{"type": "TXT", "name": long(64), "text": "x"}, false, "name", ""},
		{"name 191 bytes", M{"type": "TXT", "name": long(63) + "." + long(63) + "." + long(63), "text": "x"}, false, "name", "190"},
		{"name acme", M{"type": "TXT", "name": "_acme-challenge", "text": "x"}, false, "name", "_acme-challenge"},
		{"name acme deeper, upper", M{"type": "TXT", "name": "www._ACME-Challenge", "text": "x"}, false, "name", "_acme-challenge"},

		// TXT
		{"text missing", M{"type": "TXT"}, false, "text", ""},
		{"text null", M{"type": "TXT", "text": nil}, false, "text", ""},
		{"text empty", M{"type": "TXT", "text": ""}, false, "text", ""},
		{"text empty list", M{"type": "TXT", "text": []string{}}, false, "text", ""},
		{"text empty item", M{"type": "TXT", "text": []string{"a", ""}}, false, "text[1]", ""},
		{"text number", M{"type": "TXT", "text": 5}, false, "text", ""},
		{"text control", M{"type": "TXT", "text": "a\nb"}, false, "text", "control"},
		{"text tab", M{"type": "TXT", "text": "a\tb"}, false, "text", "control"},
		{"text DEL", M{"type": "TXT", "text": "a\x7fb"}, false, "text", "control"},
		{"text C1 (NEL)", M{"type": "TXT", "text": "a\u0085b"}, false, "text", "U+0085"},
		{"text item 256", M{"type": "TXT", "text": []string{"a", long(256)}}, false, "text[1]", "255"},
		{"text total 2049", M{"type": "TXT", "text": long(2049)}, false, "text", "2048"},
		{"text list total 2049", M{"type": "TXT", "text": []string{long(255), long(255), long(255), long(255), long(255), long(255), long(255), long(255), long(9)}}, false, "text", "2048"},
		{"text PUT list", M{"type": "TXT", "text": []string{"a"}}, true, "text", "one string"},
		{"text PUT 256", M{"type": "TXT", "text": long(256)}, true, "text", "255"},

		// MX
		{"preference missing", M{"type": "MX", "exchange": "mail.example.org"}, false, "preference", ""},
		{"preference negative", M{"type": "MX", "preference": -1, "exchange": "mail.example.org"}, false, "preference", ""},
		{"preference 65536", M{"type": "MX", "preference": 65536, "exchange": "mail.example.org"}, false, "preference", ""},
		{"exchange missing", M{"type": "MX", "preference": 10}, false, "exchange", ""},
		{"exchange empty", M{"type": "MX", "preference": 10, "exchange": ""}, false, "exchange", ""},
		{"exchange one label", M{"type": "MX", "preference": 10, "exchange": "mail"}, false, "exchange", ""},
		{"exchange address", M{"type": "MX", "preference": 10, "exchange": "192.0.2.1"}, false, "exchange", "IP address"},
		{"exchange underscore", M{"type": "MX", "preference": 10, "exchange": "m_x.example.org"}, false, "exchange", ""},
		{"exchange hyphen", M{"type": "MX", "preference": 10, "exchange": "-mx.example.org"}, false, "exchange", ""},
		{"exchange empty label", M{"type": "MX", "preference": 10, "exchange": "mx..example.org"}, false, "exchange", ""},
		{"exchange two dots", M{"type": "MX", "preference": 10, "exchange": ".."}, false, "exchange", ""},
		{"null MX preference", M{"type": "MX", "preference": 10, "exchange": "."}, false, "preference", "RFC 7505"},

		// SRV
		{"SRV priority missing", M{"type": "SRV", "weight": 1, "port": 1, "target": "."}, false, "priority", ""},
		{"SRV weight missing", M{"type": "SRV", "priority": 1, "port": 1, "target": "."}, false, "weight", ""},
		{"SRV port missing", M{"type": "SRV", "priority": 1, "weight": 1, "target": "."}, false, "port", ""},
		{"SRV port range", M{"type": "SRV", "priority": 1, "weight": 1, "port": 70000, "target": "."}, false, "port", ""},
		{"SRV weight range", M{"type": "SRV", "priority": 1, "weight": -5, "port": 1, "target": "."}, false, "weight", ""},
		{"SRV target missing", M{"type": "SRV", "priority": 1, "weight": 1, "port": 1}, false, "target", ""},
		{"SRV target bad", M{"type": "SRV", "priority": 1, "weight": 1, "port": 1, "target": "sip server.example.org"}, false, "target", ""},

		// SSHFP
		{"algorithm missing", M{"type": "SSHFP", "fptype": 2, "fingerprint": sha256Hex}, false, "algorithm", ""},
		{"algorithm 5", M{"type": "SSHFP", "algorithm": 5, "fptype": 2, "fingerprint": sha256Hex}, false, "algorithm", ""},
		{"algorithm 0", M{"type": "SSHFP", "algorithm": 0, "fptype": 2, "fingerprint": sha256Hex}, false, "algorithm", ""},
		{"algorithm 7", M{"type": "SSHFP", "algorithm": 7, "fptype": 2, "fingerprint": sha256Hex}, false, "algorithm", ""},
		{"fptype missing", M{"type": "SSHFP", "algorithm": 4, "fingerprint": sha256Hex}, false, "fptype", ""},
		{"fptype 3", M{"type": "SSHFP", "algorithm": 4, "fptype": 3, "fingerprint": sha256Hex}, false, "fptype", ""},
		{"fingerprint missing", M{"type": "SSHFP", "algorithm": 4, "fptype": 2}, false, "fingerprint", ""},
		{"fingerprint uppercase", M{"type": "SSHFP", "algorithm": 4, "fptype": 2, "fingerprint": strings.ToUpper(sha256Hex)}, false, "fingerprint", "lowercase"},
		{"fingerprint separators", M{"type": "SSHFP", "algorithm": 4, "fptype": 1, "fingerprint": "ab:" + sha1Hex[3:]}, false, "fingerprint", ""},
		{"fingerprint SHA-1 length for fptype 2", M{"type": "SSHFP", "algorithm": 4, "fptype": 2, "fingerprint": sha1Hex}, false, "fingerprint", "64"},
		{"fingerprint SHA-256 length for fptype 1", M{"type": "SSHFP", "algorithm": 1, "fptype": 1, "fingerprint": sha256Hex}, false, "fingerprint", "40"},

		// TLSA
		{"usage 4", tlsa(M{"usage": 4}), false, "usage", ""},
		{"usage missing", tlsa(M{"usage": nil}), false, "usage", ""},
		{"selector 2", tlsa(M{"selector": 2}), false, "selector", ""},
		{"matching_type 3", tlsa(M{"matching_type": 3}), false, "matching_type", ""},
		{"association missing", tlsa(M{"association": nil}), false, "association", ""},
		{"association uppercase", tlsa(M{"association": strings.ToUpper(sha256Hex)}), false, "association", "lowercase"},
		{"association 63 for SHA-256", tlsa(M{"association": sha256Hex[1:]}), false, "association", "64"},
		{"association 64 for SHA-512", tlsa(M{"matching_type": 2}), false, "association", "128"},
		{"association odd for full", tlsa(M{"matching_type": 0, "association": "308"}), false, "association", ""},
		{"association empty", tlsa(M{"matching_type": 0, "association": ""}), false, "association", ""},
		{"TLSA name missing", tlsa(M{"name": nil}), false, "name", "_<port>._<protocol>"},
		{"TLSA name port only", tlsa(M{"name": "_443"}), false, "name", ""},
		{"TLSA name no underscore", tlsa(M{"name": "443._tcp"}), false, "name", ""},
		{"TLSA name leading zero", tlsa(M{"name": "_0443._tcp"}), false, "name", ""},
		{"TLSA name port 0", tlsa(M{"name": "_0._tcp"}), false, "name", ""},
		{"TLSA name port 65536", tlsa(M{"name": "_65536._tcp"}), false, "name", ""},
		{"TLSA name port sign", tlsa(M{"name": "_+443._tcp"}), false, "name", ""},
		{"TLSA name service", tlsa(M{"name": "_https._tcp"}), false, "name", ""},
		{"TLSA name protocol", tlsa(M{"name": "_443._quic"}), false, "name", "_tcp"},
		{"TLSA name protocol later", tlsa(M{"name": "_443.www._tcp"}), false, "name", ""},

		// CAA
		{"flags 256", M{"type": "CAA", "flags": 256, "tag": "issue", "value": ";"}, false, "flags", ""},
		{"flags negative", M{"type": "CAA", "flags": -1, "tag": "issue", "value": ";"}, false, "flags", ""},
		{"tag missing", M{"type": "CAA", "value": ";"}, false, "tag", ""},
		{"tag uppercase", M{"type": "CAA", "tag": "Issue", "value": ";"}, false, "tag", "lowercase"},
		{"tag unknown", M{"type": "CAA", "tag": "contactemail", "value": "a@example.org"}, false, "tag", ""},
		{"value missing", M{"type": "CAA", "tag": "issue"}, false, "value", ""},
		{"value empty", M{"type": "CAA", "tag": "issue", "value": ""}, false, "value", ""},
		{"value control", M{"type": "CAA", "tag": "issue", "value": "ca.example\r\n"}, false, "value", "control"},
		{"value C1", M{"type": "CAA", "tag": "issue", "value": "ca.example\u009b"}, false, "value", "control"},
		{"value 256", M{"type": "CAA", "tag": "issue", "value": long(256)}, false, "value", "255"},
		{"iodef ftp", M{"type": "CAA", "tag": "iodef", "value": "ftp://example.org/"}, false, "value", "mailto:"},
		{"iodef bare address", M{"type": "CAA", "tag": "iodef", "value": "security@example.org"}, false, "value", ""},
		{"iodef mailto no address", M{"type": "CAA", "tag": "iodef", "value": "mailto:"}, false, "value", ""},
		{"iodef https no host", M{"type": "CAA", "tag": "iodef", "value": "https:///path"}, false, "value", ""},

		// HTTPS, SVCB
		{"SVCB priority missing", M{"type": "SVCB", "target": "."}, false, "priority", ""},
		{"HTTPS priority range", M{"type": "HTTPS", "priority": 65536, "target": "."}, false, "priority", ""},
		{"HTTPS target missing", M{"type": "HTTPS", "priority": 1}, false, "target", ""},
		{"HTTPS target one label", M{"type": "HTTPS", "priority": 1, "target": "cdn"}, false, "target", ""},
		{"alias mode params", M{"type": "HTTPS", "priority": 0, "target": "cdn.example.net", "params": M{"alpn": []string{"h2"}}}, false, "params", "alias"},
		{"alpn empty id", svcb(M{"alpn": []string{"h2", ""}}), false, "params.alpn[1]", ""},
		{"alpn comma", svcb(M{"alpn": []string{"h2,h3"}}), false, "params.alpn[0]", "comma"},
		{"alpn 256", svcb(M{"alpn": []string{long(256)}}), false, "params.alpn[0]", "255"},
		{"alpn space", svcb(M{"alpn": []string{"h 2"}}), false, "params.alpn[0]", ""},
		{"alpn empty list", svcb(M{"alpn": []string{}}), false, "params.alpn", ""},
		{"noDefaultAlpn alone", svcb(M{"noDefaultAlpn": true}), false, "noDefaultAlpn", "alpn"},
		{"params port range", svcb(M{"port": 70000}), false, "params.port", ""},
		{"ipv4hint v6", svcb(M{"ipv4hint": []string{"2001:db8::1"}}), false, "params.ipv4hint[0]", ""},
		{"ipv4hint bad", svcb(M{"ipv4hint": []string{"192.0.2.1", "300.0.0.1"}}), false, "params.ipv4hint[1]", ""},
		{"ipv4hint empty", svcb(M{"ipv4hint": []string{}}), false, "params.ipv4hint", ""},
		{"ipv6hint v4", svcb(M{"ipv6hint": []string{"192.0.2.1"}}), false, "params.ipv6hint[0]", ""},
		{"ipv6hint v4-mapped", svcb(M{"ipv6hint": []string{"::ffff:192.0.2.1"}}), false, "params.ipv6hint[0]", ""},
		{"ipv6hint zone", svcb(M{"ipv6hint": []string{"fe80::1%eth0"}}), false, "params.ipv6hint[0]", ""},
		{"ech not base64", svcb(M{"ech": "not base64!"}), false, "params.ech", ""},
		{"ech URL alphabet", svcb(M{"ech": "AEX-DQ__"}), false, "params.ech", ""},
		{"ech unpadded", svcb(M{"ech": "AEX+DQ"}), false, "params.ech", ""},
		{"mandatory absent key", svcb(M{"port": 443, "mandatory": []string{"alpn"}}), false, "params.mandatory", "alpn"},
		{"mandatory unknown", svcb(M{"port": 443, "mandatory": []string{"dohpath"}}), false, "params.mandatory[0]", ""},
		{"mandatory itself", svcb(M{"port": 443, "mandatory": []string{"mandatory"}}), false, "params.mandatory[0]", ""},
		{"mandatory twice", svcb(M{"port": 443, "mandatory": []string{"port", "port"}}), false, "params.mandatory", "twice"},
		{"mandatory empty", svcb(M{"port": 443, "mandatory": []string{}}), false, "params.mandatory", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, err := Parse(input(t, tc.body), !tc.change)
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", rec)
			}
			p, ok := apierror.As(err)
			if !ok || httperr.Status(p.Code) != 400 || p.Code != apierror.CodeBadRequest {
				t.Fatalf("error = %#v, want a 400 BAD_REQUEST problem", err)
			}
			if !strings.Contains(p.Message, tc.field) || !strings.Contains(p.Message, tc.also) {
				t.Errorf("message %q should name %q and hold %q", p.Message, tc.field, tc.also)
			}
		})
	}
}

// TestTXTWire checks that the wire carries the caller's exact bytes, whatever
// miekg/dns's presentation form makes of backslashes, quotes and non-ASCII.
func TestTXTWire(t *testing.T) {
	t.Parallel()
	tests := [][]string{
		{`back\slash`},
		{`"quoted"`},
		{`\"`, `\\`, `\065`, `\`},
		{"caf\u00e9 \u2603 ~ ;()$@"},
		{strings.Repeat(`\`, 255), strings.Repeat(`"`, 255)},
	}
	for _, want := range tests {
		rec, err := Parse(input(t, M{"type": "TXT", "text": want}), true)
		if err != nil {
			t.Fatalf("Parse(%q): %v", want, err)
		}
		rr, err := rec.RR(Owner(host, ""), TTL)
		if err != nil {
			t.Fatal(err)
		}
		if got := wireStrings(t, rr); !reflect.DeepEqual(got, want) {
			t.Errorf("wire strings = %q, want %q", got, want)
		}
		back := packUnpack(t, rr)
		if got := wireStrings(t, back); !reflect.DeepEqual(got, want) {
			t.Errorf("after Unpack, wire strings = %q, want %q", got, want)
		}
	}
}

// TestCAAWire: the CAA value is presentation form in miekg/dns as well.
func TestCAAWire(t *testing.T) {
	t.Parallel()
	want := `ca.example; account="a\b" caf` + "\u00e9"
	rec, err := Parse(input(t, M{"type": "CAA", "tag": "issue", "value": want}), true)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := rec.RR(Owner(host, ""), TTL)
	if err != nil {
		t.Fatal(err)
	}
	rdata := wireRdata(t, rr)
	// flags, tag length, tag, value to the end
	if got := string(rdata[2+rdata[1]:]); got != want {
		t.Errorf("wire value = %q, want %q", got, want)
	}
}

// wireStrings packs rr in a message and reads its RDATA's character-strings.
func wireStrings(t *testing.T, rr dns.RR) []string {
	t.Helper()
	rdata := wireRdata(t, rr)
	var out []string
	for len(rdata) > 0 {
		l := int(rdata[0])
		out = append(out, string(rdata[1:1+l]))
		rdata = rdata[1+l:]
	}
	return out
}

// wireRdata packs rr alone in a message and returns its RDATA: the end of
// the message, RDLENGTH bytes long.
func wireRdata(t *testing.T, rr dns.RR) []byte {
	t.Helper()
	m := new(dns.Msg)
	m.Answer = []dns.RR{rr}
	wire, err := m.Pack()
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	var got dns.Msg
	if err := got.Unpack(wire); err != nil {
		t.Fatal(err)
	}
	n := int(got.Answer[0].Header().Rdlength)
	rdata := wire[len(wire)-n:]
	if l := binary.BigEndian.Uint16(wire[len(wire)-n-2:]); int(l) != n {
		t.Fatalf("RDLENGTH %d, want %d", l, n)
	}
	return rdata
}

func TestTXTSplit(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("0123456789", 30) // 300 bytes
	rec, err := Parse(input(t, M{"type": "TXT", "text": text}), true)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := rec.RR(Owner(host, ""), TTL)
	if err != nil {
		t.Fatal(err)
	}
	ss := wireStrings(t, rr)
	if len(ss) != 2 || len(ss[0]) != 255 || len(ss[1]) != 45 || ss[0]+ss[1] != text {
		t.Errorf("split into %d strings of %v bytes, want 255+45", len(ss), lens(ss))
	}
	if b, _ := json.Marshal(rec.Data); string(b) != `{"text":"`+text+`"}` {
		t.Errorf("data = %s, want the text as one string", b)
	}

	// 2048 bytes is the limit: eight full strings and 8 bytes.
	text = strings.Repeat("x", 2048)
	rec, err = Parse(input(t, M{"type": "TXT", "text": text}), true)
	if err != nil {
		t.Fatal(err)
	}
	rr, err = rec.RR(Owner(host, ""), TTL)
	if err != nil {
		t.Fatal(err)
	}
	ss = wireStrings(t, rr)
	if len(ss) != 9 || len(ss[8]) != 8 || strings.Join(ss, "") != text {
		t.Errorf("2048 bytes split into %v, want 8x255 and 8", lens(ss))
	}

	// A split that is not every 255 bytes is served as sent.
	list := []string{strings.Repeat("a", 100), strings.Repeat("b", 255), "c"}
	rec, err = Parse(input(t, M{"type": "TXT", "text": list}), true)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Data.Text != strings.Join(list, "") {
		t.Errorf("text is not the concatenation")
	}
	rr, err = rec.RR(Owner(host, ""), TTL)
	if err != nil {
		t.Fatal(err)
	}
	if ss := wireStrings(t, rr); !reflect.DeepEqual(ss, list) {
		t.Errorf("served %v, want %v", lens(ss), lens(list))
	}
}

func lens(ss []string) []int {
	var n []int
	for _, s := range ss {
		n = append(n, len(s))
	}
	return n
}

func TestSVCBKeyOrder(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"HTTPS", "SVCB"} {
		// Given in reverse; must come out ascending, on the wire and in text.
		rec, err := Parse(input(t, M{"type": typ, "priority": 1, "target": ".", "params": M{
			"mandatory": []string{"ech", "port", "alpn"}, "ipv6hint": []string{"2001:db8::53"}, "ech": "AEX+DQ==",
			"ipv4hint": []string{"192.0.2.53"}, "port": 853, "noDefaultAlpn": true, "alpn": []string{"dot"},
		}}), true)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := rec.RR(Owner(host, ""), TTL)
		if err != nil {
			t.Fatal(err)
		}
		var svcb *dns.SVCB
		switch v := packUnpack(t, rr).(type) {
		case *dns.HTTPS:
			svcb = &v.SVCB
		case *dns.SVCB:
			svcb = v
		}
		var keys []dns.SVCBKey
		for _, kv := range svcb.Value {
			keys = append(keys, kv.Key())
		}
		want := []dns.SVCBKey{dns.SVCB_MANDATORY, dns.SVCB_ALPN, dns.SVCB_NO_DEFAULT_ALPN, dns.SVCB_PORT,
			dns.SVCB_IPV4HINT, dns.SVCB_ECHCONFIG, dns.SVCB_IPV6HINT}
		if !reflect.DeepEqual(keys, want) {
			t.Errorf("%s wire keys = %v, want %v", typ, keys, want)
		}
		if rr.String() != svcb.String() {
			t.Errorf("%s text order %q differs from wire order %q", typ, rr, svcb)
		}
		if !strings.Contains(rr.String(), `mandatory="alpn,port,ech"`) {
			t.Errorf("%s mandatory not in key order: %s", typ, rr)
		}
	}
}

func TestDecodeRefusesBadData(t *testing.T) {
	t.Parallel()
	tests := []struct{ typ, data string }{
		{"TXT", `{}`},
		{"TXT", `{"strings":["` + strings.Repeat("a", 256) + `"]}`},
		{"MX", `{"exchange":"mail.example.org"}`},
		{"MX", `{"preference":70000,"exchange":"mail.example.org"}`},
		{"SRV", `{"priority":1,"weight":1,"port":1}`},
		{"CAA", `{"flags":300,"tag":"issue","value":";"}`},
		{"SSHFP", `{"algorithm":4,"fptype":2}`},
		{"TLSA", `{"usage":3,"selector":1,"association":"00"}`},
		{"HTTPS", `{"priority":1,"target":".","params":{"ipv4hint":["nope"]}}`},
		{"A", `{"text":"x"}`},
		{"TXT", `not json`},
	}
	for _, tc := range tests {
		if d, err := Decode(tc.typ, []byte(tc.data)); err == nil {
			t.Errorf("Decode(%s, %s) = %+v, want an error", tc.typ, tc.data, d)
		}
	}
}

// TestConcurrentPack: an RR built once at load time is packed by many
// queries at once; packing must not write to it.
func TestConcurrentPack(t *testing.T) {
	t.Parallel()
	var rrs []dns.RR
	for _, body := range []M{
		{"type": "HTTPS", "priority": 1, "target": ".", "params": M{"alpn": []string{"h2"}, "port": 443, "mandatory": []string{"port", "alpn"}}},
		{"type": "TXT", "text": []string{`a"b`, `c\d`}},
	} {
		rec, err := Parse(input(t, body), true)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := rec.RR(Owner(host, ""), TTL)
		if err != nil {
			t.Fatal(err)
		}
		rrs = append(rrs, rr)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			m := new(dns.Msg)
			m.Answer = rrs
			if _, err := m.Pack(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestOwner(t *testing.T) {
	t.Parallel()
	if got := Owner(host, ""); got != "host.example.org." {
		t.Errorf("Owner(host, \"\") = %q", got)
	}
	if got := Owner(host, "_443._tcp"); got != "_443._tcp.host.example.org." {
		t.Errorf("Owner(host, _443._tcp) = %q", got)
	}
}

func TestTypesAllKnown(t *testing.T) {
	t.Parallel()
	if len(Types) != len(kinds) {
		t.Fatalf("Types has %d entries, kinds %d", len(Types), len(kinds))
	}
	for _, typ := range Types {
		if _, ok := kinds[typ]; !ok {
			t.Errorf("type %s has no rules", typ)
		}
	}
}
