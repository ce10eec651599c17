package xfr

import (
	"cmp"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/hostmint/hostmint/plugin/hostname/answer"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/served"
	"github.com/miekg/dns"
)

// A signed zone goes to secondaries signed (package chain): what its
// names serve is the same projection an unsigned transfer sends (NodeRRs,
// the apex's records), read at one serial and signed in the windows of
// that serial's clock.

// signedZone is z at one serial as chain.Stream reads it: its chain's
// names in order, with their nodes (index.ChainAt).
type signedZone struct {
	x      *Transfers
	z      *index.Zone
	soa    dns.RR
	names  []index.Chained
	static map[string]index.AddrList
}

// staticIn are the configured nameservers' addresses whose names are in z.
func (x *Transfers) staticIn(z *index.Zone) map[string]index.AddrList {
	in := map[string]index.AddrList{}
	_, static := x.answers.Nameservers()
	for n, addrs := range static {
		if zz := x.ix.ZoneOf(n); zz != nil && zz.Name == z.Name {
			in[n] = addrs
		}
	}
	return in
}

func (s *signedZone) Len() int         { return len(s.names) }
func (s *signedZone) Key(i int) string { return s.names[i].Key }

// RRs are what the i-th name serves, grouped by type (ownerRRs).
func (s *signedZone) RRs(i int) []dns.RR {
	return s.x.ownerRRs(s.z, s.names[i].Name, s.names[i].Node, s.soa, s.static)
}

// ownerRRs are what name serves in signed zone z, grouped by type: at the
// apex its records with soa (signed, but sent by the transfer's frame),
// and at every name what an unsigned transfer sends of n and, at a
// nameserver's name, its addresses.
func (x *Transfers) ownerRRs(z *index.Zone, name string, n *index.Node, soa dns.RR, static map[string]index.AddrList) []dns.RR {
	var rrs []dns.RR
	if name == z.Name {
		rrs = append(rrs, soa)
		rrs = append(rrs, x.answers.NS(z.Name)...)
		rrs = append(rrs, served.Rewrite(z.CAA, z.Name, served.TTL)...)
		rrs = append(rrs, answer.Keys(z, z.Name)...)
		if p := z.Denial().Param(); p != nil {
			rrs = append(rrs, p)
		}
	}
	if n != nil {
		rrs = append(rrs, x.NodeRRs(z, name, n)...)
	}
	if addrs, ok := static[name]; ok {
		rrs = append(rrs, index.AddrRRs(name, dns.TypeA, addrs, answer.NSTTL)...)
		rrs = append(rrs, index.AddrRRs(name, dns.TypeAAAA, addrs, answer.NSTTL)...)
	}
	slices.SortStableFunc(rrs, func(a, b dns.RR) int { return cmp.Compare(a.Header().Rrtype, b.Header().Rrtype) })
	return rrs
}

// signedAXFR streams z, as it stood at serial (names, its chain then),
// signed: the SOA, every name's records with their RRSIGs and its chain
// record, and the SOA again.
func (x *Transfers) signedAXFR(z *index.Zone, names []index.Chained, serial uint32, ch chan<- []dns.RR) {
	soa := x.answers.SOA(z, x.soa.Minimum)
	soa.(*dns.SOA).Serial = serial
	hour, ok := x.ix.Clock(serial)
	if !ok {
		log.Errorf("transfer of %s: the clock of serial %d is not known; the transfer is cut short", z.Name, serial)
		return
	}
	sz := &signedZone{x: x, z: z, soa: soa, names: names, static: x.staticIn(z)}
	z.Chain.Expect(2 * sz.Len()) // a name's records, and its chain record
	if sz.Len() >= bigZone {
		defer tighterGC()()
	}
	ch <- []dns.RR{soa}
	err := z.Chain.Stream(sz, z.Denial(), x.soa.Minimum, hour, func(rrs []dns.RR) {
		// The SOA is signed with the apex, and sent by the frame alone:
		// one in the middle would end the transfer there.
		rrs = slices.DeleteFunc(rrs, func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeSOA })
		ch <- rrs
	})
	if err != nil {
		log.Errorf("transfer of %s cut short: signing failed: %v", z.Name, err)
		return // no closing SOA: the secondary discards what it got
	}
	ch <- []dns.RR{soa}
	xfrOut.WithLabelValues("axfr").Inc()
	if sz.Len() >= bigZone {
		// Signing a large zone leaves garbage of several times its
		// signatures (each ECDSA signature's own allocations): hand it
		// back to the system now, as a load does, rather than keep the
		// peak resident until the runtime gets round to it.
		debug.FreeOSMemory()
	}
}

// bigZone is the size of zone whose signed AXFR runs the collector
// tighter, and returns its garbage to the system when it ends.
const bigZone = 100_000

// Signing a large zone makes garbage at a few hundred MB a second (each
// ECDSA signature's own allocations), and the collector's default lets
// the heap grow to twice what is live before it runs: at a million names,
// a peak of 1.2 GB for 0.5 GB live. While such a transfer runs, the
// collector runs at half that headroom (unless it was set tighter, or
// off, by GOGC): a little more CPU for the signing, which is the rare
// event, and a peak under 1 GB.
var gcTight struct {
	sync.Mutex
	n   int // transfers that asked for it
	was int // the collector's percent before
}

// tighterGCPercent is the collector's percent while a large zone signs.
const tighterGCPercent = 50

// tighterGC runs the collector tighter until the returned func is called.
func tighterGC() (restore func()) {
	gcTight.Lock()
	defer gcTight.Unlock()
	if gcTight.n == 0 {
		gcTight.was = debug.SetGCPercent(tighterGCPercent)
		if gcTight.was < tighterGCPercent { // tighter already, or off
			debug.SetGCPercent(gcTight.was)
		}
	}
	gcTight.n++
	return func() {
		gcTight.Lock()
		defer gcTight.Unlock()
		if gcTight.n--; gcTight.n == 0 {
			debug.SetGCPercent(gcTight.was)
		}
	}
}
