package e2e

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

// DNS UPDATE's prerequisites (RFC 2136 3.2) ask about the zone as DNS
// serves it: a prerequisite on what dig shows must hold. Zones holding
// every kind of content are built through the API; then at every name and
// type DNS is asked over TCP, and signed prerequisite-only messages are
// held to its answer: yxrrset (class ANY, rdlength 0) holds iff DNS answered
// the type, nxrrset (class NONE) iff it did not, the RRset DNS answered holds
// as a value-dependent prerequisite (and with one record more it does not),
// yxdomain (ANY ANY) holds iff the name is in use, nxdomain (NONE ANY) iff
// it is not. In use is RFC 2136 2.4.4's: at least one RR is owned by the
// name, so an empty non-terminal (NODATA in DNS, not NXDOMAIN) is not in
// use, as BIND and Knot judge it. Such a message changes nothing: the serial stays. Every
// disagreement is reported at once, so that the list says what a
// projection of the zone must serve to UPDATE as to DNS.

// pqTypes are the types asked at every name.
var pqTypes = []uint16{dns.TypeSOA, dns.TypeNS, dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeCAA, dns.TypeMX,
	dns.TypeSRV, dns.TypeTLSA, dns.TypeSSHFP, dns.TypeHTTPS, dns.TypeSVCB, dns.TypeCNAME, dns.TypeDHCID}

// pqOther is, for each type, data no name of the walk serves.
var pqOther = map[uint16]string{
	dns.TypeSOA: "ns.invalid. h.invalid. 1 2 3 4 5", dns.TypeNS: "ns.invalid.", dns.TypeA: "192.0.2.1",
	dns.TypeAAAA: "2001:db8::1", dns.TypeTXT: `"other"`, dns.TypeCAA: `0 issue "ca.invalid"`, dns.TypeMX: "10 mx.invalid.",
	dns.TypeSRV: "1 1 1 srv.invalid.", dns.TypeTLSA: "3 1 1 " + recSHA256b, dns.TypeSSHFP: "4 2 " + recSHA256b,
	dns.TypeHTTPS: "1 . alpn=h2", dns.TypeSVCB: "1 svc.invalid.", dns.TypeCNAME: "c.invalid.",
	dns.TypeDHCID: "AAIBY2/AuCccgoJbsaxcQc9TUapptP69lOjxfNuVAA2kjEA=",
}

// pqZone is a zone to walk: its names, and a key of the team (or account)
// that holds them.
type pqZone struct {
	zone  string
	key   tsigKey
	names []string
}

// pqWalk walks zones of one server.
type pqWalk struct {
	t     *testing.T
	s     *server
	id    atomic.Uint32 // message ids, each message's own: no two MACs alike
	renew func()        // [P1] keeps the live hostnames from expiring; nil: nothing to keep
	found []string      // the disagreements
	names int           // names walked
	sent  int           // prerequisite-only messages sent
}

func TestPrereqDifferential(t *testing.T) {
	for _, profile := range []int{1, 2} {
		for _, d := range storagetest.Dialects {
			t.Run(fmt.Sprintf("P%d/%s", profile, d), func(t *testing.T) {
				t.Parallel()
				o := updateOptions(t, d, profile)
				w := &pqWalk{t: t}
				var zones []pqZone
				if profile == 1 {
					o.idle = "6s" // cheap expiry: the others are renewed as the walk goes
					w.s = start(t, o)
					zones = w.p1()
				} else {
					o.dnsPort = freePort(t)
					o.extra = append(o.extra, recKeyLine(t), // TLSA needs a signed zone
						fmt.Sprintf("nameserver ns1.%s 127.0.0.1:%d", pqTeamDomain, o.dnsPort))
					w.s = start(t, o)
					zones = w.p2()
				}
				began := time.Now()
				for _, z := range zones {
					for _, name := range z.names {
						w.name(z, name)
					}
				}
				t.Logf("%d zones, %d names, %d prerequisite-only messages in %s", len(zones), w.names, w.sent, time.Since(began).Round(time.Millisecond))
				if len(w.found) > 0 {
					t.Errorf("%d prerequisites disagree with DNS:\n%s", len(w.found), strings.Join(w.found, "\n"))
				}
			})
		}
	}
}

const pqTeamDomain = "pq.example.net"

// p1 fills the pool domain example.org: its CAA policy, hostnames with an
// IPv4 and an IPv6 address, DNS-01 values (three published: DNS serves the
// two newest), a released hostname and an expired one.
func (w *pqWalk) p1() []pqZone {
	t, s := w.t, w.s
	acct, key := s.account("pro")
	mint := func(label, ip string) string {
		return s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": ip, "label": label}).str("id")
	}
	old := mint("old", "198.41.0.9") // first: it expires while the rest is built
	four, six := mint("four", "198.41.0.4"), mint("six", "2606:4700::6")
	last := time.Now()
	w.renew = func() {
		if time.Since(last) < 2*time.Second {
			return
		}
		for _, id := range []string{four, six} {
			s.must(200, "POST", "/api/v1/hostnames/"+id+"/renew", key, nil)
		}
		last = time.Now()
	}
	s.must(200, "DELETE", "/api/v1/hostnames/"+mint("gone", "198.41.0.7"), key, nil)
	w.policy("example.org")
	cred := s.acmeCredential(t, key, four)
	for range 3 {
		s.acmeUpdate(t, cred, acmeValue())
	}
	k := s.tsig("/api/admin/accounts/"+acct+"/tsig-keys", s.admin, nil)
	s.resolves("four.example.org", dns.TypeA, "198.41.0.4")
	eventually(t, 15*time.Second, func() bool {
		w.renew()
		return s.lookup("old.example.org", dns.TypeA) == "NXDOMAIN"
	}, "hostname %s never expired", old)
	return []pqZone{{zone: "example.org", key: k, names: pqNames("example.org",
		"", "ns1", "x.ns1", "four", "six", "_acme-challenge.four", "_acme-challenge.six", "x.four",
		"gone", "old", "missing", "x.missing")}}
}

// p2 fills a team's domain: its CAA policy, a nameserver inside it,
// hostnames with IPv4, IPv6 and both, one with a record of every type at
// it and below it (an empty non-terminal between), DNS-01 values, a
// released hostname and a suspended one with records; and walks the pool
// domain beside it.
func (w *pqWalk) p2() []pqZone {
	t, s, d := w.t, w.s, pqTeamDomain
	team, key := s.team(t, d)
	host := func(sub string, addrs ...string) string {
		id := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"subdomain": sub, "ip": addrs[0]}).str("id")
		if len(addrs) > 1 { // dual stack, as a router sends it (dyndns2)
			if a := s.dyn(t, "/nic/update", key, "hostname="+sub+"."+d+"&myip="+strings.Join(addrs, ","), nil); !strings.HasPrefix(a.body, "good") {
				t.Fatalf("dyndns2 %s %v: %s", sub, addrs, a.body)
			}
		}
		s.live(t, key, id)
		return id
	}
	record := func(id string, body recObj) { s.must(201, "POST", recPath(id), key, body) }
	w.policy(d)
	host("four", "198.41.0.4")
	host("six", "2606:4700::6")
	host("duo", "198.41.0.5", "2606:4700::5")
	web := host("web", "198.41.0.8")
	tlsa := recObj{"type": "TLSA", "name": "_443._tcp", "usage": 3, "selector": 1, "matching_type": 1, "association": recSHA256}
	s.recSign(t, d, recPath(web), key, tlsa)
	for _, body := range []recObj{
		tlsa,
		{"type": "TXT", "text": "v=spf1 -all"},
		{"type": "CAA", "flags": 0, "tag": "issue", "value": "pki.goog"},
		{"type": "MX", "preference": 10, "exchange": "mail.example.org"},
		{"type": "HTTPS", "priority": 1, "target": ".", "params": recObj{"alpn": []string{"h2", "h3"}, "port": 8443}},
		{"type": "SRV", "name": "_sip._tcp", "priority": 10, "weight": 60, "port": 5060, "target": "sip.example.org"},
		{"type": "SSHFP", "name": "ssh", "algorithm": 4, "fptype": 2, "fingerprint": recSHA256},
		{"type": "SVCB", "name": "_dns", "priority": 1, "target": "dns.example.org", "params": recObj{"alpn": []string{"dot"}, "port": 853}},
		{"type": "TXT", "name": "_info", "text": "one"},
		{"type": "TXT", "name": "_info", "text": "two"},
	} {
		record(web, body)
	}
	cred := s.acmeCredential(t, key, s.pqID(key, "four."+d))
	for range 3 {
		s.acmeUpdate(t, cred, acmeValue())
	}
	gone := host("gone", "198.41.0.7")
	record(gone, recObj{"type": "TXT", "name": "_info", "text": "gone"})
	s.must(200, "DELETE", "/api/v1/hostnames/"+gone, key, nil)
	held := host("held", "198.41.0.6")
	record(held, recObj{"type": "TXT", "name": "_info", "text": "held"})
	s.acmeUpdate(t, s.acmeCredential(t, key, held), acmeValue())
	s.must(200, "POST", "/api/admin/hostnames/"+held+"/suspend", s.admin, nil)
	s.resolves("held."+d, dns.TypeA, "NXDOMAIN")

	k := s.tsig("/api/v1/tsig-keys", key, nil)
	pool := s.tsig("/api/admin/accounts/"+team+"/tsig-keys", s.admin, nil)
	return []pqZone{
		{zone: d, key: k, names: pqNames(d, "", "ns1", "x.ns1",
			"four", "six", "duo", "web", "_tcp.web", "_443._tcp.web", "_sip._tcp.web", "ssh.web", "_dns.web", "_info.web", "nope.web",
			"_acme-challenge.four", "_acme-challenge.six", "gone", "_info.gone", "held", "_info.held", "_acme-challenge.held",
			"missing", "x.missing")},
		{zone: "example.org", key: pool, names: pqNames("example.org", "", "ns1", "missing", "x.missing")},
	}
}

// pqNames are labels under zone ("" the apex itself).
func pqNames(zone string, labels ...string) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = strings.TrimPrefix(l+"."+zone, ".")
	}
	return out
}

// policy sets a CAA policy of two entries on domain.
func (w *pqWalk) policy(domain string) {
	w.s.must(200, "PATCH", "/api/admin/domains/"+w.s.recDomainID(w.t, domain), w.s.admin,
		map[string]any{"caa": []string{`0 issue "letsencrypt.org"`, `0 iodef "mailto:security@example.net"`}})
}

// pqID is the id of the hostname named name in key's list.
func (s *server) pqID(key, name string) string {
	for _, h := range s.must(200, "GET", "/api/v1/hostnames", key, nil).body["hostnames"].([]any) {
		if h := h.(map[string]any); h["hostname"] == name {
			return h["id"].(string)
		}
	}
	s.t.Fatalf("no hostname %s", name)
	return ""
}

// pqServed is what DNS serves at a name for a type: the rcode, and the
// answer's RRs of that type at that name.
type pqServed struct {
	rcode int
	rrs   []dns.RR
	other string // anything else the answer holds, or a missing AA
}

func (a pqServed) String() string {
	if a.rcode != dns.RcodeSuccess {
		return dns.RcodeToString[a.rcode] + a.other
	}
	if len(a.rrs) == 0 {
		return "NODATA" + a.other
	}
	out := make([]string, len(a.rrs))
	for i, rr := range a.rrs {
		out[i] = strings.TrimSpace(recRdata(rr))
	}
	slices.Sort(out)
	return "[" + strings.Join(out, " | ") + "]" + a.other
}

func (w *pqWalk) ask(name string, qtype uint16) pqServed {
	m := w.s.query(name, qtype, "tcp")
	a := pqServed{rcode: m.Rcode}
	if !m.Authoritative {
		a.other += " (AA not set)"
	}
	for _, rr := range m.Answer {
		if h := rr.Header(); h.Rrtype == qtype && strings.EqualFold(h.Name, dns.Fqdn(name)) {
			a.rrs = append(a.rrs, rr)
		} else {
			a.other += " (also " + rr.String() + ")"
		}
	}
	return a
}

// serial is zone's SOA serial as DNS answers it.
func (w *pqWalk) serial(zone string) uint32 {
	for _, rr := range w.s.query(zone, dns.TypeSOA, "tcp").Answer {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa.Serial
		}
	}
	w.t.Fatalf("%s answers no SOA", zone)
	return 0
}

// prereq sends one signed message of prerequisites rrs only: its rcode, with the
// Extended DNS Error's text when one came.
func (w *pqWalk) prereq(z pqZone, rrs []dns.RR) string {
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(z.zone))
	m.Id = uint16(w.id.Add(1))
	m.Answer = rrs
	m.SetEdns0(1232, false) // for the Extended DNS Error's text
	w.sent++
	r, _, _ := signedAsk(w.t, w.s.dnsAddr, m, z.key, dns.HmacSHA256, time.Now(), 300)
	out := dns.RcodeToString[r.Rcode]
	if opt := r.IsEdns0(); opt != nil {
		for _, o := range opt.Option {
			if e, ok := o.(*dns.EDNS0_EDE); ok && e.ExtraText != "" {
				out += " (" + e.ExtraText + ")"
			}
		}
	}
	return out
}

// pqCheck is one prerequisite and the rcode DNS's answer calls for.
type pqCheck struct {
	what string
	rrs  []dns.RR
	want int
}

// pqEmpty is a prerequisite without rdata (RFC 2136 2.4): class ANY or NONE.
func pqEmpty(name string, t, class uint16) []dns.RR {
	return []dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: name, Rrtype: t, Class: class}}}
}

// name walks one name: every type, then its existence. A walk during which
// DNS changed its answer or the serial moved is walked again: a background
// write may land in it ([P1] a second after an idle expiry passes, it is
// recorded as a change for secondaries); a prerequisite that writes moves
// the serial each time.
func (w *pqWalk) name(z pqZone, name string) {
	fqdn := dns.Fqdn(name)
	var found []string
	for try := 0; try < 3; try++ {
		if w.renew != nil {
			w.renew()
		}
		found = found[:0]
		before := w.serial(z.zone)
		exists := map[bool][]string{} // whether DNS has the name: the types it said so for
		inUse := false                // some type answered: an RR is owned by the name
		changed := false
		for _, qtype := range pqTypes {
			served := w.ask(name, qtype)
			if served.other != "" {
				found = append(found, fmt.Sprintf("%s %s: DNS answers %s", name, dns.TypeToString[qtype], served))
			}
			nx := served.rcode == dns.RcodeNameError
			exists[!nx] = append(exists[!nx], dns.TypeToString[qtype])
			inUse = inUse || len(served.rrs) > 0
			checks := []pqCheck{
				{"yxrrset", pqEmpty(fqdn, qtype, dns.ClassANY), dns.RcodeNXRrset},
				{"nxrrset", pqEmpty(fqdn, qtype, dns.ClassNONE), dns.RcodeSuccess},
			}
			// The RRset whole, in one message (RFC 2136 3.2.3); with a
			// record more it no longer holds.
			rrset := make([]dns.RR, len(served.rrs))
			for i, rr := range served.rrs {
				rrset[i] = dns.Copy(rr)
				rrset[i].Header().Name, rrset[i].Header().Class, rrset[i].Header().Ttl = fqdn, dns.ClassINET, 0
			}
			if len(rrset) > 0 {
				checks[0].want, checks[1].want = dns.RcodeSuccess, dns.RcodeYXRrset
				checks = append(checks, pqCheck{"value-dependent", rrset, dns.RcodeSuccess})
			}
			more, err := dns.NewRR(fmt.Sprintf("%s 0 IN %s %s", fqdn, dns.TypeToString[qtype], pqOther[qtype]))
			if err != nil {
				w.t.Fatal(err)
			}
			checks = append(checks, pqCheck{"value-dependent with " + pqOther[qtype] + " more", append(rrset, more), dns.RcodeNXRrset})
			found = append(found, w.hold(z, name, dns.TypeToString[qtype], served.String(), checks)...)
			if after := w.ask(name, qtype); after.String() != served.String() {
				changed = true
			}
		}
		if len(exists) > 1 {
			found = append(found, fmt.Sprintf("%s: DNS itself disagrees whether it exists: NXDOMAIN for %v, not for %v", name, exists[false], exists[true]))
		}
		if _, nx := exists[false]; len(exists) == 1 {
			yx, none := dns.RcodeSuccess, dns.RcodeYXDomain
			answer := "in use"
			switch {
			case nx:
				yx, none, answer = dns.RcodeNameError, dns.RcodeSuccess, "NXDOMAIN"
			case !inUse:
				yx, none, answer = dns.RcodeNameError, dns.RcodeSuccess, "an empty non-terminal (no RR)"
			}
			found = append(found, w.hold(z, name, "ANY", answer, []pqCheck{
				{"yxdomain", pqEmpty(fqdn, dns.TypeANY, dns.ClassANY), yx},
				{"nxdomain", pqEmpty(fqdn, dns.TypeANY, dns.ClassNONE), none},
			})...)
		}
		if after := w.serial(z.zone); after != before {
			changed = true
			found = append(found, fmt.Sprintf("%s: the serial of %s moved from %d to %d while only prerequisites were sent", name, z.zone, before, after))
		}
		if !changed {
			break
		}
	}
	w.found = append(w.found, found...)
	w.names++
}

// hold sends each check and reports those whose rcode is not the one wanted.
func (w *pqWalk) hold(z pqZone, name, qtype, served string, checks []pqCheck) []string {
	var out []string
	for _, c := range checks {
		if got := w.prereq(z, c.rrs); !strings.HasPrefix(got+" ", dns.RcodeToString[c.want]+" ") {
			out = append(out, fmt.Sprintf("%s %s %s: DNS %s, UPDATE %s (want %s)", name, qtype, c.what, served, got, dns.RcodeToString[c.want]))
		}
	}
	return out
}
