package hostname

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"
	"github.com/coredns/coredns/request"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/served"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// The content FuzzAnswersProjection draws from: few labels, so that
// hostnames, records, DNS-01 names and the nameserver meet at one name.
const pjApex = "example.org."

var (
	pjHostLabels = []string{"a", "b", "c", "ns"}
	// Record names under a hostname ("" is the hostname's own name).
	pjRecLabels   = []string{"", "", "x", "_tcp", "_443._tcp", "y.x", "ns"}
	pjNameservers = []string{"ns", "a", "x.a", "ns.c"} // under pjApex
	pjStatuses    = []string{storage.StatusLive, storage.StatusLive, storage.StatusPending, storage.StatusReleased, storage.StatusSuspended}
	pjAddrs       = []string{"192.0.2.1", "2001:db8::1", "192.0.2.1,2001:db8::1", "", "::ffff:192.0.2.2,192.0.2.3"}
	pjPolicies    = []string{"", `["0 issue \"letsencrypt.org\""]`, `["0 issue \"ca.example\"","128 iodef \"mailto:sec@example.org\""]`}
	pjTypes       = []uint16{dns.TypeSOA, dns.TypeNS, dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeCAA, dns.TypeMX,
		dns.TypeSRV, dns.TypeTLSA, dns.TypeSSHFP, dns.TypeHTTPS, dns.TypeSVCB, dns.TypeCNAME}
)

// pjData is one record's stored form: each of fuzzRecords as records.Parse
// stores it, and one the projection cannot decode.
type pjData struct {
	typ  string
	data records.Data
	bad  bool
}

func pjDatas(tb testing.TB) []pjData {
	var out []pjData
	for _, rec := range parsedFuzzRecords(tb) {
		out = append(out, pjData{typ: rec.Type, data: rec.Data})
		for v := range 4 {
			b, _ := json.Marshal(pjVary(rec.Type, rec.Data, v))
			if _, err := records.Decode(rec.Type, b); err != nil {
				tb.Fatalf("variant %d of %s does not decode: %v", v, b, err)
			}
		}
	}
	return append(out, pjData{typ: "MX", bad: true})
}

// pjVary is d with one field changed by v (0: d), so that an RRset holds
// several records, some alike.
func pjVary(typ string, d records.Data, v int) records.Data {
	if v == 0 {
		return d
	}
	switch typ {
	case "TXT":
		if d.Strings != nil {
			d.Strings = append(slices.Clone(d.Strings), fmt.Sprint(v))
		}
		d.Text += fmt.Sprint(v)
	case "CAA":
		d.Value = fmt.Sprintf("ca%d.example", v)
	default:
		field := map[string]**int{"MX": &d.Preference, "SRV": &d.Port, "SSHFP": &d.Algorithm, "TLSA": &d.Usage,
			"HTTPS": &d.Priority, "SVCB": &d.Priority}[typ]
		*field = &v
	}
	return d
}

// pjInput hands out the fuzz input a byte at a time; 0 once it runs out.
type pjInput []byte

func (in *pjInput) pick(n int) int {
	if len(*in) == 0 {
		return 0
	}
	v := int((*in)[0]) % n
	*in = (*in)[1:]
	return v
}

// pjRows are the rows of one hostname as the change feed reads them.
type pjRows struct {
	h     *storage.Hostname
	recs  []storage.Record
	chals []storage.Challenge // newest id first
}

// pjContent is one zone's content: the Corefile's nameserver, the
// domain's CAA policy, and its hostnames' rows, with earlier versions of
// some applied before them as the feed applies changes.
type pjContent struct {
	nameserver string // Corefile lines
	policy     string
	earlier    []pjRows
	rows       []pjRows
	upper      bool // ask in upper case
}

func pjDraw(in *pjInput, datas []pjData, now int64) pjContent {
	c := pjContent{upper: in.pick(2) == 1, policy: pjPolicies[in.pick(len(pjPolicies))]}
	ns := pjNameservers[in.pick(len(pjNameservers))] + "." + strings.TrimSuffix(pjApex, ".")
	for i, a := range [][]string{{"192.0.2.53"}, {"2001:db8::53"}, {"192.0.2.53", "2001:db8::53"}}[in.pick(3)] {
		c.nameserver += fmt.Sprintf("nameserver %s %s\n", ns, a)
		if i == 0 {
			c.nameserver += "nameserver ns2.example.net\n" // outside the zone, no address
		}
	}
	held := map[string]bool{} // labels a hostname not released holds (the store's unique index)
	for i := range 1 + in.pick(5) {
		label := pjHostLabels[in.pick(len(pjHostLabels))]
		id := fmt.Sprintf("hn_%d", i)
		if in.pick(2) == 1 {
			c.earlier = append(c.earlier, pjHostname(in, datas, id, label, storage.StatusLive, now))
		}
		status := pjStatuses[in.pick(len(pjStatuses))]
		if held[label] {
			status = storage.StatusReleased
		}
		held[label] = held[label] || status != storage.StatusReleased
		c.rows = append(c.rows, pjHostname(in, datas, id, label, status, now))
	}
	return c
}

func pjHostname(in *pjInput, datas []pjData, id, label, status string, now int64) pjRows {
	addrs := pjAddrs[in.pick(len(pjAddrs))]
	ip, _, _ := strings.Cut(addrs, ",")
	h := &storage.Hostname{ID: id, Label: label, Name: label + "." + strings.TrimSuffix(pjApex, "."), IP: ip, Addrs: addrs, Status: status,
		ExpiresAt: []int64{0, now - time.Hour.Milliseconds(), now + time.Hour.Milliseconds()}[in.pick(3)]}
	r := pjRows{h: h}
	for k := range in.pick(6) {
		d := datas[in.pick(len(datas))]
		b, _ := json.Marshal(pjVary(d.typ, d.data, in.pick(4)))
		if d.bad {
			b = []byte(`{"exchange":`)
		}
		r.recs = append(r.recs, storage.Record{ID: fmt.Sprintf("%s_r%d", id, k), HostnameID: id, Type: d.typ, Data: string(b),
			Name: strings.TrimSuffix(records.Owner(h.Name, pjRecLabels[in.pick(len(pjRecLabels))]), ".")})
	}
	for k := range in.pick(4) {
		age := []time.Duration{time.Hour, 25 * time.Hour}[in.pick(2)] // served, or past records.ChallengeLife
		c := storage.Challenge{ID: int64(k), HostnameID: id, Value: strings.Repeat(string(rune('A'+in.pick(3))), 43),
			CreatedAt: now - age.Milliseconds() + int64(k)}
		r.chals = append([]storage.Challenge{c}, r.chals...)
	}
	return r
}

// load builds a handler for c and puts its rows in the index as the change
// feed applies them (Index.Apply): earlier versions first.
func (c pjContent) load(t *testing.T, now int64) *Handler {
	h := newTestHandler(t, c.nameserver, pjApex)
	(*h.index.Zones())[pjApex].CAA = served.Policy(&storage.Domain{Name: strings.TrimSuffix(pjApex, "."), CAA: c.policy})
	for _, r := range append(slices.Clone(c.earlier), c.rows...) {
		h.index.PutHostname(r.h, r.recs, r.chals, now)
	}
	return h
}

// projection is what package served says each name serves: the apex,
// the nameserver's name, the hostnames' names (lowercase FQDN).
type projection struct {
	apex    map[uint16][]dns.RR
	ns      served.Nameservers
	names   map[string]*served.Name
	policy  []dns.RR
	addrTTL uint32
	now     int64
}

func (c pjContent) project(h *Handler, now int64) *projection {
	p := &projection{ns: h.cfg.app.NameserverSet(), names: map[string]*served.Name{}, addrTTL: h.cfg.addressTTL, now: now,
		policy: served.Policy(&storage.Domain{Name: strings.TrimSuffix(pjApex, "."), CAA: c.policy})}
	p.apex = served.Apex(pjApex, p.ns, h.cfg.app.SOA, h.index.Serial(), p.policy)
	for _, r := range c.rows {
		own, below, ok := served.Hostname(r.h, r.recs, r.chals, nil)
		if !ok {
			continue
		}
		p.names[dns.Fqdn(r.h.Name)] = &own
		for name, n := range below {
			p.names[name] = n
		}
	}
	return p
}

// at is what name serves by type, in the order DNS answers decide it.
func (p *projection) at(name string) map[uint16][]dns.RR {
	switch n := p.names[name]; {
	case name == pjApex:
		return p.apex
	case p.ns.At(name) != nil:
		return p.ns.At(name)
	case n != nil && n.Live(p.now):
		return n.Served(name, p.policy, p.addrTTL)
	}
	return nil
}

// exists: the apex, a name serving something, or an empty non-terminal
// above one.
func (p *projection) exists(name string) bool {
	if name == pjApex || len(p.at(name)) > 0 {
		return true
	}
	below := append(slices.Collect(maps.Keys(p.names)), slices.Collect(maps.Keys(p.ns.Addrs))...)
	return slices.ContainsFunc(below, func(c string) bool { return c != name && dns.IsSubDomain(name, c) && len(p.at(c)) > 0 })
}

// names are the names asked: the apex, each hostname's, its DNS-01 name,
// every record's owner and the names between, the nameserver's and the
// names above it, and names nothing holds.
func (c pjContent) names(p *projection) []string {
	set := map[string]bool{pjApex: true, "nx." + pjApex: true}
	above := func(name string) {
		for ; name != pjApex && dns.IsSubDomain(pjApex, name); name = name[strings.IndexByte(name, '.')+1:] {
			set[name] = true
		}
	}
	for _, l := range pjHostLabels {
		base := l + "." + pjApex
		set[base], set[records.ChallengeLabel+"."+base], set["nx."+base], set["nx._tcp."+base] = true, true, true, true
	}
	for _, r := range append(slices.Clone(c.earlier), c.rows...) {
		for _, rec := range r.recs {
			above(dns.Fqdn(rec.Name))
		}
	}
	for _, n := range p.ns.Names {
		above(n)
	}
	return slices.Sorted(maps.Keys(set))
}

// pjAsk asks h over TCP (no truncation) as the server does, through its
// ScrubWriter, so that the answer's bytes are kept and sent.
func pjAsk(t *testing.T, h *Handler, qname string, qtype uint16) *dns.Msg {
	q := new(dns.Msg)
	q.SetQuestion(qname, qtype)
	w := &byteWriter{ResponseWriter: test.ResponseWriter{TCP: true}}
	if _, err := h.ServeDNS(context.Background(), request.NewScrubWriter(q, w), q); err != nil {
		t.Fatalf("%s %s: %v", qname, dns.TypeToString[qtype], err)
	}
	m, _ := w.sent(t)
	return m
}

// pjRdata are rrs as they travel (packed and unpacked), at owner, without
// TTLs, the names in their data in lowercase (DNS compares names without
// case, as RFC 4034 6.2 and UPDATE's prerequisites do), sorted.
func pjRdata(t *testing.T, rrs []dns.RR, owner string) []string {
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		c := dns.Copy(rr)
		if owner != "" {
			c.Header().Name = owner
		}
		buf := make([]byte, dns.Len(c)+256)
		off, err := dns.PackRR(c, buf, 0, nil, false)
		if err != nil {
			t.Fatalf("%v does not pack: %v", rr, err)
		}
		u, _, err := dns.UnpackRR(buf[:off], 0)
		if err != nil {
			t.Fatalf("%v does not unpack: %v", rr, err)
		}
		u.Header().Ttl = 0
		hdr := u.Header().String()
		data := strings.TrimPrefix(u.String(), hdr)
		if t := u.Header().Rrtype; t == dns.TypeMX || t == dns.TypeSRV || t == dns.TypeNS || t == dns.TypeSOA {
			data = strings.ToLower(data) // names and numbers only
		}
		out = append(out, hdr+data)
	}
	slices.Sort(out)
	return out
}

// FuzzAnswersProjection holds DNS answers to the projection they are built
// from (issue 44, item 1): random content for one zone (hostnames of few
// labels, live, pending, released or suspended, idle or expired, IPv4,
// IPv6 or both; records of every caller type at and below them, one that
// cannot be decoded; DNS-01 values served or past their life; a CAA policy
// or none; a nameserver with addresses in the zone, maybe at a hostname's
// name), loaded as the change feed applies it, earlier versions of some
// hostnames first. At every name and type, the answer section (owner in
// the client's case, rdata, not TTLs) is what package served says the name
// serves, NXDOMAIN where nothing is at or below the name, and NODATA with
// the apex's SOA elsewhere; asked twice, so the kept bytes are held too.
func FuzzAnswersProjection(f *testing.F) {
	for _, seed := range [][]byte{
		// Each byte picks one thing (pjDraw, pjHostname): upper case,
		// policy, the nameserver's name and families, hostnames - 1; each
		// hostname: label, an earlier version (then its rows), status, then
		// its rows: addresses, expiry, records (data, variant, name each),
		// DNS-01 values (age, value each).
		// One live IPv4 name: the policy stands at it.
		{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		// Records at, below and between; its own CAA; DNS-01 values served
		// and past their life; a pending IPv6 name; the nameserver below a
		// hostname.
		{1, 2, 2, 2, 1, 0, 0, 0, 2, 2, 3, 0, 0, 5, 8, 1, 1, 5, 0, 4, 2, 0, 0, 0, 1,
			1, 0, 2, 1, 0, 2, 2, 0, 0, 2, 1, 0, 1, 1, 0},
		// Earlier versions: a name released and minted again by another
		// hostname, records that moved.
		{0, 1, 0, 1, 2, 0, 1, 0, 0, 2, 1, 2, 5, 6, 0, 3, 1, 0, 2, 3, 0, 0, 0, 0,
			0, 0, 0, 4, 0, 1, 3, 3, 2, 0, 2, 1, 1, 0, 1, 7, 0, 2, 0, 0, 1, 0, 1, 4, 1, 0, 0},
		// The nameserver at a hostname's name, a record that cannot be
		// decoded, an expired name with a DNS-01 value, a suspended one.
		{1, 0, 1, 2, 2, 0, 0, 0, 0, 0, 2, 9, 0, 2, 0, 1, 2, 0, 3, 0, 0, 1, 1, 1, 6, 0, 3, 1, 0, 0,
			1, 0, 4, 0, 0, 0, 0},
		// The nameserver's name a record's owner too, three DNS-01 values.
		{0, 2, 3, 0, 0, 2, 0, 0, 2, 2, 2, 0, 0, 6, 8, 2, 6, 3, 0, 0, 0, 1, 0, 2},
	} {
		f.Add(seed)
	}
	datas := pjDatas(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		in := pjInput(raw)
		now := time.Now().UnixMilli()
		c := pjDraw(&in, datas, now)
		h := c.load(t, now)
		p := c.project(h, now)
		var diffs []string
		for _, name := range c.names(p) {
			asked := name
			if c.upper {
				asked = strings.ToUpper(name)
			}
			sets, exists := p.at(name), p.exists(name)
			for _, qtype := range pjTypes {
				want := pjRdata(t, sets[qtype], asked)
				wantRcode := dns.RcodeSuccess
				if !exists {
					wantRcode = dns.RcodeNameError
				}
				for try := range 2 {
					m := pjAsk(t, h, asked, qtype)
					got := pjRdata(t, m.Answer, "")
					soa := len(m.Ns) == 1 && slices.Equal(pjRdata(t, m.Ns, ""), pjRdata(t, p.apex[dns.TypeSOA], ""))
					if m.Rcode != wantRcode || !slices.Equal(got, want) || (len(got) == 0 && !soa) || !m.Authoritative {
						diffs = append(diffs, fmt.Sprintf("%s %s (ask %d): DNS %s %q (authority %v, AA %t); projection %s %q",
							asked, dns.TypeToString[qtype], try+1, dns.RcodeToString[m.Rcode], got, m.Ns, m.Authoritative,
							dns.RcodeToString[wantRcode], want))
					}
				}
			}
		}
		if n := len(diffs); n > 40 {
			diffs = append(diffs[:40], fmt.Sprintf("... and %d more", n-40))
		}
		if len(diffs) > 0 {
			t.Fatalf("DNS answers disagree with the projection:\n%s\ncontent:\n%s", strings.Join(diffs, "\n"), c)
		}
	})
}

// String describes the content, for a failure's report.
func (c pjContent) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%spolicy %s\nnow %d (Unix ms)\n", c.nameserver, c.policy, time.Now().UnixMilli())
	for i, rs := range [][]pjRows{c.earlier, c.rows} {
		for _, r := range rs {
			fmt.Fprintf(&b, "%s %s %s %s addrs %q expires %d\n", []string{"earlier", "rows"}[i], r.h.ID, r.h.Name, r.h.Status, r.h.Addrs, r.h.ExpiresAt)
			for _, rec := range r.recs {
				fmt.Fprintf(&b, "  record %s %s %.80s\n", rec.Name, rec.Type, rec.Data)
			}
			for _, ch := range r.chals {
				fmt.Fprintf(&b, "  challenge %.8s... created %d\n", ch.Value, ch.CreatedAt)
			}
		}
	}
	return b.String()
}
