package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Caller-published records ([P2]): the eight types created, listed, changed
// and deleted over HTTP and answered over DNS, the names they make exist,
// every error of the spec's table for them, and the domain's CAA policy
// beside a hostname's own CAA.
//
// Helpers here are prefixed rec so that they do not collide with those of
// other files of the package.

type recObj = map[string]any

var (
	recSHA256  = strings.Repeat("0f", 32)
	recSHA256b = strings.Repeat("a5", 32)
	recSHA1    = strings.Repeat("ab", 20)
)

// recKeyLine writes a fresh 32-byte certificate encryption key and returns
// the Corefile line naming it (DNSSEC, and with it TLSA, needs one).
func recKeyLine(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cert.key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(b)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "cert_encryption_key_file " + path
}

// recDomainID finds a domain's id through the admin API.
func (s *server) recDomainID(t testing.TB, name string) string {
	t.Helper()
	for _, d := range s.must(200, "GET", "/api/admin/domains", s.admin, nil).body["domains"].([]any) {
		if d := d.(map[string]any); d["name"] == name {
			return d["id"].(string)
		}
	}
	t.Fatalf("no domain %s in GET /api/admin/domains", name)
	return ""
}

// recHost mints a hostname on the team's domain and waits until it is live.
func (s *server) recHost(t testing.TB, key, sub, ip string) (id, name string) {
	t.Helper()
	h := s.must(201, "POST", "/api/v1/hostnames", key, recObj{"ip": ip, "subdomain": sub})
	s.live(t, key, h.str("id"))
	return h.str("id"), h.str("hostname")
}

func recPath(hostnameID string, recordID ...string) string {
	p := "/api/v1/hostnames/" + hostnameID + "/records"
	for _, r := range recordID {
		p += "/" + r
	}
	return p
}

// recList is GET .../records, which must answer 200 {records: [...]}.
func (s *server) recList(t testing.TB, key, hostnameID string) []recObj {
	t.Helper()
	r := s.must(200, "GET", recPath(hostnameID), key, nil)
	raw, ok := r.body["records"].([]any)
	if !ok {
		t.Fatalf("list: no records array: %s", r.raw)
	}
	out := make([]recObj, len(raw))
	for i, v := range raw {
		out[i] = v.(map[string]any)
	}
	return out
}

// recListed is the listed record with id, or nil.
func (s *server) recListed(t testing.TB, key, hostnameID, id string) recObj {
	t.Helper()
	for _, r := range s.recList(t, key, hostnameID) {
		if r["id"] == id {
			return r
		}
	}
	return nil
}

// recJSON turns v into what decoding its JSON gives (numbers float64), for
// comparing with a decoded answer.
func recJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// recCheck checks a record as the API answers it: an id, the fully
// qualified name without trailing dot, the type, TTL 300 and data.
func recCheck(t testing.TB, got recObj, name, typ string, data recObj) {
	t.Helper()
	if id, _ := got["id"].(string); id == "" {
		t.Errorf("record without id: %v", got)
	}
	if got["name"] != name || got["type"] != typ || got["ttl"] != float64(300) {
		t.Errorf("record %v: want name %s, type %s, ttl 300", got, name, typ)
	}
	if data != nil && !reflect.DeepEqual(got["data"], recJSON(t, data)) {
		t.Errorf("record %s %s: data %v, want %v", name, typ, recJSON(t, got["data"]), recJSON(t, data))
	}
	if len(got) != 5 {
		t.Errorf("record has fields %s, want id, name, type, ttl, data", keys(got))
	}
}

// recData is a create body without type and name: the data a record made
// from it answers with (bodies here are written in normalized form).
func recData(body recObj) recObj {
	d := recObj{}
	for k, v := range body {
		if k != "type" && k != "name" {
			d[k] = v
		}
	}
	return d
}

// recRdata is an RR's data in presentation form: its text after the header.
func recRdata(rr dns.RR) string {
	return strings.TrimPrefix(rr.String(), rr.Header().String())
}

func recMsg(m *dns.Msg) string {
	if m == nil {
		return "no answer"
	}
	return m.String()
}

// recWithin polls cond every 20ms until it holds or d passes.
func recWithin(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// recServes waits until name answers qtype over UDP and over TCP with
// exactly the records whose data is want (in any order), then checks that
// the answer is authoritative and every record is owned by name, of qtype,
// with TTL 300.
func (s *server) recServes(t testing.TB, name string, qtype uint16, want ...string) {
	t.Helper()
	s.recServesEDNS(t, 0, name, qtype, want...)
}

// recServesEDNS is recServes with queries that advertise an EDNS buffer of
// size bytes (0: no EDNS, a 512-byte UDP answer).
func (s *server) recServesEDNS(t testing.TB, size uint16, name string, qtype uint16, want ...string) {
	t.Helper()
	s = s.withT(t)
	want = slices.Sorted(slices.Values(want))
	for _, proto := range []string{"udp", "tcp"} {
		var m *dns.Msg
		ok := recWithin(5*time.Second, func() bool {
			m = s.recQuery(t, size, name, qtype, proto)
			if m.Rcode != dns.RcodeSuccess {
				return false
			}
			got := make([]string, len(m.Answer))
			for i, rr := range m.Answer {
				got[i] = recRdata(rr)
			}
			slices.Sort(got)
			return slices.Equal(got, want)
		})
		if !ok {
			t.Fatalf("%s %s over %s: want NOERROR with %q, got:\n%s", name, dns.TypeToString[qtype], proto, want, recMsg(m))
		}
		if !m.Authoritative {
			t.Errorf("%s %s over %s: AA not set", name, dns.TypeToString[qtype], proto)
		}
		for _, rr := range m.Answer {
			h := rr.Header()
			if !strings.EqualFold(h.Name, dns.Fqdn(name)) || h.Rrtype != qtype || h.Class != dns.ClassINET || h.Ttl != 300 {
				t.Errorf("%s %s over %s: answer %s, want owner %s, type %s, TTL 300",
					name, dns.TypeToString[qtype], proto, rr, dns.Fqdn(name), dns.TypeToString[qtype])
			}
		}
	}
}

// recQuery asks the server over proto, with an EDNS buffer of size bytes
// unless size is 0.
func (s *server) recQuery(t testing.TB, size uint16, name string, qtype uint16, proto string) *dns.Msg {
	t.Helper()
	if size == 0 {
		return s.withT(t).query(name, qtype, proto)
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = false
	m.SetEdns0(size, false)
	c := &dns.Client{Net: proto, Timeout: 2 * time.Second, UDPSize: size}
	r, _, err := c.Exchange(m, s.dnsAddr)
	if err != nil {
		t.Fatalf("query %s %s over %s: %v", name, dns.TypeToString[qtype], proto, err)
	}
	return r
}

// recEmpty waits until name answers qtype over UDP and TCP with rcode
// (NOERROR: NODATA; NXDOMAIN), no answer and the zone's SOA alone in the
// authority section, authoritatively.
func (s *server) recEmpty(t testing.TB, name string, qtype uint16, rcode int) {
	t.Helper()
	s = s.withT(t)
	for _, proto := range []string{"udp", "tcp"} {
		var m *dns.Msg
		ok := recWithin(5*time.Second, func() bool {
			m = s.query(name, qtype, proto)
			return m.Rcode == rcode && len(m.Answer) == 0 && len(m.Ns) == 1 && m.Ns[0].Header().Rrtype == dns.TypeSOA
		})
		if !ok {
			t.Fatalf("%s %s over %s: want %s with no answer and one SOA, got:\n%s",
				name, dns.TypeToString[qtype], proto, dns.RcodeToString[rcode], recMsg(m))
		}
		if !m.Authoritative {
			t.Errorf("%s %s over %s: AA not set on %s", name, dns.TypeToString[qtype], proto, dns.RcodeToString[rcode])
		}
	}
}

// recCrowd sends n creates of TXT records at once and counts the statuses.
func (s *server) recCrowd(t testing.TB, key, hostnameID string, n int) map[int]int {
	t.Helper()
	s = s.withT(t)
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = s.do("POST", recPath(hostnameID), key, recObj{"type": "TXT", "name": fmt.Sprintf("c%d", i), "text": "crowd"}).status
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, st := range statuses {
		count[st]++
	}
	return count
}

// recFails sends a request that must fail with status and code.
func (s *server) recFails(t testing.TB, status int, code, method, path, key string, body any) response {
	t.Helper()
	r := s.withT(t).do(method, path, key, body)
	if r.status != status || r.str("code") != code {
		t.Errorf("%s %s %v: %d %s, want %d %s", method, path, body, r.status, r.raw, status, code)
	}
	return r
}

// recSign signs the domain and marks its DS published, through the admin
// API, checking that TLSA is refused (409) at each step before the last.
func (s *server) recSign(t testing.TB, domain string, tlsaPath, key string, tlsa recObj) {
	t.Helper()
	id := s.recDomainID(t, domain)
	s.recFails(t, 409, "CONFLICT", "POST", tlsaPath, key, tlsa)
	if d := s.must(200, "PATCH", "/api/admin/domains/"+id, s.admin, recObj{"dnssec": true}); d.body["dnssec"] != true {
		t.Fatalf("PATCH dnssec: %s", d.raw)
	}
	s.recFails(t, 409, "CONFLICT", "POST", tlsaPath, key, tlsa)
	if d := s.must(200, "PATCH", "/api/admin/domains/"+id, s.admin, recObj{"ds_published": true}); d.body["ds_published"] != true {
		t.Fatalf("PATCH ds_published: %s", d.raw)
	}
}

// Each of the eight types, created, answered over UDP and TCP with its exact
// data, TTL 300 and AA, and listed; the names the records make exist (the
// hostname itself, one label, several labels, empty non-terminals) and those
// they do not; the hostname's address beside them.
func TestP2RecordTypes(t *testing.T) {
	eachDialect(t, options{profile: 2, extra: []string{recKeyLine(t)}}, func(t *testing.T, s *server) {
		const domain = "rec.example.net"
		_, key := s.team(t, domain)
		hid, host := s.recHost(t, key, "web", "198.41.0.4")

		tlsa := recObj{"type": "TLSA", "name": "_443._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": recSHA256}
		// TLSA: 409 until the domain is signed and its DS published.
		s.recSign(t, domain, recPath(hid), key, tlsa)

		tests := []struct {
			body  recObj
			label string // "" = the hostname itself
			qtype uint16
			rdata string
		}{
			{recObj{"type": "TXT", "text": "v=spf1 -all"}, "", dns.TypeTXT, `"v=spf1 -all"`},
			{tlsa, "_443._tcp", dns.TypeTLSA, "3 1 1 " + recSHA256},
			{recObj{"type": "CAA", "flags": 0, "tag": "issue", "value": "letsencrypt.org"}, "", dns.TypeCAA, `0 issue "letsencrypt.org"`},
			{recObj{"type": "MX", "preference": 10, "exchange": "mail.example.org"}, "", dns.TypeMX, "10 mail.example.org."},
			{recObj{"type": "SRV", "name": "_sip._tcp", "priority": 10, "weight": 60, "port": 5060, "target": "sip.example.org"},
				"_sip._tcp", dns.TypeSRV, "10 60 5060 sip.example.org."},
			{recObj{"type": "SSHFP", "name": "ssh", "algorithm": 4, "fptype": 2, "fingerprint": recSHA256},
				"ssh", dns.TypeSSHFP, "4 2 " + strings.ToUpper(recSHA256)}, // presentation form is uppercase hex
			{recObj{"type": "HTTPS", "priority": 1, "target": ".", "params": recObj{"alpn": []string{"h2", "h3"}, "port": 8443}},
				"", dns.TypeHTTPS, `1 . alpn="h2,h3" port="8443"`},
			{recObj{"type": "SVCB", "name": "_dns", "priority": 1, "target": "dns.example.org",
				"params": recObj{"mandatory": []string{"alpn"}, "alpn": []string{"dot"}, "port": 853,
					"ipv4hint": []string{"192.0.2.53"}, "ipv6hint": []string{"2001:db8::53"}}},
				"_dns", dns.TypeSVCB, `1 dns.example.org. mandatory="alpn" alpn="dot" port="853" ipv4hint="192.0.2.53" ipv6hint="2001:db8::53"`},
		}
		created := map[string]recObj{}
		for _, tc := range tests {
			typ := tc.body["type"].(string)
			owner := host
			if tc.label != "" {
				owner = tc.label + "." + host
			}
			r := s.must(201, "POST", recPath(hid), key, tc.body)
			recCheck(t, r.body, owner, typ, recData(tc.body))
			created[r.str("id")] = r.body
			s.recServes(t, owner, tc.qtype, tc.rdata)
		}
		if len(created) != len(tests) {
			t.Fatalf("%d distinct ids for %d records", len(created), len(tests))
		}

		// Listed: the same eight, as created.
		l := s.recList(t, key, hid)
		if len(l) != len(tests) {
			t.Fatalf("list holds %d records, want %d: %v", len(l), len(tests), l)
		}
		for _, r := range l {
			if want := created[r["id"].(string)]; !reflect.DeepEqual(r, want) {
				t.Errorf("listed %v, created %v", r, want)
			}
		}

		// Every record is still served once all are in, each type alone at its name.
		for _, tc := range tests {
			owner := host
			if tc.label != "" {
				owner = tc.label + "." + host
			}
			s.recServes(t, owner, tc.qtype, tc.rdata)
		}

		// The hostname's address keeps answering beside its records; a
		// type nobody set at a name that exists is NODATA.
		s.resolves(host, dns.TypeA, "198.41.0.4")
		s.recEmpty(t, host, dns.TypeAAAA, dns.RcodeSuccess)
		s.recEmpty(t, host, dns.TypeSRV, dns.RcodeSuccess)
		s.recEmpty(t, "_443._tcp."+host, dns.TypeA, dns.RcodeSuccess)
		s.recEmpty(t, "ssh."+host, dns.TypeTXT, dns.RcodeSuccess)
		// Names between a record and the hostname exist, empty.
		s.recEmpty(t, "_tcp."+host, dns.TypeTXT, dns.RcodeSuccess)
		s.recEmpty(t, "_tcp."+host, dns.TypeA, dns.RcodeSuccess)
		// Names nobody made do not.
		s.recEmpty(t, "nothing."+host, dns.TypeTXT, dns.RcodeNameError)
		s.recEmpty(t, "_udp."+host, dns.TypeTXT, dns.RcodeNameError)
		s.recEmpty(t, "_80._tcp."+host, dns.TypeTLSA, dns.RcodeNameError)
		s.recEmpty(t, "x._443._tcp."+host, dns.TypeTLSA, dns.RcodeNameError)
		s.recEmpty(t, "x.ssh."+host, dns.TypeSSHFP, dns.RcodeNameError)
		// Case does not matter to DNS.
		s.recServes(t, strings.ToUpper("_443._TCP."+host), dns.TypeTLSA, "3 1 1 "+recSHA256)
	})
}

// dig, the real client, reads what the service publishes: a 300-byte TXT
// as two character-strings, a TXT created from a list as sent, and an HTTPS
// record's alpn and port.
func TestP2RecordDig(t *testing.T) {
	if _, err := exec.LookPath("dig"); err != nil {
		t.Fatal("dig is not installed: run ./scripts/test-deps.sh")
	}
	s := start(t, options{profile: 2})
	_, key := s.team(t, "dig.example.net")
	hid, host := s.recHost(t, key, "digged", "198.41.0.4")
	addr, port, _ := strings.Cut(s.dnsAddr, ":")
	dig := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("dig", append([]string{"@" + addr, "-p", port, "+norec", "+time=2", "+tries=1"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("dig %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}

	long := strings.Repeat("0123456789", 30) // 300 bytes: one 255-byte string and one of 45
	r := s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "name": "long", "text": long})
	recCheck(t, r.body, "long."+host, "TXT", recObj{"text": long})
	s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "name": "dkim", "text": []string{"v=DKIM1; k=ed25519; ", "p=abc"}})
	s.must(201, "POST", recPath(hid), key, recObj{"type": "HTTPS", "priority": 1, "target": ".",
		"params": recObj{"alpn": []string{"h2", "h3"}, "port": 8443}})
	s.recServes(t, "long."+host, dns.TypeTXT, `"`+long[:255]+`" "`+long[255:]+`"`)
	s.recServes(t, "dkim."+host, dns.TypeTXT, `"v=DKIM1; k=ed25519; " "p=abc"`)
	s.recServes(t, host, dns.TypeHTTPS, `1 . alpn="h2,h3" port="8443"`)
	// Quotes and backslashes arrive as sent.
	s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "name": "quote", "text": `say "hi" \o/`})
	s.recServes(t, "quote."+host, dns.TypeTXT, `"say \"hi\" \\o/"`)
	// Lengths are octets: 128 two-byte characters are 256 bytes, cut
	// inside a character into strings of 255 and 1 bytes.
	e := strings.Repeat("é", 128)
	s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "name": "utf8", "text": e})
	// Asked with EDNS: without it the answer (about 330 bytes on the wire)
	// comes back truncated over UDP, because miekg/dns's Len counts each
	// byte written \DDD as four (see the report of this test file); clients
	// then retry over TCP, so the value still arrives.
	s.recServesEDNS(t, 1232, "utf8."+host, dns.TypeTXT, `"`+recEscape(e[:255])+`" "`+recEscape(e[255:])+`"`)
	// 2048 bytes, the most a record holds: nine strings, read over TCP.
	most := strings.Repeat("abcdefgh", 256)
	s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "name": "most", "text": most})

	for _, proto := range []string{"+notcp", "+tcp"} {
		if got, want := dig(proto, "+short", "long."+host, "TXT"), `"`+long[:255]+`" "`+long[255:]+`"`; got != want {
			t.Errorf("dig %s +short TXT:\n got %s\nwant %s", proto, got, want)
		}
		if got, want := dig(proto, "+short", "dkim."+host, "TXT"), `"v=DKIM1; k=ed25519; " "p=abc"`; got != want {
			t.Errorf("dig %s +short TXT of a list: got %s, want %s", proto, got, want)
		}
		if got, want := dig(proto, "+short", host, "HTTPS"), `1 . alpn="h2,h3" port=8443`; got != want {
			t.Errorf("dig %s +short HTTPS: %s, want %s", proto, got, want)
		}
		full := dig(proto, "+noall", "+answer", "+comments", host, "HTTPS")
		if !strings.Contains(full, "status: NOERROR") || !strings.Contains(full, " aa") || !recDigTTL(full, host, "HTTPS") {
			t.Errorf("dig %s HTTPS: not an authoritative answer with TTL 300:\n%s", proto, full)
		}
	}
	if got := dig("+tcp", "+short", "quote."+host, "TXT"); got != `"say \"hi\" \\o/"` {
		t.Errorf("dig +short TXT with quotes: %s", got)
	}
	var strs []string
	for i := 0; i < len(most); i += 255 {
		strs = append(strs, `"`+most[i:min(i+255, len(most))]+`"`)
	}
	if got, want := dig("+tcp", "+short", "most."+host, "TXT"), strings.Join(strs, " "); got != want {
		t.Errorf("dig +tcp +short TXT of 2048 bytes:\n got %s\nwant %s", got, want)
	}
	// Over UDP without EDNS it does not fit: truncated, for the client to retry over TCP.
	if m := s.query("most."+host, dns.TypeTXT, "udp"); !m.Truncated || m.Rcode != dns.RcodeSuccess {
		t.Errorf("2048-byte TXT over UDP without EDNS: not truncated:\n%s", m)
	}
	// The address beside the records.
	if got := dig("+short", host, "A"); got != "198.41.0.4" {
		t.Errorf("dig +short A: %q", got)
	}
}

// recEscape writes s as DNS presentation form does inside quotes: bytes
// outside printable ASCII as \DDD.
func recEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' {
			fmt.Fprintf(&b, "\\%03d", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// recDigTTL reports whether out holds an answer line for name and typ with
// TTL 300.
func recDigTTL(out, name, typ string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == dns.Fqdn(name) && f[1] == "300" && f[2] == "IN" && f[3] == typ {
			return true
		}
	}
	return false
}

// PUT changes a record's value in place and DNS follows; its type and name
// stay; DELETE removes it from the list and from DNS.
func TestP2RecordChange(t *testing.T) {
	eachDialect(t, options{profile: 2, extra: []string{recKeyLine(t)}}, func(t *testing.T, s *server) {
		const domain = "chg.example.net"
		_, key := s.team(t, domain)
		hid, host := s.recHost(t, key, "box", "198.41.0.4")
		tlsaBody := recObj{"type": "TLSA", "name": "_443._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": recSHA256}
		s.recSign(t, domain, recPath(hid), key, tlsaBody)

		txt := s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "text": "first"}).str("id")
		mx := s.must(201, "POST", recPath(hid), key, recObj{"type": "MX", "preference": 10, "exchange": "mail.example.org"}).str("id")
		srv := s.must(201, "POST", recPath(hid), key, recObj{"type": "SRV", "name": "_sip._tcp", "priority": 10, "weight": 5, "port": 5060, "target": "sip.example.org"}).str("id")
		tlsa := s.must(201, "POST", recPath(hid), key, tlsaBody).str("id")
		sshfp := s.must(201, "POST", recPath(hid), key, recObj{"type": "SSHFP", "name": "ssh", "algorithm": 1, "fptype": 1, "fingerprint": recSHA1}).str("id")
		txt2 := s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "text": "second"}).str("id")
		s.recServes(t, host, dns.TypeTXT, `"first"`, `"second"`)
		// Not checked: two records with equal data at one name are both
		// accepted and both served, a duplicate RR in the RRset (RFC 2181
		// §5 says to suppress them); the spec is silent, see the report.

		// TXT: the value changes, the id and name stay, the other TXT at
		// the name and the MX beside it are untouched.
		p := s.must(200, "PUT", recPath(hid, txt), key, recObj{"type": "TXT", "text": "changed"})
		recCheck(t, p.body, host, "TXT", recObj{"text": "changed"})
		if p.str("id") != txt {
			t.Fatalf("PUT changed the id: %s, was %s", p.str("id"), txt)
		}
		s.recServes(t, host, dns.TypeTXT, `"changed"`, `"second"`)
		s.recServes(t, host, dns.TypeMX, "10 mail.example.org.")
		if got := s.recListed(t, key, hid, txt); got == nil || !reflect.DeepEqual(got, p.body) {
			t.Fatalf("listed after PUT: %v, want %v", got, p.body)
		}
		// One string of exactly 255 bytes is the most a PUT takes.
		full := strings.Repeat("m", 255)
		s.must(200, "PUT", recPath(hid, txt), key, recObj{"type": "TXT", "name": "", "text": full})
		s.recServes(t, host, dns.TypeTXT, `"`+full+`"`, `"second"`)

		// Refused changes: 400 BAD_REQUEST, nothing changes.
		bad := []struct {
			why  string
			id   string
			body recObj
		}{
			{"TXT as a list", txt, recObj{"type": "TXT", "text": []string{"a", "b"}}},
			{"TXT as a one-item list", txt, recObj{"type": "TXT", "text": []string{"a"}}},
			{"TXT over 255 bytes", txt, recObj{"type": "TXT", "text": strings.Repeat("x", 256)}},
			{"TXT over 255 bytes in 128 characters", txt, recObj{"type": "TXT", "text": strings.Repeat("é", 128)}},
			{"TXT empty", txt, recObj{"type": "TXT", "text": ""}},
			{"type differs", txt, recObj{"type": "MX", "preference": 10, "exchange": "mail.example.org"}},
			{"type differs on MX", mx, recObj{"type": "TXT", "text": "x"}},
			{"type missing", txt, recObj{"text": "x"}},
			{"name differs", txt, recObj{"type": "TXT", "name": "other", "text": "x"}},
			{"name differs on SRV", srv, recObj{"type": "SRV", "name": "_sip._udp", "priority": 1, "weight": 1, "port": 1, "target": "sip.example.org"}},
			{"name empty on SRV", srv, recObj{"type": "SRV", "name": "", "priority": 1, "weight": 1, "port": 1, "target": "sip.example.org"}},
			{"name differs on TLSA", tlsa, recObj{"type": "TLSA", "name": "_8443._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": recSHA256b}},
			{"TLSA association too short", tlsa, recObj{"type": "TLSA", "usage": 3, "selector": 1, "matching_type": 1, "association": "abcd"}},
			{"field of another type", mx, recObj{"type": "MX", "preference": 5, "exchange": "mx.example.org", "text": "x"}},
			{"MX without exchange", mx, recObj{"type": "MX", "preference": 5}},
			{"acme name", txt, recObj{"type": "TXT", "name": "_acme-challenge", "text": "x"}},
		}
		for _, b := range bad {
			if r := s.do("PUT", recPath(hid, b.id), key, b.body); r.status != 400 || r.str("code") != "BAD_REQUEST" {
				t.Errorf("PUT %s: %d %s, want 400 BAD_REQUEST", b.why, r.status, r.raw)
			}
		}
		s.recServes(t, host, dns.TypeTXT, `"`+full+`"`, `"second"`)
		s.recServes(t, host, dns.TypeMX, "10 mail.example.org.")
		s.recServes(t, "_sip._tcp."+host, dns.TypeSRV, "10 5 5060 sip.example.org.")
		s.recServes(t, "_443._tcp."+host, dns.TypeTLSA, "3 1 1 "+recSHA256)

		// Name omitted: the record keeps its name (a TLSA keeps its port).
		p = s.must(200, "PUT", recPath(hid, srv), key, recObj{"type": "SRV", "priority": 20, "weight": 0, "port": 5061, "target": "sip2.example.org"})
		recCheck(t, p.body, "_sip._tcp."+host, "SRV", recObj{"priority": 20, "weight": 0, "port": 5061, "target": "sip2.example.org"})
		s.recServes(t, "_sip._tcp."+host, dns.TypeSRV, "20 0 5061 sip2.example.org.")
		p = s.must(200, "PUT", recPath(hid, tlsa), key, recObj{"type": "TLSA", "usage": 2, "selector": 0, "matching_type": 1, "association": recSHA256b})
		recCheck(t, p.body, "_443._tcp."+host, "TLSA", recObj{"usage": 2, "selector": 0, "matching_type": 1, "association": recSHA256b})
		if p.str("id") != tlsa {
			t.Fatalf("PUT changed the TLSA's id: %s", p.raw)
		}
		s.recServes(t, "_443._tcp."+host, dns.TypeTLSA, "2 0 1 "+recSHA256b)
		// The stored name, sent (in any case), is accepted.
		p = s.must(200, "PUT", recPath(hid, tlsa), key, recObj{"type": "TLSA", "name": "_443._TCP", "usage": 3, "selector": 1, "matching_type": 1, "association": recSHA256})
		recCheck(t, p.body, "_443._tcp."+host, "TLSA", recObj{"usage": 3, "selector": 1, "matching_type": 1, "association": recSHA256})
		s.recServes(t, "_443._tcp."+host, dns.TypeTLSA, "3 1 1 "+recSHA256)
		// With the DS withdrawn a TLSA cannot be changed (409); other types can.
		did := s.recDomainID(t, domain)
		s.must(200, "PATCH", "/api/admin/domains/"+did, s.admin, recObj{"ds_published": false})
		s.recFails(t, 409, "CONFLICT", "PUT", recPath(hid, tlsa), key, recObj{"type": "TLSA", "usage": 3, "selector": 1, "matching_type": 1, "association": recSHA256b})
		s.recFails(t, 409, "CONFLICT", "POST", recPath(hid), key, recObj{"type": "TLSA", "name": "_25._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": recSHA256b})
		s.must(200, "PATCH", "/api/admin/domains/"+did, s.admin, recObj{"ds_published": true})
		p = s.must(200, "PUT", recPath(hid, mx), key, recObj{"type": "mx", "preference": 0, "exchange": "."})
		recCheck(t, p.body, host, "MX", recObj{"preference": 0, "exchange": "."})
		s.recServes(t, host, dns.TypeMX, "0 .")
		if n := len(s.recList(t, key, hid)); n != 6 {
			t.Fatalf("PUT added or removed records: %d listed, want 6", n)
		}

		// DELETE: 204 with an empty body; not listed, not served; again: 404.
		d := s.must(204, "DELETE", recPath(hid, sshfp), key, nil)
		if len(d.raw) != 0 {
			t.Fatalf("DELETE answered a body: %q", d.raw)
		}
		if s.recListed(t, key, hid, sshfp) != nil {
			t.Fatal("a deleted record is listed")
		}
		s.recEmpty(t, "ssh."+host, dns.TypeSSHFP, dns.RcodeNameError) // the name held only it
		s.recFails(t, 404, "NOT_FOUND", "DELETE", recPath(hid, sshfp), key, nil)
		s.recFails(t, 404, "NOT_FOUND", "PUT", recPath(hid, sshfp), key, recObj{"type": "SSHFP", "algorithm": 1, "fptype": 1, "fingerprint": recSHA1})

		s.must(204, "DELETE", recPath(hid, txt2), key, nil)
		s.recServes(t, host, dns.TypeTXT, `"`+full+`"`)
		s.must(204, "DELETE", recPath(hid, txt), key, nil)
		s.recEmpty(t, host, dns.TypeTXT, dns.RcodeSuccess) // the hostname still exists
		s.resolves(host, dns.TypeA, "198.41.0.4")
		s.must(204, "DELETE", recPath(hid, srv), key, nil)
		s.recEmpty(t, "_sip._tcp."+host, dns.TypeSRV, dns.RcodeNameError)
		s.recEmpty(t, "_tcp."+host, dns.TypeTXT, dns.RcodeSuccess) // still above the TLSA
		s.must(204, "DELETE", recPath(hid, tlsa), key, nil)
		s.recEmpty(t, "_443._tcp."+host, dns.TypeTLSA, dns.RcodeNameError)
		s.recEmpty(t, "_tcp."+host, dns.TypeTXT, dns.RcodeNameError)
		l := s.recList(t, key, hid)
		if len(l) != 1 || l[0]["id"] != mx {
			t.Fatalf("after the deletes: %v, want the MX alone", l)
		}
	})
}

// Every refusal of the record endpoints: 400 for what no record may be, 409
// past ten records, 404 for what the caller may not see, 403 for what its
// key may not do.
func TestP2RecordErrors(t *testing.T) {
	eachDialect(t, options{profile: 2, extra: []string{"record_write_per_minute 1000"}}, func(t *testing.T, s *server) {
		team, key := s.team(t, "err.example.net")
		hid, host := s.recHost(t, key, "full", "198.41.0.4")
		sid, _ := s.recHost(t, key, "sibling", "198.41.0.5")
		_, otherKey := s.team(t, "others.example.net")
		oid, _ := s.recHost(t, otherKey, "theirs", "198.41.0.6")

		// 400: types, fields, names and data no record may have.
		bad := []struct {
			why  string
			body any
		}{
			{"type A", recObj{"type": "A"}},
			{"type AAAA", recObj{"type": "AAAA"}},
			{"type a, lowercase", recObj{"type": "a"}},
			{"type unknown", recObj{"type": "BOGUS", "text": "x"}},
			{"type CNAME", recObj{"type": "CNAME", "target": "x.example.org"}},
			{"type NS", recObj{"type": "NS"}},
			{"type missing", recObj{"text": "x"}},
			{"type empty", recObj{"type": "", "text": "x"}},
			{"preference on TXT", recObj{"type": "TXT", "text": "x", "preference": 10}},
			{"text on MX", recObj{"type": "MX", "preference": 10, "exchange": "mail.example.org", "text": "x"}},
			{"params on SRV", recObj{"type": "SRV", "priority": 1, "weight": 1, "port": 1, "target": ".", "params": recObj{}}},
			{"flags on TLSA", recObj{"type": "TLSA", "name": "_443._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": recSHA256, "flags": 0}},
			{"port on HTTPS", recObj{"type": "HTTPS", "priority": 1, "target": ".", "port": 443}},
			{"unknown field", recObj{"type": "TXT", "text": "x", "ttl": 600}},
			{"_acme-challenge", recObj{"type": "TXT", "name": "_acme-challenge", "text": "x"}},
			{"_acme-challenge, upper", recObj{"type": "TXT", "name": "_ACME-CHALLENGE", "text": "x"}},
			{"_acme-challenge deeper", recObj{"type": "TXT", "name": "www._acme-challenge", "text": "x"}},
			{"name wildcard", recObj{"type": "TXT", "name": "*", "text": "x"}},
			{"name trailing dot", recObj{"type": "TXT", "name": "www.", "text": "x"}},
			{"name space", recObj{"type": "TXT", "name": "a b", "text": "x"}},
			{"TXT missing text", recObj{"type": "TXT"}},
			{"TXT control character", recObj{"type": "TXT", "text": "a\nb"}},
			{"TXT over 2048 bytes", recObj{"type": "TXT", "text": strings.Repeat("x", 2049)}},
			{"TXT list item over 255", recObj{"type": "TXT", "text": []string{strings.Repeat("x", 256)}}},
			{"TLSA not at _port._proto", recObj{"type": "TLSA", "name": "www", "usage": 3, "selector": 1, "matching_type": 1, "association": recSHA256}},
			{"TLSA uppercase hex", recObj{"type": "TLSA", "name": "_443._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": strings.ToUpper(recSHA256)}},
			{"TLSA usage 4", recObj{"type": "TLSA", "name": "_443._tcp", "usage": 4, "selector": 1, "matching_type": 1, "association": recSHA256}},
			{"CAA bad tag", recObj{"type": "CAA", "tag": "issuer", "value": "ca.example.net"}},
			{"CAA flags 256", recObj{"type": "CAA", "flags": 256, "tag": "issue", "value": "ca.example.net"}},
			{"MX null with preference 10", recObj{"type": "MX", "preference": 10, "exchange": "."}},
			{"MX exchange an IP", recObj{"type": "MX", "preference": 10, "exchange": "192.0.2.1"}},
			{"SRV port 65536", recObj{"type": "SRV", "name": "_sip._tcp", "priority": 1, "weight": 1, "port": 65536, "target": "sip.example.org"}},
			{"SSHFP length", recObj{"type": "SSHFP", "algorithm": 4, "fptype": 2, "fingerprint": recSHA1}},
			{"SSHFP algorithm 5", recObj{"type": "SSHFP", "algorithm": 5, "fptype": 1, "fingerprint": recSHA1}},
			{"HTTPS params in alias mode", recObj{"type": "HTTPS", "priority": 0, "target": "cdn.example.org", "params": recObj{"alpn": []string{"h2"}}}},
			{"SVCB ipv4hint of IPv6", recObj{"type": "SVCB", "priority": 1, "target": ".", "params": recObj{"ipv4hint": []string{"2001:db8::1"}}}},
			{"not JSON", "{"},
			{"a list", "[]"},
		}
		for _, b := range bad {
			if r := s.do("POST", recPath(hid), key, b.body); r.status != 400 || r.str("code") != "BAD_REQUEST" {
				t.Errorf("create %s: %d %s, want 400 BAD_REQUEST", b.why, r.status, r.raw)
			}
		}
		if l := s.recList(t, key, hid); len(l) != 0 {
			t.Fatalf("refused creates left records: %v", l)
		}
		s.recEmpty(t, "_acme-challenge."+host, dns.TypeTXT, dns.RcodeNameError)

		// Ten records a hostname; the eleventh is 409 CONFLICT, whatever its type.
		var ids []string
		for i := range 10 {
			r := s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "name": fmt.Sprintf("n%d", i), "text": fmt.Sprint(i)})
			ids = append(ids, r.str("id"))
		}
		s.recFails(t, 409, "CONFLICT", "POST", recPath(hid), key, recObj{"type": "TXT", "name": "n10", "text": "10"})
		s.recFails(t, 409, "CONFLICT", "POST", recPath(hid), key, recObj{"type": "MX", "preference": 0, "exchange": "."})
		if l := s.recList(t, key, hid); len(l) != 10 {
			t.Fatalf("after the eleventh: %d records listed", len(l))
		}
		s.recEmpty(t, "n10."+host, dns.TypeTXT, dns.RcodeNameError)
		s.recServes(t, "n9."+host, dns.TypeTXT, `"9"`)
		// Changing one is no new record: allowed at the limit.
		s.must(200, "PUT", recPath(hid, ids[0]), key, recObj{"type": "TXT", "text": "zero"})
		s.recServes(t, "n0."+host, dns.TypeTXT, `"zero"`)
		// The limit is per hostname: the sibling takes records.
		sib := s.must(201, "POST", recPath(sid), key, recObj{"type": "TXT", "text": "sibling"}).str("id")
		// One deleted, one more fits.
		s.must(204, "DELETE", recPath(hid, ids[9]), key, nil)
		s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "name": "n10", "text": "10"})
		s.recServes(t, "n10."+host, dns.TypeTXT, `"10"`)
		s.recFails(t, 409, "CONFLICT", "POST", recPath(hid), key, recObj{"type": "TXT", "name": "n11", "text": "11"})
		// Creates at once do not overshoot the limit.
		cid, _ := s.recHost(t, key, "crowd", "198.41.0.7")
		if got := s.recCrowd(t, key, cid, 16); got[201] != 10 || got[409] != 6 {
			t.Fatalf("16 creates at once: statuses %v, want 10 × 201 and 6 × 409", got)
		}
		if l := s.recList(t, key, cid); len(l) != 10 {
			t.Fatalf("16 creates at once left %d records", len(l))
		}

		// 404: another team's hostname or record, a record of another
		// hostname, or none; never 403.
		theirs := s.must(201, "POST", recPath(oid), otherKey, recObj{"type": "TXT", "text": "theirs"}).str("id")
		txt := recObj{"type": "TXT", "text": "x"}
		notFound := []struct {
			why          string
			key          string
			method, path string
			body         any
		}{
			{"list another team's hostname", key, "GET", recPath(oid), nil},
			{"create on another team's hostname", key, "POST", recPath(oid), txt},
			{"change another team's record", key, "PUT", recPath(oid, theirs), txt},
			{"delete another team's record", key, "DELETE", recPath(oid, theirs), nil},
			{"another team's record under an own hostname", key, "PUT", recPath(hid, theirs), txt},
			{"another team's record under an own hostname, delete", key, "DELETE", recPath(hid, theirs), nil},
			{"another team on an own hostname: list", otherKey, "GET", recPath(hid), nil},
			{"another team on an own hostname: create", otherKey, "POST", recPath(hid), txt},
			{"another team on an own hostname: change", otherKey, "PUT", recPath(hid, ids[0]), txt},
			{"another team on an own hostname: delete", otherKey, "DELETE", recPath(hid, ids[0]), nil},
			{"the sibling's record under this hostname: change", key, "PUT", recPath(hid, sib), txt},
			{"the sibling's record under this hostname: delete", key, "DELETE", recPath(hid, sib), nil},
			{"this hostname's record under the sibling", key, "DELETE", recPath(sid, ids[0]), nil},
			{"no such record: change", key, "PUT", recPath(hid, "r_nothing"), txt},
			{"no such record: delete", key, "DELETE", recPath(hid, "r_nothing"), nil},
			{"no such hostname: list", key, "GET", recPath("h_nothing"), nil},
			{"no such hostname: create", key, "POST", recPath("h_nothing"), txt},
			{"no such hostname: change", key, "PUT", recPath("h_nothing", ids[0]), txt},
			{"no such hostname: delete", key, "DELETE", recPath("h_nothing", ids[0]), nil},
		}
		for _, n := range notFound {
			if r := s.do(n.method, n.path, n.key, n.body); r.status != 404 || r.str("code") != "NOT_FOUND" {
				t.Errorf("%s: %d %s, want 404 NOT_FOUND", n.why, r.status, r.raw)
			}
		}
		// Nothing of it changed anything.
		s.recServes(t, "n0."+host, dns.TypeTXT, `"zero"`)
		if r := s.recListed(t, otherKey, oid, theirs); r == nil || !reflect.DeepEqual(r["data"], recObj{"text": "theirs"}) {
			t.Fatalf("another team's record after refused calls: %v", r)
		}
		if r := s.recListed(t, key, sid, sib); r == nil {
			t.Fatal("the sibling's record is gone")
		}

		// 401 without a key.
		s.recFails(t, 401, "UNAUTHORIZED", "GET", recPath(hid), "", nil)
		s.recFails(t, 401, "UNAUTHORIZED", "POST", recPath(hid), "", txt)
		s.recFails(t, 401, "UNAUTHORIZED", "DELETE", recPath(hid, ids[0]), "svc_nothing_nothing", nil)

		// 403: a read-only key reads but does not write; a key narrowed to
		// another hostname does neither here.
		read := s.key(t, team, []map[string]any{{"scope": "hostnames:read"}})
		narrow := s.key(t, team, []map[string]any{
			{"scope": "hostnames:read", "hostname": sid}, {"scope": "hostnames:write", "hostname": sid}})
		if l := s.recList(t, read, hid); len(l) != 10 {
			t.Fatalf("read-only key lists %d records", len(l))
		}
		forbidden := []struct {
			why          string
			key          string
			method, path string
			body         any
		}{
			{"read-only key creates", read, "POST", recPath(hid), txt},
			{"read-only key changes", read, "PUT", recPath(hid, ids[0]), txt},
			{"read-only key deletes", read, "DELETE", recPath(hid, ids[0]), nil},
			{"key narrowed elsewhere lists", narrow, "GET", recPath(hid), nil},
			{"key narrowed elsewhere creates", narrow, "POST", recPath(hid), txt},
			{"key narrowed elsewhere changes", narrow, "PUT", recPath(hid, ids[0]), txt},
			{"key narrowed elsewhere deletes", narrow, "DELETE", recPath(hid, ids[0]), nil},
		}
		for _, f := range forbidden {
			if r := s.do(f.method, f.path, f.key, f.body); r.status != 403 || r.str("code") != "FORBIDDEN" {
				t.Errorf("%s: %d %s, want 403 FORBIDDEN", f.why, r.status, r.raw)
			}
		}
		s.recServes(t, "n0."+host, dns.TypeTXT, `"zero"`)
		// The narrowed key does all of it on its own hostname.
		if l := s.recList(t, narrow, sid); len(l) != 1 {
			t.Fatalf("narrowed key lists %v", l)
		}
		nid := s.must(201, "POST", recPath(sid), narrow, recObj{"type": "MX", "preference": 0, "exchange": "."}).str("id")
		s.must(200, "PUT", recPath(sid, nid), narrow, recObj{"type": "MX", "preference": 5, "exchange": "mx.example.org"})
		s.must(204, "DELETE", recPath(sid, nid), narrow, nil)
	})
}

// Records are written only while their hostname is live. Suspended: create
// and delete 409, change 403, and the records stop being served until the
// hostname is restored; released and terminated: 409.
func TestP2RecordStates(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		_, key := s.team(t, "frozen.example.net")
		hid, host := s.recHost(t, key, "held", "198.41.0.4")
		txt := s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "text": "kept"}).str("id")
		srv := s.must(201, "POST", recPath(hid), key, recObj{"type": "SRV", "name": "_sip._tcp", "priority": 1, "weight": 1, "port": 5060, "target": "sip.example.org"}).str("id")
		s.recServes(t, "_sip._tcp."+host, dns.TypeSRV, "1 1 5060 sip.example.org.")

		s.must(200, "POST", "/api/admin/hostnames/"+hid+"/suspend", s.admin, nil)
		s.recEmpty(t, host, dns.TypeTXT, dns.RcodeNameError)
		s.recEmpty(t, "_sip._tcp."+host, dns.TypeSRV, dns.RcodeNameError)
		s.recEmpty(t, "_tcp."+host, dns.TypeSRV, dns.RcodeNameError)
		s.recFails(t, 409, "CONFLICT", "POST", recPath(hid), key, recObj{"type": "TXT", "name": "new", "text": "x"})
		s.recFails(t, 403, "FORBIDDEN", "PUT", recPath(hid, txt), key, recObj{"type": "TXT", "text": "changed"})
		s.recFails(t, 409, "CONFLICT", "DELETE", recPath(hid, txt), key, nil)
		if l := s.recList(t, key, hid); len(l) != 2 {
			t.Fatalf("a suspended hostname's records: %v", l)
		}

		// Restored: the same records are served again, and writable once live.
		s.must(200, "POST", "/api/admin/hostnames/"+hid+"/restore", s.admin, nil)
		s.recServes(t, host, dns.TypeTXT, `"kept"`)
		s.recServes(t, "_sip._tcp."+host, dns.TypeSRV, "1 1 5060 sip.example.org.")
		s.live(t, key, hid)
		s.must(200, "PUT", recPath(hid, txt), key, recObj{"type": "TXT", "text": "changed"})
		s.recServes(t, host, dns.TypeTXT, `"changed"`)

		// Released: frozen, and not served.
		s.must(200, "DELETE", "/api/v1/hostnames/"+hid, key, nil)
		s.recEmpty(t, "_sip._tcp."+host, dns.TypeSRV, dns.RcodeNameError)
		s.recEmpty(t, host, dns.TypeTXT, dns.RcodeNameError)
		s.recFails(t, 409, "CONFLICT", "POST", recPath(hid), key, recObj{"type": "TXT", "text": "x"})
		s.recFails(t, 409, "CONFLICT", "PUT", recPath(hid, txt), key, recObj{"type": "TXT", "text": "x"})
		s.recFails(t, 409, "CONFLICT", "DELETE", recPath(hid, srv), key, nil)

		// The subdomain minted again is a new hostname: none of the old records.
		again, _ := s.recHost(t, key, "held", "198.41.0.5")
		if l := s.recList(t, key, again); len(l) != 0 {
			t.Fatalf("a re-minted hostname inherited records: %v", l)
		}
		s.recEmpty(t, "_sip._tcp."+host, dns.TypeSRV, dns.RcodeNameError)
		s.recEmpty(t, host, dns.TypeTXT, dns.RcodeSuccess)

		// Terminated: frozen, and not served.
		tid, thost := s.recHost(t, key, "ended", "198.41.0.6")
		trec := s.must(201, "POST", recPath(tid), key, recObj{"type": "TXT", "name": "x", "text": "x"}).str("id")
		s.recServes(t, "x."+thost, dns.TypeTXT, `"x"`)
		s.must(200, "POST", "/api/admin/hostnames/"+tid+"/terminate", s.admin, nil)
		s.recEmpty(t, "x."+thost, dns.TypeTXT, dns.RcodeNameError)
		s.recFails(t, 409, "CONFLICT", "POST", recPath(tid), key, recObj{"type": "TXT", "text": "x"})
		s.recFails(t, 409, "CONFLICT", "PUT", recPath(tid, trec), key, recObj{"type": "TXT", "text": "y"})
		s.recFails(t, 409, "CONFLICT", "DELETE", recPath(tid, trec), key, nil)
	})
}

// A pending hostname takes no records: 409 until it reads live. The second
// nameserver never answers, so the hostname stays pending for the test.
func TestP2RecordPending(t *testing.T) {
	eachDialect(t, options{profile: 2, extra: []string{fmt.Sprintf("nameserver ns2.example.org 127.0.0.1:%d", freePort(t))}},
		func(t *testing.T, s *server) {
			_, key := s.team(t, "pending.example.net")
			h := s.must(201, "POST", "/api/v1/hostnames", key, recObj{"ip": "198.41.0.4", "subdomain": "soon"})
			id := h.str("id")
			if h.str("status") != "pending" {
				t.Fatalf("create: %s", h.raw)
			}
			s.resolves(h.str("hostname"), dns.TypeA, "198.41.0.4") // served while pending
			s.recFails(t, 409, "CONFLICT", "POST", recPath(id), key, recObj{"type": "TXT", "text": "early"})
			s.recFails(t, 409, "CONFLICT", "POST", recPath(id), key, recObj{"type": "MX", "preference": 0, "exchange": "."})
			if g := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil); g.str("status") != "pending" {
				t.Fatalf("the hostname left pending during the test, so the 409 proves nothing: %s", g.raw)
			}
			if l := s.recList(t, key, id); len(l) != 0 {
				t.Fatalf("records on a pending hostname: %v", l)
			}
			s.recEmpty(t, h.str("hostname"), dns.TypeTXT, dns.RcodeSuccess)
		})
}

// recordWritePerMinute counts creates, changes and deletes of a whole team:
// past it 429 RATE_LIMITED with Retry-After, for every hostname of the team
// and no other team.
func TestP2RecordRate(t *testing.T) {
	eachDialect(t, options{profile: 2, extra: []string{"record_write_per_minute 3"}}, func(t *testing.T, s *server) {
		_, key := s.team(t, "rate.example.net")
		hid, host := s.recHost(t, key, "busy", "198.41.0.4")
		sid, _ := s.recHost(t, key, "calm", "198.41.0.5")
		_, otherKey := s.team(t, "free.example.net")
		oid, _ := s.recHost(t, otherKey, "other", "198.41.0.6")

		id := s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "text": "one"}).str("id")
		s.must(200, "PUT", recPath(hid, id), key, recObj{"type": "TXT", "text": "two"})
		keep := s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "name": "keep", "text": "keep"}).str("id")

		check := func(r response, what string) {
			t.Helper()
			if r.status != 429 || r.str("code") != "RATE_LIMITED" {
				t.Fatalf("%s past the rate: %d %s, want 429 RATE_LIMITED", what, r.status, r.raw)
			}
			ra, err := strconv.Atoi(r.header.Get("Retry-After"))
			if err != nil || ra < 1 || ra > 60 {
				t.Fatalf("%s: Retry-After %q, want whole seconds in 1..60", what, r.header.Get("Retry-After"))
			}
		}
		check(s.do("POST", recPath(hid), key, recObj{"type": "TXT", "name": "four", "text": "four"}), "create")
		check(s.do("PUT", recPath(hid, id), key, recObj{"type": "TXT", "text": "three"}), "change")
		check(s.do("DELETE", recPath(hid, keep), key, nil), "delete")
		check(s.do("POST", recPath(sid), key, recObj{"type": "TXT", "text": "elsewhere"}), "create on another hostname of the team")

		// Refused writes changed nothing; reads are not writes.
		l := s.recList(t, key, hid)
		if len(l) != 2 {
			t.Fatalf("after the refused writes: %v", l)
		}
		s.recServes(t, host, dns.TypeTXT, `"two"`)
		s.recServes(t, "keep."+host, dns.TypeTXT, `"keep"`)
		s.recEmpty(t, "four."+host, dns.TypeTXT, dns.RcodeNameError)
		// Another team has its own budget, which writes at once do not overshoot.
		if got := s.recCrowd(t, otherKey, oid, 8); got[201] != 3 || got[429] != 5 {
			t.Fatalf("8 writes at once: statuses %v, want 3 × 201 and 5 × 429", got)
		}
	})
}

// The record endpoints are profile 2's: a profile-1 server has none.
func TestP2RecordProfile1(t *testing.T) {
	s := start(t, options{profile: 1})
	_, key := s.account("pro")
	id := s.must(201, "POST", "/api/v1/hostnames", key, recObj{"ip": "198.41.0.4"}).str("id")
	txt := recObj{"type": "TXT", "text": "x"}
	s.recFails(t, 404, "NOT_FOUND", "GET", recPath(id), key, nil)
	s.recFails(t, 404, "NOT_FOUND", "POST", recPath(id), key, txt)
	s.recFails(t, 404, "NOT_FOUND", "PUT", recPath(id, "r_x"), key, txt)
	s.recFails(t, 404, "NOT_FOUND", "DELETE", recPath(id, "r_x"), key, nil)
}

// The domain's CAA policy stands at its apex and at every hostname without
// a CAA of its own; a hostname's own CAA replaces it there (no merge), and
// deleting it brings the policy back. An empty list clears the policy.
func TestP2CAA(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		const domain = "caa.example.net"
		_, key := s.team(t, domain)
		did := s.recDomainID(t, domain)
		aid, a := s.recHost(t, key, "alpha", "198.41.0.4")
		_, b := s.recHost(t, key, "bravo", "198.41.0.5")
		_, otherKey := s.team(t, "nocaa.example.net")
		_, other := s.recHost(t, otherKey, "charlie", "198.41.0.6")

		// No policy: CAA is NODATA everywhere.
		for _, n := range []string{domain, a, b} {
			s.recEmpty(t, n, dns.TypeCAA, dns.RcodeSuccess)
		}

		policy := `0 issue "ca.example.net"`
		d := s.must(200, "PATCH", "/api/admin/domains/"+did, s.admin, recObj{"caa": []string{policy}})
		if !reflect.DeepEqual(d.body["caa"], []any{policy}) {
			t.Fatalf("PATCH caa: %s", d.raw)
		}
		s.recServes(t, domain, dns.TypeCAA, policy)
		s.recServes(t, a, dns.TypeCAA, policy)
		s.recServes(t, b, dns.TypeCAA, policy)
		s.recEmpty(t, other, dns.TypeCAA, dns.RcodeSuccess) // another domain's hostname
		s.recEmpty(t, "nocaa.example.net", dns.TypeCAA, dns.RcodeSuccess)
		s.resolves(a, dns.TypeA, "198.41.0.4")

		// Malformed policies: 400, the policy stays.
		for _, bad := range [][]string{
			{`0 foo "ca.example.net"`},                // tag
			{`0 Issue "ca.example.net"`},              // tag case
			{`0 issue ca.example.net`},                // quotes
			{`300 issue "ca.example.net"`},            // flags
			{`issue "ca.example.net"`},                // flags missing
			{`0 issue "ca.example.net"`, `0 bad "x"`}, // one bad entry of two
			{""}, // empty entry
			// The rules of a caller's CAA record: an iodef must be a URL
			// a CA can report to, a value has no control characters.
			{`0 iodef "not a url"`},
			{`0 iodef "ftp://ca.example.net/"`},
			{`0 issue "ca.example.net\007"`},
		} {
			if r := s.do("PATCH", "/api/admin/domains/"+did, s.admin, recObj{"caa": bad}); r.status != 400 || r.str("code") != "BAD_REQUEST" {
				t.Errorf("PATCH caa %q: %d %s, want 400 BAD_REQUEST", bad, r.status, r.raw)
			}
		}
		if l := s.must(200, "GET", "/api/admin/domains", s.admin, nil); !strings.Contains(string(l.raw), `"caa":["0 issue \"ca.example.net\""]`) {
			t.Fatalf("refused PATCHes changed the policy: %s", l.raw)
		}
		s.recServes(t, domain, dns.TypeCAA, policy)

		// A hostname's own CAA replaces the policy at it, and only there.
		own := s.must(201, "POST", recPath(aid), key, recObj{"type": "CAA", "tag": "issue", "value": "letsencrypt.org"})
		recCheck(t, own.body, a, "CAA", recObj{"flags": 0, "tag": "issue", "value": "letsencrypt.org"})
		s.recServes(t, a, dns.TypeCAA, `0 issue "letsencrypt.org"`)
		s.recServes(t, b, dns.TypeCAA, policy)
		s.recServes(t, domain, dns.TypeCAA, policy)
		// Two of its own: both, still without the policy.
		wild := s.must(201, "POST", recPath(aid), key, recObj{"type": "CAA", "flags": 128, "tag": "issuewild", "value": ";"}).str("id")
		s.recServes(t, a, dns.TypeCAA, `0 issue "letsencrypt.org"`, `128 issuewild ";"`)
		// Changing its own CAA keeps the policy away.
		s.must(200, "PUT", recPath(aid, own.str("id")), key, recObj{"type": "CAA", "tag": "issue", "value": "pki.goog"})
		s.recServes(t, a, dns.TypeCAA, `0 issue "pki.goog"`, `128 issuewild ";"`)
		// A new policy does not reach a hostname with its own CAA.
		policy2 := `0 issue "ca2.example.net"`
		iodef := `0 iodef "mailto:security@caa.example.net"`
		s.must(200, "PATCH", "/api/admin/domains/"+did, s.admin, recObj{"caa": []string{policy2, iodef}})
		s.recServes(t, domain, dns.TypeCAA, policy2, iodef)
		s.recServes(t, b, dns.TypeCAA, policy2, iodef)
		s.recServes(t, a, dns.TypeCAA, `0 issue "pki.goog"`, `128 issuewild ";"`)

		// Deleting its own CAA records restores the policy.
		s.must(204, "DELETE", recPath(aid, own.str("id")), key, nil)
		s.recServes(t, a, dns.TypeCAA, `128 issuewild ";"`)
		s.must(204, "DELETE", recPath(aid, wild), key, nil)
		s.recServes(t, a, dns.TypeCAA, policy2, iodef)

		// [] clears the policy: NODATA at the apex and every hostname.
		d = s.must(200, "PATCH", "/api/admin/domains/"+did, s.admin, recObj{"caa": []string{}})
		if c, ok := d.body["caa"].([]any); !ok || len(c) != 0 {
			t.Fatalf("PATCH caa []: %s", d.raw)
		}
		for _, n := range []string{domain, a, b} {
			s.recEmpty(t, n, dns.TypeCAA, dns.RcodeSuccess)
		}
		s.resolves(a, dns.TypeA, "198.41.0.4")
		s.resolves(b, dns.TypeA, "198.41.0.5")
	})
}

// A record read with GET, edited and sent back whole (id, name, type, ttl
// and data, the way Terraform providers and most SDKs write) is taken; the
// read-only fields must hold their stored values, and a field sent twice is
// refused.
func TestP2RecordRoundTrip(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		_, key := s.team(t, "round.example.net")
		hid, host := s.recHost(t, key, "web", "198.41.0.4")
		created := s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "text": "v=one"})
		rid := created.str("id")
		var got recObj
		for _, r := range s.recList(t, key, hid) {
			if r["id"] == rid {
				got = r
			}
		}
		if got == nil {
			t.Fatalf("record %s not listed", rid)
		}
		got["data"].(map[string]any)["text"] = "v=two"
		if r := s.must(200, "PUT", recPath(hid, rid), key, got); r.str("id") != rid {
			t.Fatalf("PUT of the record as GET answered it: %s", r.raw)
		}
		s.recServes(t, host, dns.TypeTXT, `"v=two"`)

		for _, tc := range []struct {
			name string
			edit func(recObj) recObj
			says string
		}{
			{"another ttl", func(b recObj) recObj { b["ttl"] = 600; return b }, "ttl"},
			{"another id", func(b recObj) recObj { b["id"] = "rec_other"; return b }, "id"},
			{"a field twice", func(b recObj) recObj { b["text"] = "v=three"; return b }, "text"},
			{"data not an object", func(b recObj) recObj { b["data"] = "x"; return b }, "data"},
		} {
			b := recObj{}
			for k, v := range got {
				b[k] = v
			}
			r := s.do("PUT", recPath(hid, rid), key, tc.edit(b))
			if r.status != 400 || r.str("code") != "BAD_REQUEST" || !strings.Contains(r.str("error"), tc.says) {
				t.Errorf("%s: %d %s, want 400 naming %s", tc.name, r.status, r.raw, tc.says)
			}
		}
		s.recServes(t, host, dns.TypeTXT, `"v=two"`)
	})
}

// Releasing a hostname deletes its records, DNS-01 credentials and
// challenge values in the release's transaction: minting the name again
// starts bare, and churning a name leaves no rows behind.
func TestReleaseDeletesHostnameData(t *testing.T) {
	eachDialect(t, options{profile: 2}, func(t *testing.T, s *server) {
		_, key := s.team(t, "churn.example.net")
		db := openSQL(t, s.dialect, s.dsn)
		rows := func(table, hostnameID string) int {
			var n int
			if err := db.QueryRow("SELECT COUNT(*) FROM "+table+" WHERE hostname_id = $1", hostnameID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		for round := range 3 {
			hid, _ := s.recHost(t, key, "web", "198.41.0.4")
			s.must(201, "POST", recPath(hid), key, recObj{"type": "TXT", "text": fmt.Sprint("round ", round)})
			s.must(201, "POST", "/api/v1/hostnames/"+hid+"/acme-credential", key, nil)
			if n := len(s.recList(t, key, hid)); n != 1 {
				t.Fatalf("round %d: %d records on a fresh name, want 1 (nothing stacked from before)", round, n)
			}
			s.must(200, "DELETE", "/api/v1/hostnames/"+hid, key, nil)
			for _, table := range []string{"records", "acme_credentials", "challenges"} {
				if n := rows(table, hid); n != 0 {
					t.Errorf("round %d: %d %s rows left of the released hostname", round, n, table)
				}
			}
		}
	})
}
