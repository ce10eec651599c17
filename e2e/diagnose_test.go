package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// GET /api/v1/hostnames/{id}/diagnose ([P2]) against real DNS on loopback:
// our own nameserver(s), a resolver run here (a miekg/dns server that
// forwards address and TXT questions to our DNS and answers DS questions
// with a DS the test chooses, or lies about an address on purpose), ports
// that never answer or refuse, and a crt.sh-shaped CT log (httptest). Every
// check (record, nameservers, dns01, caa, dnssec, resolvers, certificate)
// is seen to pass, fail and be unknown; the state check alone stands for
// released, suspended and terminated hostnames.
//
// Helpers are prefixed diag so that they do not collide with those of the
// other files of the package.

// diagOrder is the fixed order of the checks of a served hostname.
var diagOrder = []string{"record", "nameservers", "dns01", "caa", "dnssec", "resolvers", "certificate"}

// diagLabels are the labels the checks carry.
var diagLabels = map[string]string{
	"state":       "Hostname state",
	"record":      "Address record on every nameserver",
	"nameservers": "Nameservers answer and agree",
	"dns01":       "DNS-01 challenge",
	"caa":         "CAA allows the CA",
	"dnssec":      "DNSSEC validates",
	"resolvers":   "Resolvers see the address",
	"certificate": "Certificate in the transparency log",
}

// diagCheck is one check of a report as the API shows it.
type diagCheck struct {
	ID, Label, Verdict, Detail, Action string
	HasAction                          bool
}

// diagReport is a decoded diagnose report.
type diagReport struct {
	Hostname, Summary string
	CheckedAt         time.Time
	Checks            []diagCheck
	byID              map[string]diagCheck
	elapsed           time.Duration
}

// diagWant is what one check must read: its verdict, whether it carries an
// action, and text its detail (and action, when given) must contain.
type diagWant struct {
	verdict string
	action  bool
	detail  string
	actionH string
}

func diagPath(id string) string { return "/api/v1/hostnames/" + id + "/diagnose" }

// diagnose asks for id's report with key, requires 200 and the report's
// shape, and returns it.
func (s *server) diagnose(t *testing.T, key, id string) diagReport {
	t.Helper()
	before := time.Now()
	r := s.do("GET", diagPath(id), key, nil)
	elapsed := time.Since(before)
	if r.status != 200 {
		t.Fatalf("diagnose %s: status %d: %s", id, r.status, r.raw)
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("diagnose %s: Content-Type %q", id, r.header.Get("Content-Type"))
	}
	rep := diagReport{byID: map[string]diagCheck{}, elapsed: elapsed}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range r.body {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(keys, []string{"checked_at", "checks", "hostname", "summary"}) {
		t.Fatalf("report fields %v, want checked_at, checks, hostname, summary: %s", keys, r.raw)
	}
	rep.Hostname, rep.Summary = r.str("hostname"), r.str("summary")
	if rep.Hostname == "" || rep.Summary == "" {
		t.Fatalf("report without hostname or summary: %s", r.raw)
	}
	rep.CheckedAt = parseTime(t, r.str("checked_at"))
	if rep.CheckedAt.Before(before.Add(-time.Second)) || rep.CheckedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("checked_at %s is not the time of the call (%s)", rep.CheckedAt, before)
	}
	var raw struct {
		Checks []map[string]any `json:"checks"`
	}
	if err := json.Unmarshal(r.raw, &raw); err != nil || raw.Checks == nil {
		t.Fatalf("checks is not a list: %v: %s", err, r.raw)
	}
	for i, m := range raw.Checks {
		var c diagCheck
		for k, v := range m {
			str, ok := v.(string)
			if !ok || str == "" {
				t.Errorf("check %d: %s is %v, want a non-empty string", i, k, v)
			}
			switch k {
			case "id":
				c.ID = str
			case "label":
				c.Label = str
			case "verdict":
				c.Verdict = str
			case "detail":
				c.Detail = str
			case "action":
				c.Action, c.HasAction = str, true
			default:
				t.Errorf("check %d has a field %q: %v", i, k, m)
			}
		}
		if c.ID == "" || c.Label == "" || c.Verdict == "" || c.Detail == "" {
			t.Errorf("check %d lacks id, label, verdict or detail: %v", i, m)
		}
		if want, ok := diagLabels[c.ID]; !ok || c.Label != want {
			t.Errorf("check %q has label %q, want %q", c.ID, c.Label, want)
		}
		if !slices.Contains([]string{"pass", "fail", "unknown"}, c.Verdict) {
			t.Errorf("check %q has verdict %q", c.ID, c.Verdict)
		}
		if c.Verdict == "pass" && c.HasAction {
			t.Errorf("check %q passes but carries an action %q", c.ID, c.Action)
		}
		rep.Checks = append(rep.Checks, c)
		rep.byID[c.ID] = c
	}
	return rep
}

// ids are the check ids of the report, in its order.
func (r diagReport) ids() []string {
	var out []string
	for _, c := range r.Checks {
		out = append(out, c.ID)
	}
	return out
}

// expect requires the report of hostname name to hold the seven checks in
// the fixed order, each as wants says (every check must be given), and a
// summary that names the failing checks, else the unknown ones, else says
// that all pass.
func (r diagReport) expect(t *testing.T, name string, wants map[string]diagWant) {
	t.Helper()
	if r.Hostname != name {
		t.Errorf("hostname %q, want %q", r.Hostname, name)
	}
	if !slices.Equal(r.ids(), diagOrder) {
		t.Fatalf("%s: checks %v, want %v in that order", name, r.ids(), diagOrder)
	}
	var fails, unknowns []string
	for _, id := range diagOrder {
		w, ok := wants[id]
		if !ok {
			t.Fatalf("test bug: no expectation for %s", id)
		}
		r.expectOne(t, id, w)
		switch w.verdict {
		case "fail":
			fails = append(fails, id)
		case "unknown":
			unknowns = append(unknowns, id)
		}
	}
	if !strings.HasPrefix(r.Summary, name) {
		t.Errorf("summary %q does not begin with the hostname", r.Summary)
	}
	switch {
	case len(fails) > 0:
		if !strings.Contains(r.Summary, "("+strings.Join(fails, ", ")+")") || !strings.Contains(r.Summary, "fail") {
			t.Errorf("summary %q does not name the failing checks %v", r.Summary, fails)
		}
	case len(unknowns) > 0:
		if !strings.Contains(r.Summary, "("+strings.Join(unknowns, ", ")+")") || strings.Contains(r.Summary, "all") {
			t.Errorf("summary %q does not name the unknown checks %v", r.Summary, unknowns)
		}
	default:
		if !strings.Contains(r.Summary, "all 7 checks pass") {
			t.Errorf("summary %q does not say that all 7 checks pass", r.Summary)
		}
	}
	if t.Failed() {
		t.Logf("%s report: %+v", name, r.Checks)
	}
}

// expectOne requires check id to read as w says.
func (r diagReport) expectOne(t *testing.T, id string, w diagWant) {
	t.Helper()
	c := r.byID[id]
	if c.Verdict != w.verdict {
		t.Errorf("%s %s: verdict %s (%s), want %s", r.Hostname, id, c.Verdict, c.Detail, w.verdict)
		return
	}
	if c.HasAction != w.action {
		t.Errorf("%s %s (%s): action %q present=%v, want present=%v", r.Hostname, id, c.Verdict, c.Action, c.HasAction, w.action)
	}
	if !strings.Contains(c.Detail, w.detail) {
		t.Errorf("%s %s: detail %q does not contain %q", r.Hostname, id, c.Detail, w.detail)
	}
	if !strings.Contains(c.Action, w.actionH) {
		t.Errorf("%s %s: action %q does not contain %q", r.Hostname, id, c.Action, w.actionH)
	}
}

// diagPass, diagFail, diagUnknown and diagUnknownAct build expectations.
func diagPass(detail string) diagWant { return diagWant{verdict: "pass", detail: detail} }
func diagFail(detail, action string) diagWant {
	return diagWant{verdict: "fail", action: true, detail: detail, actionH: action}
}
func diagUnknown(detail string) diagWant { return diagWant{verdict: "unknown", detail: detail} }
func diagUnknownAct(detail, action string) diagWant {
	return diagWant{verdict: "unknown", action: true, detail: detail, actionH: action}
}

// diagResolver is a recursive resolver stand-in: A, AAAA and TXT questions
// go to upstream (our DNS) unless a lie is set for the name; DS questions
// are answered from ds; anything else is an empty NOERROR.
type diagResolver struct {
	addr     string
	upstream string
	mu       sync.Mutex
	ds       map[string][]dns.RR // owner FQDN, lowercase
	lies     map[string]string   // FQDN, lowercase → the IPv4 address to answer
	asked    map[string]int      // "name type" → questions seen
}

// diagStartResolver runs a resolver on 127.0.0.1 (UDP and TCP, one port).
func diagStartResolver(t *testing.T, upstream string) *diagResolver {
	t.Helper()
	r := &diagResolver{upstream: upstream, ds: map[string][]dns.RR{}, lies: map[string]string{}, asked: map[string]int{}}
	var pc net.PacketConn
	var l net.Listener
	for range 20 {
		p, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if l, err = net.Listen("tcp", p.LocalAddr().String()); err == nil {
			pc = p
			break
		}
		p.Close()
	}
	if pc == nil {
		t.Fatal("no port free for UDP and TCP")
	}
	r.addr = pc.LocalAddr().String()
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: r}, {Listener: l, Handler: r}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go srv.ActivateAndServe()
		<-started
		t.Cleanup(func() { srv.Shutdown() })
	}
	return r
}

func (r *diagResolver) setDS(domain string, ds ...dns.RR) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ds[strings.ToLower(dns.Fqdn(domain))] = ds
}

func (r *diagResolver) lie(name, ip string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lies[strings.ToLower(dns.Fqdn(name))] = ip
}

func (r *diagResolver) seen(name string, qtype uint16) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked[strings.ToLower(dns.Fqdn(name))+" "+dns.TypeToString[qtype]]
}

func (r *diagResolver) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	if len(req.Question) != 1 {
		m := new(dns.Msg)
		m.SetRcode(req, dns.RcodeFormatError)
		w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	r.mu.Lock()
	r.asked[name+" "+dns.TypeToString[q.Qtype]]++
	lie, lying := r.lies[name]
	var ds []dns.RR
	for _, rr := range r.ds[name] {
		ds = append(ds, dns.Copy(rr))
	}
	r.mu.Unlock()
	m := new(dns.Msg)
	m.SetReply(req)
	m.RecursionAvailable = true
	switch {
	case q.Qtype == dns.TypeDS:
		m.Answer = ds
	case lying && (q.Qtype == dns.TypeA || q.Qtype == dns.TypeAAAA):
		if q.Qtype == dns.TypeA {
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.ParseIP(lie).To4()}}
		}
	case q.Qtype == dns.TypeA || q.Qtype == dns.TypeAAAA || q.Qtype == dns.TypeTXT:
		fw := req.Copy()
		fw.RecursionDesired = false
		c := &dns.Client{Timeout: 2 * time.Second}
		up, _, err := c.Exchange(fw, r.upstream)
		if err == nil && up.Truncated {
			c.Net = "tcp"
			up, _, err = c.Exchange(fw, r.upstream)
		}
		if err != nil {
			m.Rcode = dns.RcodeServerFailure
			break
		}
		up.Id, up.RecursionDesired, up.RecursionAvailable, up.Authoritative = req.Id, req.RecursionDesired, true, false
		m = up
	}
	w.WriteMsg(m)
}

// diagCTLog is a crt.sh-shaped search: GET /?output=json&q=<name>. What it
// answers for a name is set with set: "current", "renewed" (an expired
// certificate and a newer current one), "expired", "empty" ([]), "error"
// (500) or "garbage" (200, not JSON). Names not set get [].
type diagCTLog struct {
	url   string
	mu    sync.Mutex
	modes map[string]string
	asked map[string]int
}

func diagStartCTLog(t *testing.T) *diagCTLog {
	t.Helper()
	l := &diagCTLog{modes: map[string]string{}, asked: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(l.serve))
	t.Cleanup(srv.Close)
	l.url = srv.URL
	return l
}

func (l *diagCTLog) set(name, mode string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.modes[name] = mode
}

func (l *diagCTLog) seen(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.asked[name]
}

func diagCTEntry(name string, from, to time.Time) map[string]string {
	const layout = "2006-01-02T15:04:05"
	return map[string]string{
		"issuer_name": "C=US, O=Let's Encrypt, CN=R3", "common_name": name, "name_value": name,
		"not_before": from.UTC().Format(layout), "not_after": to.UTC().Format(layout),
	}
}

func (l *diagCTLog) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.Method != "GET" || r.URL.Path != "/" || q.Get("output") != "json" || q.Get("q") == "" {
		http.Error(w, "bad search", http.StatusBadRequest)
		return
	}
	name := q.Get("q")
	l.mu.Lock()
	l.asked[name]++
	mode := l.modes[name]
	l.mu.Unlock()
	day := 24 * time.Hour
	now := time.Now()
	entries := []map[string]string{}
	switch mode {
	case "current":
		entries = append(entries, diagCTEntry(name, now.Add(-30*day), now.Add(60*day)))
	case "renewed":
		entries = append(entries, diagCTEntry(name, now.Add(-200*day), now.Add(-110*day)),
			diagCTEntry(name, now.Add(-10*day), now.Add(80*day)))
	case "expired":
		entries = append(entries, diagCTEntry(name, now.Add(-200*day), now.Add(-110*day)),
			diagCTEntry(name, now.Add(-100*day), now.Add(-10*day)))
	case "error":
		http.Error(w, "overloaded", http.StatusInternalServerError)
		return
	case "garbage":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>busy</html>")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(entries)
}

// diagSilent is a UDP (and TCP) address that takes questions and never
// answers: a bound UDP socket nobody reads, and a TCP listener that accepts
// nothing.
func diagSilent(t *testing.T) string {
	t.Helper()
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err != nil {
			pc.Close()
			continue
		}
		t.Cleanup(func() { pc.Close(); l.Close() })
		return pc.LocalAddr().String()
	}
	t.Fatal("no port free for UDP and TCP")
	return ""
}

// diagClosed is an address where nothing listens (UDP and TCP refuse).
func diagClosed(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", freePort(t))
}

// diagSign signs domain and returns the DS of the key its nameserver
// serves.
func (s *server) diagSign(t *testing.T, domain string) *dns.DS {
	t.Helper()
	d := s.must(200, "PATCH", "/api/admin/domains/"+s.domainID(t, domain), s.admin, map[string]any{"dnssec": true})
	if d.body["dnssec"] != true {
		t.Fatalf("enable DNSSEC on %s: %s", domain, d.raw)
	}
	var m *dns.Msg
	eventually(t, 5*time.Second, func() bool {
		m = s.query(domain, dns.TypeDNSKEY, "udp")
		return len(m.Answer) == 1
	}, "%s serves no DNSKEY: %v", domain, m)
	k, ok := m.Answer[0].(*dns.DNSKEY)
	if !ok {
		t.Fatalf("DNSKEY answer: %v", m)
	}
	return k.ToDS(dns.SHA256)
}

// diagMint makes a hostname <sub>.<team domain>; body fields beyond ip and
// subdomain come from extra.
func (s *server) diagMint(t *testing.T, key, sub, ip string, extra map[string]any) (id, name string) {
	t.Helper()
	body := map[string]any{"ip": ip, "subdomain": sub}
	for k, v := range extra {
		body[k] = v
	}
	h := s.must(201, "POST", "/api/v1/hostnames", key, body)
	return h.str("id"), h.str("hostname")
}

// diagChallenge writes one DNS-01 value for hostname id through a
// credential, as an acme-dns client does.
func (s *server) diagChallenge(t *testing.T, key, id string) {
	t.Helper()
	s.acmeUpdate(t, s.acmeCredential(t, key, id), acmeValue())
}

// Pass and fail of every check, and unknown of dns01, caa and certificate,
// on one server whose nameserver, resolver and CT log all answer.
func TestDiagnoseChecks(t *testing.T) {
	t.Parallel()
	dnsPort := freePort(t)
	res := diagStartResolver(t, fmt.Sprintf("127.0.0.1:%d", dnsPort))
	ct := diagStartCTLog(t)
	noCA := "http://" + diagClosed(t) + "/directory" // never asked: no csr is posted
	s := start(t, options{profile: 2, dnsPort: dnsPort, extra: []string{
		certKeyFile(t),
		"acme_ca letsencrypt " + noCA,
		"acme_ca google " + noCA,
		"resolver " + res.addr,
		"ct_log " + ct.url,
		"diagnose_per_minute 100",
	}})

	// ok.example.net: signed, its DS found by the resolver.
	// bad.example.net: signed, the resolver finds a wrong DS; a CAA policy
	// allows Let's Encrypt only.
	// plain.example.net: not signed.
	_, okKey := s.team(t, "ok.example.net")
	_, badKey := s.team(t, "bad.example.net")
	_, plainKey := s.team(t, "plain.example.net")
	okDS := s.diagSign(t, "ok.example.net")
	res.setDS("ok.example.net", okDS)
	badDS := s.diagSign(t, "bad.example.net")
	wrong := *badDS
	wrong.Hdr.Name = "bad.example.net."
	wrong.Digest = strings.Repeat("0", len(badDS.Digest))
	res.setDS("bad.example.net", &wrong)
	s.must(200, "PATCH", "/api/admin/domains/"+s.domainID(t, "bad.example.net"), s.admin,
		map[string]any{"caa": []string{`0 issue "letsencrypt.org"`}})

	type host struct{ id, name, ip, key string }
	mint := func(key, sub, ip string, extra map[string]any) host {
		id, name := s.diagMint(t, key, sub, ip, extra)
		s.live(t, key, id)
		s.resolves(name, dns.TypeA, ip)
		return host{id, name, ip, key}
	}
	csr := func(ca string) map[string]any { return map[string]any{"certificate": "csr", "ca": ca} }
	caa := func(h host, value string) {
		s.must(201, "POST", recPath(h.id), h.key, map[string]any{"type": "CAA", "tag": "issue", "value": value})
		s.resolves(h.name, dns.TypeA, h.ip)
	}

	// Everything passes: a self hostname with a challenge written, no CAA,
	// a validating zone, resolvers that agree and a current certificate.
	all := mint(okKey, "all", "198.41.0.4", nil)
	s.diagChallenge(t, okKey, all.id)
	ct.set(all.name, "current")
	t.Run("all pass", func(t *testing.T) {
		r := s.diagnose(t, okKey, all.id)
		r.expect(t, all.name, map[string]diagWant{
			"record":      diagPass("1 nameserver(s) serve [198.41.0.4]"),
			"nameservers": diagPass("answer authoritatively"),
			"dns01":       diagPass("written at 20"),
			"caa":         diagPass("no CAA record"),
			"dnssec":      diagPass(fmt.Sprintf("DS %d", okDS.KeyTag)),
			"resolvers":   diagPass("1 resolver(s) see [198.41.0.4]"),
			"certificate": diagPass("Let's Encrypt"),
		})
		if res.seen("ok.example.net", dns.TypeDS) == 0 || res.seen(all.name, dns.TypeA) == 0 || ct.seen(all.name) == 0 {
			t.Errorf("the report did not ask the resolver (DS %d, A %d) and the CT log (%d)",
				res.seen("ok.example.net", dns.TypeDS), res.seen(all.name, dns.TypeA), ct.seen(all.name))
		}
	})

	// The service runs the certificate (csr, Google) and a challenge was
	// written; the hostname's own CAA allows pki.goog; the log holds an
	// expired certificate and a newer current one.
	goog := mint(okKey, "goog", "198.41.0.5", csr("google"))
	caa(goog, "pki.goog")
	s.diagChallenge(t, okKey, goog.id)
	ct.set(goog.name, "renewed")
	t.Run("csr with CAA pass", func(t *testing.T) {
		s.diagnose(t, okKey, goog.id).expect(t, goog.name, map[string]diagWant{
			"record":      diagPass("serve"),
			"nameservers": diagPass(""),
			"dns01":       diagPass("written at"),
			"caa":         diagPass("CAA allows pki.goog (google)"),
			"dnssec":      diagPass(""),
			"resolvers":   diagPass(""),
			"certificate": diagPass(""),
		})
	})

	// The service runs a Let's Encrypt certificate but never wrote a
	// challenge; the hostname's own CAA (pki.goog) replaces the domain's
	// policy and refuses Let's Encrypt; the parent's DS is not the zone's
	// key; the resolver sees another address; the log holds only expired
	// certificates.
	f1 := mint(badKey, "fails", "198.41.0.6", csr("letsencrypt"))
	caa(f1, "pki.goog")
	res.lie(f1.name, "192.0.2.99")
	ct.set(f1.name, "expired")
	t.Run("fails", func(t *testing.T) {
		s.diagnose(t, badKey, f1.id).expect(t, f1.name, map[string]diagWant{
			"record":      diagPass(""),
			"nameservers": diagPass(""),
			"dns01":       diagFail("never wrote a DNS-01 challenge", "certificate"),
			"caa":         diagFail("refuses letsencrypt.org (letsencrypt)", `0 issue "letsencrypt.org"`),
			"dnssec":      diagFail(fmt.Sprintf("no DS for bad.example.net matching key %d", badDS.KeyTag), badDS.String()),
			"resolvers":   diagFail("sees [192.0.2.99]", "TTL"),
			"certificate": diagFail("expired", "renew"),
		})
	})

	// Without a CAA of its own, the domain's policy decides: it allows
	// Let's Encrypt. The log knows no certificate at all.
	le := mint(badKey, "lets", "198.41.0.7", csr("letsencrypt"))
	ct.set(le.name, "empty")
	t.Run("policy pass, no certificate", func(t *testing.T) {
		s.diagnose(t, badKey, le.id).expect(t, le.name, map[string]diagWant{
			"record":      diagPass(""),
			"nameservers": diagPass(""),
			"dns01":       diagFail("never wrote", ""),
			"caa":         diagPass("CAA allows letsencrypt.org (letsencrypt)"),
			"dnssec":      diagFail("no DS", "publish at the parent"),
			"resolvers":   diagPass(""),
			"certificate": diagFail("knows no certificate", "obtain a certificate"),
		})
	})

	// The caller's own certificate (self): no challenge tells nothing, the
	// CA it uses is not known against the policy, and the log errs.
	self := mint(badKey, "self", "198.41.0.8", nil)
	ct.set(self.name, "error")
	t.Run("unknowns", func(t *testing.T) {
		s.diagnose(t, badKey, self.id).expect(t, self.name, map[string]diagWant{
			"record":      diagPass(""),
			"nameservers": diagPass(""),
			"dns01":       diagUnknownAct("no DNS-01 challenge value was ever written", "acme-credential"),
			"caa":         diagUnknownAct("letsencrypt.org", "letsencrypt.org"),
			"dnssec":      diagFail("no DS", "publish at the parent"),
			"resolvers":   diagPass(""),
			"certificate": diagUnknown("500"),
		})
	})

	// An unsigned domain fails DNSSEC; a log answering something that is
	// not a JSON list is unknown.
	plain := mint(plainKey, "unsigned", "198.41.0.9", nil)
	ct.set(plain.name, "garbage")
	t.Run("unsigned", func(t *testing.T) {
		s.diagnose(t, plainKey, plain.id).expect(t, plain.name, map[string]diagWant{
			"record":      diagPass(""),
			"nameservers": diagPass(""),
			"dns01":       diagUnknownAct("", ""),
			"caa":         diagPass("no CAA record"),
			"dnssec":      diagFail("is not signed", "enable DNSSEC for plain.example.net"),
			"resolvers":   diagPass(""),
			"certificate": diagUnknown("not a JSON list"),
		})
	})
}

// A second nameserver that refuses fails record and nameservers; a resolver
// that never answers leaves resolvers and DNSSEC unknown; an unreachable
// CT log leaves certificate unknown; the call stays within the budget.
func TestDiagnoseUnreachable(t *testing.T) {
	t.Parallel()
	closedNS, silentRes, closedCT := diagClosed(t), diagSilent(t), diagClosed(t)
	const budget = time.Second
	s := start(t, options{profile: 2, extra: []string{
		certKeyFile(t),
		"nameserver ns2.example.org " + closedNS,
		"resolver " + silentRes,
		"ct_log http://" + closedCT,
		"diagnose_budget " + budget.String(),
	}})
	_, key := s.team(t, "down.example.net")
	s.diagSign(t, "down.example.net")
	id, name := s.diagMint(t, key, "web", "198.41.0.10", nil) // pending: ns2 never serves it
	s.resolves(name, dns.TypeA, "198.41.0.10")

	r := s.diagnose(t, key, id)
	r.expect(t, name, map[string]diagWant{
		"record":      diagFail("ns2.example.org refused the connection", "every nameserver"),
		"nameservers": diagFail("ns2.example.org", "start the nameservers"),
		"dns01":       diagUnknownAct("", "acme-credential"),
		"caa":         diagPass(""),
		"dnssec":      diagUnknown(""),
		"resolvers":   diagUnknown(""),
		"certificate": diagUnknown(""),
	})
	if d := r.byID["certificate"].Detail; !strings.Contains(d, "the CT log refused the connection") {
		t.Errorf("certificate detail %q does not say, in words, that the log refused the connection", d)
	}
	// A report shows nameservers by name and resolvers by label: never the
	// service's own socket addresses or dial errors.
	for id, c := range r.byID {
		for _, leak := range []string{"127.0.0.1", "dial ", "read udp", closedNS, silentRes, closedCT} {
			if strings.Contains(c.Detail+c.Action, leak) {
				t.Errorf("check %s shows %q: %s / %s", id, leak, c.Detail, c.Action)
			}
		}
	}
	if r.elapsed > budget+2*time.Second {
		t.Errorf("the call took %s with a budget of %s", r.elapsed, budget)
	}
	t.Logf("report in %s", r.elapsed.Round(time.Millisecond))
}

// A nameserver that never answers: record and nameservers run out of the
// shared budget and are unknown (no action), and the whole call ends with
// the budget. Without resolvers or a CT log, DNSSEC, resolvers and
// certificate cannot tell either.
func TestDiagnoseBudget(t *testing.T) {
	t.Parallel()
	silent := diagSilent(t)
	const budget = 300 * time.Millisecond
	s := start(t, options{profile: 2, extra: []string{
		certKeyFile(t),
		"nameserver ns2.example.org " + silent,
		"diagnose_budget " + budget.String(),
		"diagnose_per_minute 60", // room for the reports below
	}})
	_, key := s.team(t, "slow.example.net")
	s.diagSign(t, "slow.example.net")
	id, name := s.diagMint(t, key, "web", "198.41.0.11", nil)
	s.resolves(name, dns.TypeA, "198.41.0.11")

	wants := map[string]diagWant{
		"record":      diagUnknown("budget"),
		"nameservers": diagUnknown("budget"),
		"dns01":       diagUnknownAct("", ""),
		"caa":         diagPass(""),
		"dnssec":      diagUnknown("signatures verify, but no resolver is configured"),
		"resolvers":   diagUnknown("no resolver is configured"),
		"certificate": diagUnknown("no certificate-transparency log is configured"),
	}
	// A query cut off by the budget's deadline must read unknown, every time
	// (it once raced with the check's own i/o timeout and came out fail).
	for n := 0; n < 5; n++ {
		r := s.diagnose(t, key, id)
		if r.Hostname != name || !slices.Equal(r.ids(), diagOrder) {
			t.Fatalf("report of %s: hostname %q, checks %v", name, r.Hostname, r.ids())
		}
		if r.elapsed < budget || r.elapsed > budget+1500*time.Millisecond {
			t.Errorf("the call took %s, want the budget %s (+ slack)", r.elapsed, budget)
		}
		for cid, w := range wants {
			r.expectOne(t, cid, w)
		}
		if !strings.HasPrefix(r.Summary, name) || !strings.Contains(r.Summary, "(record, nameservers, dns01, dnssec, resolvers, certificate)") {
			t.Errorf("summary %q does not name the six unknown checks", r.Summary)
		}
	}
}

// A released, suspended or terminated hostname gets its state as the only
// check; keys that do not reach it get 401, 403 or 404.
func TestDiagnoseState(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2})
	team, key := s.team(t, "state.example.net")
	_, otherKey := s.team(t, "elsewhere.example.net")
	mint := func(sub string) (string, string) {
		id, name := s.diagMint(t, key, sub, "198.41.0.12", nil)
		s.live(t, key, id)
		return id, name
	}
	rel, relName := mint("rel")
	sus, susName := mint("sus")
	term, termName := mint("term")
	live, _ := mint("live")
	s.must(200, "DELETE", "/api/v1/hostnames/"+rel, key, nil)
	s.must(200, "POST", "/api/admin/hostnames/"+sus+"/suspend", s.admin, nil)
	s.must(200, "POST", "/api/admin/hostnames/"+term+"/terminate", s.admin, nil)

	for _, tc := range []struct {
		state, id, name, detail, action string
	}{
		{"released", rel, relName, "was released", "register a new hostname"},
		{"suspended", sus, susName, "is suspended", "contact the operator"},
		{"terminated", term, termName, "was terminated", ""},
	} {
		t.Run(tc.state, func(t *testing.T) {
			r := s.diagnose(t, key, tc.id)
			if r.Hostname != tc.name || !slices.Equal(r.ids(), []string{"state"}) {
				t.Fatalf("report of %s: hostname %q, checks %v, want %s with the state check alone", tc.state, r.Hostname, r.ids(), tc.name)
			}
			c := r.Checks[0]
			if c.Verdict != "fail" || !strings.Contains(c.Detail, tc.detail) {
				t.Errorf("state check %+v, want fail with %q", c, tc.detail)
			}
			if c.HasAction != (tc.action != "") || !strings.Contains(c.Action, tc.action) {
				t.Errorf("state check action %q (present %v), want %q", c.Action, c.HasAction, tc.action)
			}
			if !strings.Contains(r.Summary, tc.name+" is "+tc.state) {
				t.Errorf("summary %q does not say %s is %s", r.Summary, tc.name, tc.state)
			}
		})
	}

	t.Run("access", func(t *testing.T) {
		problemIs := func(what string, r response, status int, code string) {
			t.Helper()
			if r.status != status || r.str("code") != code {
				t.Errorf("%s: %d %s, want %d %s", what, r.status, r.raw, status, code)
			}
		}
		problemIs("no key", s.do("GET", diagPath(live), "", nil), 401, "UNAUTHORIZED")
		problemIs("wrong key", s.do("GET", diagPath(live), "hm_not_a_key", nil), 401, "UNAUTHORIZED")
		writeOnly := s.key(t, team, []map[string]any{{"scope": "hostnames:write"}, {"scope": "dns01:write"}})
		problemIs("key without hostnames:read", s.do("GET", diagPath(live), writeOnly, nil), 403, "FORBIDDEN")
		narrowed := s.key(t, team, []map[string]any{{"scope": "hostnames:read", "hostname": sus}})
		problemIs("hostnames:read on another hostname", s.do("GET", diagPath(live), narrowed, nil), 403, "FORBIDDEN")
		problemIs("another team's hostname", s.do("GET", diagPath(live), otherKey, nil), 404, "NOT_FOUND")
		problemIs("no such hostname", s.do("GET", diagPath("h_doesnotexist"), key, nil), 404, "NOT_FOUND")
		// The narrowed key reaches its own hostname.
		if r := s.diagnose(t, narrowed, sus); r.Checks[0].ID != "state" {
			t.Errorf("narrowed key on its hostname: %+v", r.Checks)
		}
	})
}

// Past diagnose_per_minute a team gets 429 RATE_LIMITED with Retry-After;
// another team is not held back.
func TestDiagnoseRateLimit(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2, extra: []string{"diagnose_per_minute 2", "diagnose_budget 500ms"}})
	_, key := s.team(t, "busy.example.net")
	_, otherKey := s.team(t, "idle.example.net")
	id, _ := s.diagMint(t, key, "web", "198.41.0.13", nil)
	other, _ := s.diagMint(t, otherKey, "web", "198.41.0.14", nil)
	s.live(t, key, id)
	s.live(t, otherKey, other)

	for range 2 {
		s.diagnose(t, key, id)
	}
	r := s.do("GET", diagPath(id), key, nil)
	rateLimited(t, r, "diagnose")
	s.diagnose(t, otherKey, other)
	// Still limited a moment later, with a Retry-After again.
	rateLimited(t, s.do("GET", diagPath(id), key, nil), "diagnose")
}
