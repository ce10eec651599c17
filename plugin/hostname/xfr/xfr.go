// Package xfr serves the hostname plugin's zones to secondaries: AXFR and
// IXFR through CoreDNS's transfer plugin, the catalog zone (RFC 9432), and
// NOTIFYs when zones change.
package xfr

import (
	"errors"
	"sync/atomic"

	"github.com/coredns/coredns/plugin/transfer"
	"github.com/hostmint/hostmint/plugin/hostname/answer"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/served"
	"github.com/miekg/dns"
)

// Zone transfers: the plugin is a transfer.Transferer (through Transfers),
// so CoreDNS's stock transfer plugin serves AXFR and IXFR of every domain
// in the index to the secondaries it lets in (and the stock tsig plugin may
// require a key).

// Transfers serve an index's zones, and its catalog, to secondaries.
type Transfers struct {
	ix          *index.Index
	answers     *answer.Answerer // the zones' SOA, NS and nameserver addresses
	catalogZone string           // the catalog zone, lowercase FQDN; "" for none
	soa         served.SOA
	addressTTL  uint32
	// catalogs caches the catalog zone of the newest zone set.
	catalogs atomic.Pointer[catalogData]
}

// Config is what Transfers serve with besides the index and the answerer.
type Config struct {
	Catalog    string     // the catalog zone, lowercase FQDN; "" for none
	SOA        served.SOA // the zones' SOA: contact and timers
	AddressTTL uint32     // of A and AAAA records
}

// New is the transfers of ix's zones, whose apex records a answers.
func New(cfg Config, ix *index.Index, a *answer.Answerer) *Transfers {
	return &Transfers{ix: ix, answers: a, catalogZone: cfg.Catalog, soa: cfg.SOA, addressTTL: cfg.AddressTTL}
}

// SetIndex makes ix the index transferred (a node's, once it starts).
func (x *Transfers) SetIndex(ix *index.Index) { x.ix = ix }

// xfrBatch is how many records go to the transfer plugin at once: it packs
// them into messages of up to 64 KB, and a batch this size is a few of
// those, so a million-name zone is never held twice.
const xfrBatch = 512

// ErrNoKey refuses the transfer of a signed zone whose key this node
// cannot open: an unsigned copy would be served without the DS chain its
// parent publishes.
var ErrNoKey = errors.New("the zone is signed and this node cannot open its key: it is never transferred unsigned")

// errSignedMeanwhile refuses an AXFR of a zone signed while it was read:
// the secondary asks again, and gets it signed.
var errSignedMeanwhile = errors.New("the zone was signed while it was read: ask again")

// errNotLoaded refuses a transfer before the first snapshot is in.
var errNotLoaded = errors.New("the index is not loaded yet")

// Transfer implements transfer.Transferer. serial 0 is an AXFR; another is
// an IXFR from that serial: the SOA alone when the secondary is current,
// the difference from the journal (RFC 1995, condensed to one) when it
// reaches back that far, and else the whole zone (RFC 1995's fallback).
func (x *Transfers) Transfer(zone string, serial uint32) (<-chan []dns.RR, error) {
	z := x.ix.Zone(dns.CanonicalName(zone))
	if z == nil && x.catalogZone != "" && dns.CanonicalName(zone) == x.catalogZone {
		return x.transferCatalog(serial)
	}
	if z == nil {
		return nil, transfer.ErrNotAuthoritative
	}
	if !x.ix.Loaded() {
		return nil, errNotLoaded
	}
	if z.Unservable() {
		xfrRefused.WithLabelValues("no_key").Inc()
		log.Warningf("refused a transfer of %s: %v", z.Name, ErrNoKey)
		return nil, ErrNoKey
	}
	soa := x.answers.SOA(z, x.soa.Minimum)
	ch := make(chan []dns.RR, 2)
	if serial != 0 && !index.SerialOlder(serial, soa.(*dns.SOA).Serial) {
		xfrOut.WithLabelValues("current").Inc()
		ch <- []dns.RR{soa}
		close(ch)
		return ch, nil
	}
	if serial != 0 {
		ixfr := x.ixfr
		if z.Signed {
			ixfr = x.signedIXFR
		}
		if rrs, ok := ixfr(z.Name, serial); ok {
			go func() {
				defer close(ch)
				for len(rrs) > 0 {
					n := min(len(rrs), xfrBatch)
					ch <- rrs[:n]
					rrs = rrs[n:]
				}
			}()
			xfrOut.WithLabelValues("ixfr").Inc()
			return ch, nil
		}
	}
	if z.Signed {
		names, at, signed := x.ix.ChainAt(z.Name)
		if signed != nil {
			go func() {
				defer close(ch)
				x.signedAXFR(signed, names, at, ch)
			}()
			return ch, nil
		}
	}
	// The zone as it stands with the names copied: a domain change since
	// the look above (signed, its CAA) is what is sent, or refused.
	chunks, at, z := x.ix.ZoneNames(z.Name)
	switch {
	case z == nil:
		return nil, transfer.ErrNotAuthoritative
	case z.Unservable():
		xfrRefused.WithLabelValues("no_key").Inc()
		log.Warningf("refused a transfer of %s: %v", z.Name, ErrNoKey)
		return nil, ErrNoKey
	case z.Signed: // signed while its names were copied
		return nil, errSignedMeanwhile
	}
	go func() {
		defer close(ch)
		x.axfr(z, chunks, at, ch)
	}()
	return ch, nil
}

// ixfr is the difference of z from serial to now, in IXFR's form: the
// current SOA; the SOA at serial, what the changed names held then; the
// current SOA, what they hold now; the current SOA. ok is false when the
// journal does not reach back to serial.
//
// What a name held is deleted whole, unless it was gone (nodeRRs): a
// secondary that lacks a record it is told to delete fails the IXFR and
// asks for the whole zone, which is right but costly, while one told too
// little would keep a stale address beside the new one.
func (x *Transfers) ixfr(name string, serial uint32) ([]dns.RR, bool) {
	z, cur, names, old, now, ok := x.ix.Changes(name, serial)
	if !ok || z.Signed { // signedIXFR's, or the AXFR path's
		return nil, false
	}
	// The serial read with the names, not the index's by now.
	soaNow := x.answers.SOA(z, x.soa.Minimum).(*dns.SOA)
	soaNow.Serial = cur
	soaThen := x.answers.SOA(z, x.soa.Minimum).(*dns.SOA)
	soaThen.Serial = serial
	rrs := []dns.RR{soaNow, soaThen}
	for _, n := range names {
		if o := old[n]; o != nil && !o.Gone {
			rrs = append(rrs, x.nodeRRsAll(z, n, o)...)
		}
	}
	rrs = append(rrs, soaNow)
	for _, n := range names {
		if nd := now[n]; nd != nil {
			rrs = append(rrs, x.NodeRRs(z, n, nd)...)
		}
	}
	return append(rrs, soaNow), true
}

// axfr streams z: the SOA, the apex, then every name of the zone, and the
// SOA again. The names are a snapshot taken with the serial they stand at
// (zoneNames), so the zone sent is the zone at the SOA's serial: one read
// shard by shard while the feed went on could hold a name newer than the
// serial, and the IXFR after it would then delete records the secondary
// never had, and fail, and start another whole transfer.
func (x *Transfers) axfr(z *index.Zone, chunks [][]index.Named, serial uint32, ch chan<- []dns.RR) {
	soa := x.answers.SOA(z, x.soa.Minimum)
	soa.(*dns.SOA).Serial = serial
	batch := []dns.RR{soa}
	send := func(rrs ...dns.RR) {
		batch = append(batch, rrs...)
		if len(batch) >= xfrBatch {
			ch <- batch
			batch = make([]dns.RR, 0, xfrBatch)
		}
	}
	send(x.answers.NS(z.Name)...)
	send(served.Rewrite(z.CAA, z.Name, served.TTL)...)
	for n, addrs := range x.staticIn(z) {
		send(index.AddrRRs(n, dns.TypeA, addrs, answer.NSTTL)...)
		send(index.AddrRRs(n, dns.TypeAAAA, addrs, answer.NSTTL)...)
	}
	for i, c := range chunks {
		for _, e := range c {
			if e.Node != nil {
				send(x.NodeRRs(z, e.Name, e.Node)...)
			}
		}
		chunks[i] = nil // what is sent need not be kept
	}
	batch = append(batch, soa)
	ch <- batch
	xfrOut.WithLabelValues("axfr").Inc()
}

// NodeRRs are the records a secondary serves at name: what an answer for
// each of its types holds, at the full TTL; none when the node is gone.
// What a transfer sends and what a later IXFR deletes follow the same rule
// (gone, fixed when the node was built), never the clock at the moment of
// sending: a name sent or left out by the clock could be deleted by an
// IXFR that the secondary cannot apply. So a name that has expired but
// whose expiry is not recorded yet is still sent, for the second or two
// until that change deletes it.
func (x *Transfers) NodeRRs(z *index.Zone, name string, n *index.Node) []dns.RR {
	if n.Gone {
		return nil
	}
	return x.nodeRRsAll(z, name, n)
}

// nodeRRsAll are n's records at name, expired or not.
func (x *Transfers) nodeRRsAll(z *index.Zone, name string, n *index.Node) []dns.RR {
	var rrs []dns.RR
	rrs = append(rrs, index.AddrRRs(name, dns.TypeA, n.Addrs, x.addressTTL)...)
	rrs = append(rrs, index.AddrRRs(name, dns.TypeAAAA, n.Addrs, x.addressTTL)...)
	for _, set := range n.RRsets {
		rrs = append(rrs, served.Rewrite(set, name, served.TTL)...)
	}
	if p := served.PolicyAt(n.Host, n.RRsets, z.CAA); p != nil {
		rrs = append(rrs, served.Rewrite(p, name, served.TTL)...)
	}
	return rrs
}
