package records

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/httperr"
	"github.com/miekg/dns"
)

// recordSeeds are request bodies of all eight types, valid and broken, with
// the bytes that are easy to get wrong on the wire: quotes, backslashes,
// control and non-ASCII bytes, 255-byte boundaries.
var recordSeeds = []struct {
	body   string
	create bool
}{
	{`{"type":"TXT","text":"v=spf1 -all"}`, true},
	{`{"type":"txt","name":"Sub.Dept_1","text":["a","b"]}`, true},
	{`{"type":"TXT","text":"say \"hi\" \\o/ \u00e9\u00ff"}`, true},
	{`{"type":"TXT","text":"` + strings.Repeat("x", 256) + `"}`, false},
	{`{"type":"TXT","text":["` + strings.Repeat("y", 255) + `","z"]}`, true},
	{`{"type":"TXT","text":"a\u0000b"}`, true},
	{`{"type":"TXT","text":[]}`, true},
	{`{"type":"TXT","text":{"a":1}}`, true},
	{`{"type":"TLSA","name":"_443._tcp","usage":3,"selector":1,"matching_type":1,"association":"` + strings.Repeat("0f", 32) + `"}`, true},
	{`{"type":"TLSA","name":"_25._TCP.mail","usage":0,"selector":0,"matching_type":0,"association":"3082"}`, false},
	{`{"type":"TLSA","name":"_99999._tcp","usage":3,"selector":1,"matching_type":1,"association":"AB"}`, true},
	{`{"type":"CAA","tag":"issue","value":"letsencrypt.org"}`, true},
	{`{"type":"CAA","flags":128,"tag":"iodef","value":"mailto:security@example.org"}`, true},
	{`{"type":"CAA","tag":"issue","value":"ca.example; account=\"x\\\\y\""}`, true},
	{`{"type":"CAA","tag":"Issue","value":";"}`, true},
	{`{"type":"MX","preference":10,"exchange":"Mail.Example.ORG."}`, true},
	{`{"type":"MX","preference":0,"exchange":"."}`, true},
	{`{"type":"MX","preference":65536,"exchange":"1.2.3.4"}`, true},
	{`{"type":"SRV","name":"_sip._tcp","priority":10,"weight":60,"port":5060,"target":"sip.example.net"}`, true},
	{`{"type":"SSHFP","algorithm":4,"fptype":2,"fingerprint":"` + strings.Repeat("ab", 32) + `"}`, true},
	{`{"type":"SSHFP","algorithm":1,"fptype":1,"fingerprint":"ab:cd"}`, true},
	{`{"type":"HTTPS","priority":1,"target":".","params":{"alpn":["h2","h3"]}}`, true},
	{`{"type":"HTTPS","priority":0,"target":"cdn.example.net","params":{}}`, true},
	{`{"type":"SVCB","name":"_dns","priority":2,"target":"svc.example.net","params":{"ipv6hint":["2001:DB8:0::1"],"ech":"AEX+DQ==",` +
		`"ipv4hint":["192.0.2.1"],"port":8443,"noDefaultAlpn":true,"alpn":["h3"],"mandatory":["ipv6hint","alpn"]}}`, true},
	{`{"type":"SVCB","priority":1,"target":"svc.example.net","params":{"ipv6hint":["::ffff:1.2.3.4"],"alpn":["a\"b"]}}`, true},
	{`{"type":"SVCB","priority":1,"target":"svc.example.net","params":{"mandatory":["mandatory"]}}`, true},
	{`{"type":"A"}`, true},
	{`{"type":"TXT","name":"*.x","text":"w"}`, true},
	{`{"type":"TXT","name":"_acme-challenge","text":"w"}`, true},
	{`{"type":"TXT","name":"` + strings.Repeat("a.", 95) + `b","text":"w"}`, true},
	{`{}`, true},
	{`null`, true},
}

// FuzzParse decodes a body as the API does and applies the record rules. A
// refusal must be a 400 naming the problem; an accepted record must store
// (JSON) and load back (Decode) unchanged, and build an RR that survives the
// wire: anything less and the API accepts a record DNS cannot serve.
func FuzzParse(f *testing.F) {
	for _, s := range recordSeeds {
		f.Add([]byte(s.body), s.create)
	}
	f.Fuzz(func(t *testing.T, body []byte, create bool) {
		var in Input
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if dec.Decode(&in) != nil {
			return // the API answers 400 before the rules see it
		}
		rec, err := Parse(in, create)
		if err != nil {
			if p, ok := apierror.As(err); !ok || httperr.Status(p.Code) != http.StatusBadRequest || p.Message == "" {
				t.Fatalf("Parse(%s) = %v; want a 400 problem", body, err)
			}
			return
		}
		if _, ok := kinds[rec.Type]; !ok {
			t.Fatalf("Parse(%s) gave type %q", body, rec.Type)
		}
		if l, err := parseName(&rec.Label); err != nil || l != rec.Label {
			t.Fatalf("label %q does not pass its own rules: %q, %v", rec.Label, l, err)
		}
		if rec.Type == "TXT" && !create && (len(rec.Data.Text) > MaxStringLen || rec.Data.Strings != nil) {
			t.Fatalf("PUT accepted TXT %+v: more than one string of 255 bytes", rec.Data)
		}

		stored, err := json.Marshal(rec.Data)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(rec.Type, stored)
		if err != nil {
			t.Fatalf("accepted %s, stored as %s, but Decode refuses it: %v", body, stored, err)
		}
		if again, _ := json.Marshal(back); !bytes.Equal(again, stored) {
			t.Fatalf("stored %s, loaded back as %s", stored, again)
		}

		owner := Owner("host.example.org", rec.Label)
		rr, err := rec.RR(owner, TTL)
		if err != nil {
			t.Fatalf("accepted %s, but RR: %v", body, err)
		}
		if want := kinds[rec.Type].rrtype; rr.Header().Rrtype != want || rr.Header().Name != owner {
			t.Fatalf("RR %s: want type %s at %s", rr, dns.TypeToString[want], owner)
		}
		onTheWire(t, rr, rec.Data)
	})
}

// onTheWire sends rr through a DNS message and checks that the caller's
// bytes come back. miekg/dns unpacks a CAA value raw but packs it reading
// escapes, so an RR built with escape never equals the unpacked one when the
// value holds a quote, a backslash or a non-ASCII byte; for CAA the wire
// value is compared with what the caller sent instead (packUnpack, and
// dns.IsDuplicate, are right for the other types).
func onTheWire(t *testing.T, rr dns.RR, d Data) {
	t.Helper()
	caa, ok := rr.(*dns.CAA)
	if !ok {
		packUnpack(t, rr)
		return
	}
	m := new(dns.Msg)
	m.SetQuestion(caa.Hdr.Name, dns.TypeCAA)
	m.Answer = []dns.RR{caa}
	wire, err := m.Pack()
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	var got dns.Msg
	if err := got.Unpack(wire); err != nil {
		t.Fatalf("Unpack: %v", err)
	}
	back, ok := got.Answer[0].(*dns.CAA)
	if !ok || back.Value != d.Value || back.Tag != d.Tag || int(back.Flag) != *d.Flags {
		t.Fatalf("CAA %q %q %d came back off the wire as %v", d.Tag, d.Value, *d.Flags, got.Answer)
	}
}
