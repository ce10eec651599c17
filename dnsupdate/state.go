package dnsupdate

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// zoneState is the part of a zone an UPDATE reads and writes, name by
// name: what the store holds when first read, then the message's updates
// applied in order (RFC 2136 3.4.2). commit turns the difference into
// rule calls.
type zoneState struct {
	u     *Updater
	dom   *storage.Domain
	tx    *storage.Tx
	q     storage.Queries
	p     *access.Principal // who sends the message
	names map[string]*node
	order []string // names in the order first touched, for commit
}

// node is one owner name and what is served there.
type node struct {
	name  string
	kind  nodeKind
	label string            // the hostname's label (hostname and challenge nodes)
	host  *storage.Hostname // the hostname holding the label (served or not), nil if none
	was   rrsets            // as read
	now   rrsets            // after the updates so far
	dirty bool
	// [P2] the hostname's records at this name: their ids by type and
	// rdata, and the RRs the message adds (by the same key).
	ids   map[string]string
	added map[string]dns.RR
	// The rows read at this name, and what DNS serves there as
	// prerequisites see it (servedAt, built from them when first asked).
	recs   []storage.Record
	chals  []storage.Challenge
	served rrsets
}

func rrKey(t uint16, rdata string) string { return dns.TypeToString[t] + " " + rdata }

type nodeKind int

const (
	kindOther     nodeKind = iota // not writable here
	kindApex                      // the zone's apex: SOA and NS, not writable
	kindHostname                  // a label directly under the zone: a hostname's address
	kindChallenge                 // _acme-challenge.<label>: DNS-01 values
	kindRecords                   // [P2] a name below a hostname: its records
)

// rrsets are the records at a name, by type, in presentation form of
// their rdata (lowercase names), so that equal records compare equal.
type rrsets map[uint16][]string

func (r rrsets) clone() rrsets {
	out := rrsets{}
	for t, vs := range r {
		out[t] = slices.Clone(vs)
	}
	return out
}

func (r rrsets) inUse() bool {
	for _, vs := range r {
		if len(vs) > 0 {
			return true
		}
	}
	return false
}

// rdata is rr's data in presentation form, compared case-insensitively
// where it holds names.
func rdata(rr dns.RR) string {
	s := strings.TrimPrefix(rr.String(), rr.Header().String())
	switch rr.(type) {
	case *dns.TXT:
		return s
	}
	return strings.ToLower(s)
}

// lockLabel reads the hostname that holds n's label: through the rule a
// mint of it goes through, which reads ahead what the mint needs
// (hostnames.LockLabel), when n is a hostname's own name.
func (z *zoneState) lockLabel(ctx context.Context, n *node) (*storage.Hostname, error) {
	if n.kind == kindHostname {
		return z.u.rules.Lifecycle.LockLabel(ctx, z.tx, z.p, z.dom, n.label)
	}
	return z.q.LockHostnameByLabel(ctx, z.dom.ID, n.label)
}

// at reads (once) the node at name.
func (z *zoneState) at(ctx context.Context, name string) (*node, error) {
	name = lower(name)
	if n := z.names[name]; n != nil {
		return n, nil
	}
	n := &node{name: name, was: rrsets{}}
	n.kind, n.label = z.kindOf(name)
	if n.label != "" {
		h, err := z.lockLabel(ctx, n)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			n.host = h
		}
	}
	if n.host != nil && z.u.rules.Lifecycle.Served(n.host) {
		switch n.kind {
		case kindHostname:
			for _, a := range n.host.ServedAddrs() {
				t := dns.TypeA
				if a.Is6() {
					t = dns.TypeAAAA
				}
				n.was[t] = append(n.was[t], a.String())
			}
		case kindChallenge:
			cs, err := z.q.Challenges(ctx, n.host.ID)
			if err != nil {
				return nil, err
			}
			n.chals = cs
			for _, c := range cs {
				n.was[dns.TypeTXT] = append(n.was[dns.TypeTXT], quote(c.Value))
			}
		}
		if z.u.profile.Teams() && (n.kind == kindHostname || n.kind == kindRecords) {
			if err := z.readRecords(ctx, n); err != nil {
				return nil, err
			}
		}
	}
	n.now = n.was.clone()
	z.names[name] = n
	z.order = append(z.order, name)
	return n, nil
}

// kindOf is what the name is in the zone, and the hostname label it is
// at or under ("" for none).
func (z *zoneState) kindOf(name string) (nodeKind, string) {
	labels := z.labels(name)
	switch {
	case name == z.dom.Name:
		return kindApex, ""
	case len(labels) == 1:
		return kindHostname, labels[0]
	case len(labels) == 2 && labels[0] == records.ChallengeLabel:
		return kindChallenge, labels[1]
	case z.u.profile.Teams():
		return kindRecords, labels[len(labels)-1]
	}
	return kindOther, ""
}

func quote(s string) string { return `"` + s + `"` }

// readRecords reads the hostname's records at n's name.
func (z *zoneState) readRecords(ctx context.Context, n *node) error {
	rs, err := z.q.Records(ctx, n.host.ID)
	if err != nil {
		return err
	}
	n.ids = map[string]string{}
	for _, r := range rs {
		if r.Name != n.name {
			continue
		}
		n.recs = append(n.recs, r)
		d, err := records.Decode(r.Type, []byte(r.Data))
		if err != nil {
			return err
		}
		rr, err := d.RR(r.Type, dns.Fqdn(r.Name), records.TTL)
		if err != nil {
			return err
		}
		t, v := rr.Header().Rrtype, rdata(rr)
		n.was[t] = append(n.was[t], v)
		n.ids[rrKey(t, v)] = r.ID
	}
	return nil
}

// readAll reads (and locks) every name of the message before anything is
// decided, in the order of their hostnames' labels: two messages lock
// rows in one order, and no write meets a row another message is judging.
func (z *zoneState) readAll(ctx context.Context, r *dns.Msg) error {
	for _, name := range z.sortedNames(r) {
		if _, err := z.at(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// sortedNames are the names r's prerequisites and updates are at, in the
// order readAll reads them.
func (z *zoneState) sortedNames(r *dns.Msg) []string {
	var names []string
	for _, rr := range append(append([]dns.RR{}, r.Answer...), r.Ns...) {
		names = append(names, lower(rr.Header().Name))
	}
	slices.SortFunc(names, func(a, b string) int {
		return strings.Compare(z.labelOf(a)+"\x00"+a, z.labelOf(b)+"\x00"+b)
	})
	return slices.Compact(names)
}

// labelOf is the label directly under the zone that name is at or under.
func (z *zoneState) labelOf(name string) string {
	labels := z.labels(name)
	return labels[len(labels)-1]
}

// labels are name's labels below the zone ([""] for the apex).
func (z *zoneState) labels(name string) []string {
	return strings.Split(strings.TrimSuffix(strings.TrimSuffix(name, z.dom.Name), "."), ".")
}

// prerequisites checks the prerequisite section (RFC 2136 3.2.5): the
// first that does not hold answers with its rcode, and nothing is written.
func (z *zoneState) prerequisites(ctx context.Context, prs []dns.RR) error {
	want := map[string]map[uint16][]string{} // value-dependent: name -> type -> values
	for _, rr := range prs {
		h := rr.Header()
		n, err := z.at(ctx, h.Name)
		if err != nil {
			return err
		}
		was, err := z.servedAt(ctx, n)
		if err != nil {
			return err
		}
		switch {
		case h.Class == dns.ClassANY && h.Rrtype == dns.TypeANY:
			if !was.inUse() {
				return reject(dns.RcodeNameError, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite failed: %s is not in use", n.name))
			}
		case h.Class == dns.ClassANY:
			if len(was[h.Rrtype]) == 0 {
				return reject(dns.RcodeNXRrset, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite failed: %s has no %s records", n.name, dns.TypeToString[h.Rrtype]))
			}
		case h.Class == dns.ClassNONE && h.Rrtype == dns.TypeANY:
			if was.inUse() {
				return reject(dns.RcodeYXDomain, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite failed: %s is in use", n.name))
			}
		case h.Class == dns.ClassNONE:
			if len(was[h.Rrtype]) > 0 {
				return reject(dns.RcodeYXRrset, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite failed: %s has %s records", n.name, dns.TypeToString[h.Rrtype]))
			}
		default:
			if want[n.name] == nil {
				want[n.name] = map[uint16][]string{}
			}
			if v := rdata(rr); !slices.Contains(want[n.name][h.Rrtype], v) {
				want[n.name][h.Rrtype] = append(want[n.name][h.Rrtype], v)
			}
		}
	}
	for name, types := range want {
		for t, vs := range types {
			if !sameSet(z.names[name].served[t], vs) {
				return reject(dns.RcodeNXRrset, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite failed: the %s records of %s are not the ones given", dns.TypeToString[t], name))
			}
		}
	}
	return nil
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, v := range a {
		if !slices.Contains(b, v) {
			return false
		}
	}
	return true
}

// writable says which types an update may touch at n, and why not.
func (z *zoneState) writable(n *node, t uint16) error {
	_, record := recordType(t)
	switch {
	case z.u.profile.Teams() && record && (n.kind == kindHostname || n.kind == kindRecords):
		return nil
	case n.kind == kindRecords && t == dns.TypeANY:
		return nil
	case n.kind == kindHostname && (t == dns.TypeA || t == dns.TypeAAAA || t == dns.TypeANY):
		return nil
	case n.kind == kindChallenge && (t == dns.TypeTXT || t == dns.TypeANY):
		return nil
	case n.kind == kindApex:
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf("the apex of %s is not written by UPDATE", z.dom.Name))
	case n.kind == kindHostname && z.u.profile.Teams():
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf("%s takes A and AAAA (its address) and %s records, not %s",
			n.name, strings.Join(records.Types, ", "), dns.TypeToString[t]))
	case n.kind == kindRecords:
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf("%s takes %s records, not %s",
			n.name, strings.Join(records.Types, ", "), dns.TypeToString[t]))
	case n.kind == kindHostname:
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf("%s takes A and AAAA (its address) by UPDATE, not %s", n.name, dns.TypeToString[t]))
	case n.kind == kindChallenge:
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf("%s takes TXT (DNS-01 values), not %s", n.name, dns.TypeToString[t]))
	}
	return reject(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited,
		fmt.Sprintf("%s is neither a hostname (a label directly under %s) nor its %s name", n.name, z.dom.Name, records.ChallengeLabel))
}

// update applies one update RR to the state (RFC 2136 3.4.2).
func (z *zoneState) update(ctx context.Context, rr dns.RR) error {
	h := rr.Header()
	n, err := z.at(ctx, h.Name)
	if err != nil {
		return err
	}
	if err := z.writable(n, h.Rrtype); err != nil {
		return err
	}
	n.dirty = true
	switch h.Class {
	case dns.ClassINET: // add, unless there already
		if v := rdata(rr); !slices.Contains(n.now[h.Rrtype], v) {
			n.now[h.Rrtype] = append(n.now[h.Rrtype], v)
			if n.added == nil {
				n.added = map[string]dns.RR{}
			}
			n.added[rrKey(h.Rrtype, v)] = rr
		}
	case dns.ClassANY: // delete an RRset, or every RRset at the name
		if h.Rrtype == dns.TypeANY {
			n.now = rrsets{}
		} else {
			delete(n.now, h.Rrtype)
		}
	case dns.ClassNONE: // delete one record, if there
		v := rdata(rr)
		n.now[h.Rrtype] = slices.DeleteFunc(n.now[h.Rrtype], func(s string) bool { return s == v })
	}
	return nil
}

// changes reports whether the updates leave any name other than it was
// read: if not, commit would make no rule call.
func (z *zoneState) changes() bool {
	for _, n := range z.names {
		if !n.dirty {
			continue
		}
		for t, vs := range n.now {
			if !sameSet(n.was[t], vs) {
				return true
			}
		}
		for t, vs := range n.was {
			if !sameSet(vs, n.now[t]) {
				return true
			}
		}
	}
	return false
}

// commit makes the rule calls that the state's differences stand for,
// inside the message's transaction.
func (z *zoneState) commit(ctx context.Context, p *access.Principal) error {
	for _, name := range z.order {
		n := z.names[name]
		if !n.dirty {
			continue
		}
		// Records first: a hostname the message releases keeps none.
		if err := z.commitRecords(ctx, p, n); err != nil {
			return err
		}
		var err error
		switch n.kind {
		case kindHostname:
			err = z.commitAddress(ctx, p, n)
		case kindChallenge:
			err = z.commitChallenges(ctx, p, n)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// commitAddress makes the address calls: a hostname's addresses are set
// by the rule dyndns2 uses too (SetAddrs: one address [P1], one of each
// family [P2]), a new label is minted, and no address left releases.
func (z *zoneState) commitAddress(ctx context.Context, p *access.Principal, n *node) error {
	was := append(slices.Clone(n.was[dns.TypeA]), n.was[dns.TypeAAAA]...)
	now := append(slices.Clone(n.now[dns.TypeA]), n.now[dns.TypeAAAA]...) // IPv4 first, as SetAddrs takes them
	lc := z.u.rules.Lifecycle
	switch {
	case sameSet(was, now):
		return nil
	case len(now) == 0:
		return lc.Release(ctx, p, n.host.ID)
	case n.host == nil || n.host.AccountID != p.AccountID && len(was) == 0:
		// A label held by no hostname, or by another team's that is not
		// served: the rules decide whether it can be taken.
		in := hostnames.CreateInput{IP: &now[0]}
		if z.u.profile.Teams() {
			in.Subdomain, in.Domain = &n.label, &z.dom.Name
		} else {
			in.Label = &n.label
		}
		h, err := lc.Create(ctx, p, in)
		if err != nil || len(now) == 1 {
			return err
		}
		n.host = h // minted with its first address; the rule of addresses takes the rest
	}
	addrs := make([]netip.Addr, len(now))
	for i, a := range now {
		addrs[i], _ = netip.ParseAddr(a) // rdata of A and AAAA: addresses
	}
	_, _, err := lc.SetAddrs(ctx, p, n.host.ID, addrs)
	return err
}

func (z *zoneState) commitChallenges(ctx context.Context, p *access.Principal, n *node) error {
	var add, remove []string
	for _, v := range n.now[dns.TypeTXT] {
		if !slices.Contains(n.was[dns.TypeTXT], v) {
			add = append(add, unquote(v))
		}
	}
	for _, v := range n.was[dns.TypeTXT] {
		if !slices.Contains(n.now[dns.TypeTXT], v) {
			remove = append(remove, unquote(v))
		}
	}
	if len(add)+len(remove) == 0 {
		return nil
	}
	if n.host == nil {
		return reject(dns.RcodeRefused, dns.ExtendedErrorCodeOther,
			fmt.Sprintf("%s.%s is no hostname; DNS-01 values are published under hostnames", n.label, z.dom.Name))
	}
	return z.u.rules.Certificates.SetChallenges(ctx, p, n.host.ID, add, remove)
}

// commitRecords makes the record calls of n's record types: the records
// the message deleted, then those it added.
func (z *zoneState) commitRecords(ctx context.Context, p *access.Principal, n *node) error {
	if !z.u.profile.Teams() || n.kind != kindHostname && n.kind != kindRecords {
		return nil
	}
	rules := z.u.rules.Records
	for t, vs := range n.was {
		for _, v := range vs {
			if _, ok := recordType(t); !ok || slices.Contains(n.now[t], v) {
				continue
			}
			if err := rules.DeleteRecord(ctx, p, n.host.ID, n.ids[rrKey(t, v)]); err != nil {
				return err
			}
		}
	}
	for t, vs := range n.now {
		for _, v := range vs {
			if _, ok := recordType(t); !ok || slices.Contains(n.was[t], v) {
				continue
			}
			if n.host == nil {
				return reject(dns.RcodeRefused, dns.ExtendedErrorCodeOther,
					fmt.Sprintf("%s is under no hostname of %s; records are published under hostnames", n.name, z.dom.Name))
			}
			in, err := inputOf(n.added[rrKey(t, v)], n.name)
			if err != nil {
				return reject(dns.RcodeRefused, dns.ExtendedErrorCodeNotSupported, err.Error())
			}
			if _, err := rules.CreateRecord(ctx, p, n.host.ID, in); err != nil {
				return err
			}
		}
	}
	return nil
}

// unquote reads a TXT value as rdata gave it: one string, quoted.
func unquote(v string) string {
	return strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`), `" "`, "")
}
