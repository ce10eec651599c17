package answer

import (
	"hash/maphash"
	"strings"
	"time"

	"github.com/coredns/coredns/plugin/pkg/cache"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/hostmint/hostmint/served"
	"github.com/miekg/dns"
)

// The answerer's entries, kept: an answer's bytes around its question,
// for one name, type and set of query flags, packed once and copied for
// every query that asks the same (answerer.go). One key scheme for all of
// them: the zone, the lowercase name ("" for the zone's NXDOMAIN, which is
// every missing name's), the type and the flags.
//
// An entry says what its bytes were built from, and is used only while
// that holds: the same *zone and *node (both replaced whole when they
// change, so a change never serves stale bytes), the same serial where
// the answer depends on more than the name's node (an SOA, a name with no
// node, the apex), and until its TTLs would shorten (an expiring name) or
// its first signature is due for renewal. Answers without a node (missing
// names, each signed denial its own) have a part of the cache of their
// own, so that a flood of random names never evicts names' answers.

// Bounds of the two parts (random eviction when full): a scan of every
// name costs a bounded amount of memory, and hot names stay.
const (
	answerCacheSize  = 100_000
	missingCacheSize = 50_000
)

// entry is one answer as bytes.
type entry struct {
	z        *index.Zone
	n        *index.Node // the name's node; nil for a name without one
	name     string      // lowercase; "" for the zone's NXDOMAIN
	qtype    uint16
	flags    uint8
	bySerial bool   // good only at serial
	serial   uint32 // the index's when it was built
	until    int64  // Unix ms the bytes are good until; 0: for good
	rcode    int
	answered bool // it has answer records (response_rate_limit's class)
	// head is the header (ID 0, RD and CD clear); tail the sections after
	// the question. A tail compressed against the question holds the
	// offsets of a question as long as its name's.
	head, tail []byte
}

// size is the length of e's answer to q.
func (e *entry) size(q *Ask) int { return len(e.head) + len(q.Wire) + 4 + len(e.tail) }

// splice appends e's answer to q to buf: its question, ID and RD bit. CD
// is not copied: an authoritative answer clears it (RFC 4035 3.1.6).
func (e *entry) splice(buf []byte, q *Ask) []byte {
	o := len(buf)
	b := append(buf, e.head...)
	b = append(b, q.Wire...)
	b = append(b, byte(q.Qtype>>8), byte(q.Qtype), byte(q.Class>>8), byte(q.Class))
	b = append(b, e.tail...)
	b[o], b[o+1] = byte(q.ID>>8), byte(q.ID)
	if q.RD {
		b[o+2] |= 0x01
	}
	return b
}

type answerCache struct {
	names   *cache.Cache[*entry] // answers at a node
	denials *cache.Cache[*entry] // answers without one
}

func newAnswerCache() *answerCache {
	return &answerCache{names: cache.New[*entry](answerCacheSize), denials: cache.New[*entry](missingCacheSize)}
}

var answerSeed = maphash.MakeSeed()

// answerKey is the one key scheme of every entry.
func answerKey(z *index.Zone, name string, qtype uint16, flags uint8) uint64 {
	// The name hashed on its own: hashing it in a struct would make
	// every name asked escape to the heap.
	return maphash.String(answerSeed, name) ^ maphash.Comparable(answerSeed, answerOf{z, qtype, flags})
}

// answerOf is what an answer is of besides its name.
type answerOf struct {
	z     *index.Zone
	qtype uint16
	flags uint8
}

func (c *answerCache) part(n *index.Node) *cache.Cache[*entry] {
	if n == nil {
		return c.denials
	}
	return c.names
}

// get is the kept answer to q at name in z, whose node is n now; nil
// when none is good.
func (c *answerCache) get(z *index.Zone, n *index.Node, name string, q *Ask, serial uint32, now int64) *entry {
	e, ok := c.part(n).Get(answerKey(z, name, q.Qtype, q.Flags))
	if !ok || e.z != z || e.n != n || e.qtype != q.Qtype || e.flags != q.Flags || e.name != name ||
		e.bySerial && e.serial != serial || e.until != 0 && now >= e.until {
		return nil
	}
	return e
}

func (c *answerCache) add(e *entry) {
	c.part(e.n).Add(answerKey(e.z, e.name, e.qtype, e.flags), e)
}

// entry is the answer to q in z: kept, or built, packed and kept when its
// bytes will do for every query that asks the same.
func (a *Answerer) entry(q *Ask, z *index.Zone, now time.Time) *entry {
	serial, ms := a.ix.Serial(), now.UnixMilli()
	var n *index.Node
	if q.Name != z.Name {
		n = z.Names.Get(q.Name)
	}
	keepable := q.keepable()
	if keepable {
		if e := a.cache.get(z, n, q.Name, q, serial, ms); e != nil {
			return e
		}
		if a.nxdomain(z, n, q.Name, q.Qtype, q.Flags&DO != 0, now) {
			if e := a.cache.get(z, nil, "", q, serial, ms); e != nil {
				return e
			}
		}
	}
	m := a.build(q, z, capitals(q.Wire), now)
	// A missing name's NXDOMAIN is every missing name's (a compact
	// denial's, with the name's own NSEC, is not): packed without pointers
	// into its question, so that it fits any.
	nx := m.Rcode == dns.RcodeNameError && len(m.Ns) == 1
	e := a.pack(m, q, !nx)
	if !keepable {
		return e
	}
	e.z, e.n, e.name, e.qtype, e.flags, e.serial = z, n, string([]byte(q.Name)), q.Qtype, q.Flags, serial
	if nx {
		e.n, e.name = nil, ""
	}
	if a.keep(e, m, q, z, n) {
		a.cache.add(e)
	}
	return e
}

// keep decides whether e, built as m for q, may be kept, and until when.
func (a *Answerer) keep(e *entry, m *dns.Msg, q *Ask, z *index.Zone, n *index.Node) bool {
	if m.Truncated || m.Rcode != dns.RcodeSuccess && m.Rcode != dns.RcodeNameError ||
		q.Qtype == dns.TypeRRSIG || // signatures of several RRsets, each renewed on its own
		len(e.head)+len(e.tail)+len(q.Wire)+4 > MaxUDPSize {
		return false
	}
	if q.Flags&DO != 0 && z.Signer != nil && (!allSigned(m.Answer) || !allSigned(m.Ns)) {
		return false // a signature failed: answered once, never kept
	}
	// Kept by the zone's serial when more than the name's own node made it:
	// a denial, or the addresses of an MX's or SRV's targets.
	e.bySerial = e.n == nil || len(m.Ns) > 0 || additional(m.Extra)
	e.until = 0
	if n != nil && e.n != nil && n.Expires != 0 {
		// Once less than a full TTL is left to the name's expiry, its TTLs
		// shorten.
		e.until = n.Expires - int64(max(a.addressTTL, served.TTL))*1000
		if e.until <= time.Now().UnixMilli() {
			return false
		}
	}
	e.until = renewedBy(m.Ns, renewedBy(m.Answer, e.until))
	return true
}

// additional reports whether extra holds more than the OPT.
func additional(extra []dns.RR) bool {
	for _, rr := range extra {
		if rr.Header().Rrtype != dns.TypeOPT {
			return true
		}
	}
	return false
}

// pack packs m, an answer to q (compressed, or not so that its tail holds
// no pointer into the question), into an entry.
func (a *Answerer) pack(m *dns.Msg, q *Ask, compress bool) *entry {
	m.Id, m.RecursionDesired, m.CheckingDisabled, m.Compress = 0, false, false, compress
	b, err := m.Pack()
	if err != nil {
		// Nothing the plugin builds fails to pack; a server failure
		// rather than no answer if it ever does.
		log.Errorf("packing an answer to %s %s: %v", strings.Clone(q.Name), dns.TypeToString[q.Qtype], err)
		f := new(dns.Msg)
		f.Response, f.Rcode = true, dns.RcodeServerFailure
		f.Question = []dns.Question{{Name: ".", Qtype: q.Qtype, Qclass: q.Class}}
		b, _ = f.Pack()
	}
	end := 12
	for end < len(b) && b[end] != 0 {
		end += int(b[end]) + 1
	}
	end += 1 + 4
	return &entry{rcode: int(b[3] & 0x0f), answered: len(m.Answer) > 0, head: b[:12], tail: b[end:]}
}

// renewedBy is until (Unix ms, 0: for good) or, when sooner, when the
// first signature in rrs is signed again (once less than sign.Refresh is
// left to it).
func renewedBy(rrs []dns.RR, until int64) int64 {
	for _, rr := range rrs {
		if sig, ok := rr.(*dns.RRSIG); ok {
			renew := (int64(sig.Expiration) - int64(sign.Refresh/time.Second)) * 1000
			if until == 0 || renew < until {
				until = renew
			}
		}
	}
	return until
}

// allSigned reports whether every RRset in rrs has its RRSIG.
func allSigned(rrs []dns.RR) bool {
	covered := map[uint16]bool{}
	for _, rr := range rrs {
		if sig, ok := rr.(*dns.RRSIG); ok {
			covered[sig.TypeCovered] = true
		}
	}
	for _, rr := range rrs {
		if t := rr.Header().Rrtype; t != dns.TypeRRSIG && !covered[t] {
			return false
		}
	}
	return true
}
