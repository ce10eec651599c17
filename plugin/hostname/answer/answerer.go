// Package answer makes every answer the hostname plugin gives to a
// question in its zones, as bytes: ServeDNS and fast_udp both ask its
// Answerer.
package answer

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
	"time"

	ednsopts "github.com/coredns/coredns/plugin/pkg/edns"
	"github.com/coredns/coredns/request"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/plugin/hostname/rrl"
	"github.com/hostmint/hostmint/served"
	"github.com/miekg/dns"
)

// The answerer makes every answer to a question in the plugin's zones, as
// bytes, and ServeDNS and fast_udp both ask it: it builds the message
// (answer.go), packs it once into an entry that holds the answer's bytes
// around its question, keeps the entry when those bytes do for every later
// query of the same name, type and flags (answercache.go), applies
// response_rate_limit and counts the answer. A query's answer is its entry
// copied around the query's own question, with the query's ID and RD bit
// (CD is cleared, RFC 4035 3.1.6): so the case of the name is the
// client's, byte for byte, on every path.

// Answerer answers from an index (answerer.go says how).
type Answerer struct {
	ix    *index.Index // what it answers from (set at start)
	rrl   *rrl.Limiter // response_rate_limit; nil: none
	cache *answerCache

	soaCfg     served.SOA                // the zones' SOA: contact and timers
	ns         []string                  // the apex's NS targets, FQDN
	static     map[string]index.AddrList // nameservers' addresses: lowercase FQDN -> addresses
	acmeDNS    string                    // acme_dns_domain, lowercase FQDN: it exists, holding nothing
	addressTTL uint32                    // of A and AAAA records
}

// MaxUDPSize caps a UDP answer whatever EDNS buffer the client claims: the
// DNS Flag Day 2020 size, BIND's, Knot's and NSD's default. A bigger
// datagram fragments (and fragments get lost or spoofed), and a query with
// a forged source and a 64KB buffer would draw a 20KB answer at its victim.
// A bigger answer goes TC, and the client asks again over TCP.
const MaxUDPSize = 1232

// Config is what an Answerer answers with besides its index.
type Config struct {
	SOA         served.SOA         // the zones' SOA: contact and timers
	Nameservers served.Nameservers // the apex's NS targets and their addresses
	ACMEDNS     string             // acme_dns_domain ("" for none): it exists, holding nothing
	AddressTTL  uint32             // of A and AAAA records
	Limiter     *rrl.Limiter       // response_rate_limit; nil: none
}

// New is an Answerer of cfg, answering from ix.
func New(cfg Config, ix *index.Index) *Answerer {
	a := &Answerer{ix: ix, rrl: cfg.Limiter, cache: newAnswerCache(), soaCfg: cfg.SOA, ns: cfg.Nameservers.Names,
		static: map[string]index.AddrList{}, addressTTL: cfg.AddressTTL}
	for name, addrs := range cfg.Nameservers.Addrs {
		a.static[name] = index.PackAddrs(addrs)
	}
	if cfg.ACMEDNS != "" {
		a.acmeDNS = dns.Fqdn(cfg.ACMEDNS)
	}
	return a
}

// SetIndex makes ix the index a answers from (a node's, once it starts).
func (a *Answerer) SetIndex(ix *index.Index) { a.ix = ix }

// SetLimiter makes l a's response_rate_limit (nil: none); for tests.
func (a *Answerer) SetLimiter(l *rrl.Limiter) { a.rrl = l }

// Limits reports whether a has a response_rate_limit.
func (a *Answerer) Limits() bool { return a.rrl != nil }

// Nameservers are the apex's NS targets (FQDN), and the addresses of
// those a holds (lowercase FQDN -> addresses): not to be modified.
func (a *Answerer) Nameservers() ([]string, map[string]index.AddrList) { return a.ns, a.static }

// Query flags an answer's bytes depend on.
const (
	EDNS uint8 = 1 << iota // the query had an OPT: the answer has ours
	DO                     // and its DO bit
	CO                     // and its CO bit (RFC 9824 4): the answer's has it too
)

// Ask is a question as the answerer reads it, from a message (ServeDNS) or
// from a datagram (fast_udp).
type Ask struct {
	Name  string // lowercase FQDN; fast_udp's is not to be kept
	Wire  []byte // the name on the wire, as asked
	Qtype uint16
	Class uint16
	ID    uint16
	RD    bool  // copied into the answer; CD is not (RFC 4035 3.1.6)
	Flags uint8 // EDNS, DO
	Limit int   // the largest answer the client takes
	// Opts are the query's EDNS options a plugin registered (edns.
	// SupportedOption): the answer's OPT carries them, and its entry is
	// not kept.
	Opts []dns.EDNS0
}

// AskOf reads r, a query of one question, as the answerer does; wire is
// room for its name. False when its name does not pack.
func AskOf(r *dns.Msg, state request.Request, wire *[256]byte) (Ask, bool) {
	qn := r.Question[0]
	n, err := dns.PackDomainName(qn.Name, wire[:], 0, nil, false)
	if err != nil {
		return Ask{}, false
	}
	q := Ask{Name: state.Name(), Wire: wire[:n], Qtype: qn.Qtype, Class: qn.Qclass, ID: r.Id,
		RD: r.RecursionDesired, Limit: state.Size()}
	if state.Proto() == "udp" {
		q.Limit = min(q.Limit, MaxUDPSize)
	}
	if o := r.IsEdns0(); o != nil {
		q.Flags = EDNS
		if o.Do() {
			q.Flags |= DO
		}
		if o.Co() {
			q.Flags |= CO
		}
		for _, opt := range o.Option {
			if ednsopts.SupportedOption(opt.Option()) {
				q.Opts = append(q.Opts, opt)
			}
		}
	}
	return q, true
}

// keepable reports whether q's answer may come from, and go to, the cache:
// class IN, and nothing in its OPT but the flags.
func (q *Ask) keepable() bool { return q.Class == dns.ClassINET && q.Opts == nil }

// Respond appends to buf the answer to q, a question in z, and says its
// rcode; nil when response_rate_limit drops it. client is the query's
// source over UDP, the zero Addr over TCP (never limited).
func (a *Answerer) Respond(buf []byte, q *Ask, z *index.Zone, client netip.Addr) ([]byte, int) {
	now := time.Now()
	e := a.fit(a.entry(q, z, now), q, func() *dns.Msg { return a.build(q, z, capitals(q.Wire), now) })
	return a.send(buf, q, e, z.Kind, z.Name, client)
}

// Message is respond's answer as a Message, for a writer that reads
// messages (a plugin before this one) or a signed query: built as the
// bytes are, never kept; nil when response_rate_limit drops it. owner is
// the name as asked.
func (a *Answerer) Message(q *Ask, owner string, z *index.Zone, client netip.Addr) *dns.Msg {
	m := a.build(q, z, owner, time.Now())
	return a.sendMessage(q, m, z.Kind, z.Name, client)
}

// RespondMsg is respond for m, an answer to q built elsewhere (the
// catalog's), from zone of kind.
func (a *Answerer) RespondMsg(buf []byte, q *Ask, m *dns.Msg, kind, zone string, client netip.Addr) ([]byte, int) {
	a.finish(m, q)
	e := a.fit(a.pack(m, q, true), q, func() *dns.Msg { return m })
	return a.send(buf, q, e, kind, zone, client)
}

// fit is e, or when it is too big for q's client the message rebuild
// makes (the same answer) truncated to fit: the client asks again over
// TCP.
func (a *Answerer) fit(e *entry, q *Ask, rebuild func() *dns.Msg) *entry {
	if e.size(q) <= q.Limit {
		return e
	}
	m := rebuild()
	truncate(m, q.Limit)
	return a.pack(m, q, true)
}

// truncate fits m into limit as dns.Msg.Truncate does, except that the
// additional section's RRSIGs go first and alone do not set TC: a server
// MUST NOT set TC only because they did not fit (RFC 4035 3.1.1), while a
// missing glue address (RFC 9471) or anything of the answer or authority
// does set it.
func truncate(m *dns.Msg, limit int) {
	slices.SortStableFunc(m.Extra, func(x, y dns.RR) int {
		return cmp.Compare(rank(x), rank(y))
	})
	whole, others := len(m.Answer)+len(m.Ns), len(m.Extra)-sigs(m.Extra)
	m.Truncate(limit)
	if m.Truncated && len(m.Answer)+len(m.Ns) == whole && len(m.Extra)-sigs(m.Extra) == others {
		m.Truncated = false
	}
}

// rank orders an additional section for truncate: RRSIGs after the rest.
func rank(rr dns.RR) int {
	if rr.Header().Rrtype == dns.TypeRRSIG {
		return 1
	}
	return 0
}

func sigs(rrs []dns.RR) int {
	n := 0
	for _, rr := range rrs {
		n += rank(rr)
	}
	return n
}

// send appends e, the answer to q from zone of kind, to buf around q's
// question, rate limited and counted; the rate limit's truncated reply
// instead when it slips, nil when it drops.
func (a *Answerer) send(buf []byte, q *Ask, e *entry, kind, zone string, client netip.Addr) ([]byte, int) {
	if ok, slip := a.pass(buf, q, e.rcode, e.answered, kind, zone, client); !ok {
		return slip, e.rcode
	}
	return e.splice(buf, q), e.rcode
}

// sendMessage is message for m, built (and finished) for q: sized for the
// client, rate limited and counted.
func (a *Answerer) sendMessage(q *Ask, m *dns.Msg, kind, zone string, client netip.Addr) *dns.Msg {
	m.Id, m.RecursionDesired, m.CheckingDisabled, m.Compress = q.ID, q.RD, false, true
	if m.Len() > q.Limit {
		// Len counts escaped TXT and CAA text (\DDD) as written, not as
		// sent: only a message that really does not fit is truncated.
		if p, err := m.Pack(); err != nil || len(p) > q.Limit {
			truncate(m, q.Limit)
		}
	}
	ok, slip := a.pass(nil, q, m.Rcode, len(m.Answer) > 0, kind, zone, client)
	switch {
	case ok:
		return m
	case slip == nil:
		return nil
	}
	t := new(dns.Msg)
	if t.Unpack(slip) != nil {
		return nil
	}
	return t
}

// pass applies response_rate_limit to an answer with rcode to q from zone
// (answered: it has answer records), and counts it when it is sent; false
// when it is not, with the truncated reply to send instead (appended to
// buf) when it slips.
func (a *Answerer) pass(buf []byte, q *Ask, rcode int, answered bool, kind, zone string, client netip.Addr) (bool, []byte) {
	if a.rrl != nil && client.IsValid() {
		switch a.verdict(client, q, rcode, answered, zone) {
		case rrl.Drop:
			rrlDropped.Inc()
			return false, nil
		case rrl.Slip:
			rrlSlipped.Inc()
			return false, a.slip(buf, q, rcode, zone != "")
		}
	}
	// Counted before it is sent: a client that has its answer finds it
	// counted (a scrape right after an answer must see it).
	Count(rcode, q.Qtype, kind)
	return true, nil
}

// Refusal is the answer to q that is rcode alone (REFUSED, NOTIMP), from
// zone ("" for none) of kind, rate limited and counted.
func (a *Answerer) Refusal(buf []byte, q *Ask, rcode int, kind, zone string, client netip.Addr) []byte {
	m := new(dns.Msg)
	m.Response, m.Rcode = true, rcode
	m.Question = []dns.Question{{Name: ".", Qtype: q.Qtype, Qclass: q.Class}}
	a.finish(m, q)
	if ok, slip := a.pass(buf, q, rcode, false, kind, zone, client); !ok {
		return slip
	}
	return a.pack(m, q, false).splice(buf, q)
}

// verdict is response_rate_limit's on an answer with rcode to q from zone
// (answered: it has answer records).
func (a *Answerer) verdict(client netip.Addr, q *Ask, rcode int, answered bool, zone string) rrl.Verdict {
	class, name, qtype := rrl.Error, "", uint16(0)
	switch {
	case rcode == dns.RcodeSuccess && answered:
		class, name, qtype = rrl.Answer, strings.Clone(q.Name), q.Qtype // fast_udp's is not its to keep
	case rcode == dns.RcodeSuccess, rcode == dns.RcodeNameError:
		// NXDOMAIN, NODATA and a signed zone's denials (NOERROR with an
		// NSEC of the name's own): by zone, so that random names or types
		// share one allowance.
		class, name = rrl.NXDomain, zone
	}
	return a.rrl.Take(client, class, name, qtype)
}

// slip is response_rate_limit's truncated reply to q: its question with
// rcode, TC set, and our OPT when it had one, so that a real client asks
// again over TCP.
func (a *Answerer) slip(buf []byte, q *Ask, rcode int, authoritative bool) []byte {
	m := new(dns.Msg)
	m.Response, m.Authoritative, m.Truncated, m.Rcode = true, authoritative, true, rcode
	m.Question = []dns.Question{{Name: ".", Qtype: q.Qtype, Qclass: q.Class}}
	if q.Flags&EDNS != 0 {
		m.Extra = []dns.RR{a.opt(q)}
	}
	return a.pack(m, q, false).splice(buf, q)
}

// build is the answer to q in z, as a message whose question and owner
// names are owner: q's name in capitals for bytes (capitals says why).
func (a *Answerer) build(q *Ask, z *index.Zone, owner string, now time.Time) *dns.Msg {
	m := new(dns.Msg)
	m.Response, m.Authoritative = true, true
	m.Question = []dns.Question{{Name: owner, Qtype: q.Qtype, Qclass: q.Class}}
	a.answer(m, z, strings.Clone(q.Name), owner, q.Qtype, q.Flags&DO != 0, q.Flags&CO != 0, now)
	a.finish(m, q)
	return m
}

// finish gives m, an answer to q, our OPT when q had one.
func (a *Answerer) finish(m *dns.Msg, q *Ask) {
	if q.Flags&EDNS != 0 {
		m.Extra = append(m.Extra, a.opt(q))
	}
}

// opt is the OPT of an answer to q: our own buffer size, not an echo of
// the client's (RFC 6891 6.2.3), its DO and CO bits, the options a plugin
// registered, and no other flag (RFC 6891 6.1.4: the rest are zero).
func (a *Answerer) opt(q *Ask) *dns.OPT {
	o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}, Option: slices.Clone(q.Opts)}
	o.SetUDPSize(MaxUDPSize)
	if q.Flags&DO != 0 {
		o.SetDo()
	}
	if q.Flags&CO != 0 {
		o.SetCo()
	}
	return o
}

// capitals is the presentation form of the wire name w with its ASCII
// letters in capitals. An answer is packed with its question and owner
// names so: the owners point at the question, and follow the case a
// client asks in when the question is copied in; a name in the rdata (an
// MX or SRV target, lowercase as stored) never points at it, because
// compression matches names byte for byte.
func capitals(w []byte) string {
	up := make([]byte, len(w))
	for i := 0; i < len(w); {
		l := int(w[i])
		up[i] = w[i]
		for j := i + 1; j <= i+l && j < len(w); j++ {
			c := w[j]
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			up[j] = c
		}
		i += l + 1
		if l == 0 {
			break
		}
	}
	s, _, err := dns.UnpackDomainName(up, 0)
	if err != nil {
		return "."
	}
	return s
}
