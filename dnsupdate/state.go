package dnsupdate

import (
	"slices"
	"strings"

	"github.com/hostmint/hostmint/access"
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
	case *dns.TXT, *dns.DHCID: // text and base64: case is data
		return s
	}
	return strings.ToLower(s)
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
