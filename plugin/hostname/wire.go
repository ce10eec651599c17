package hostname

import (
	"sync"
	"time"
	"unsafe"

	"github.com/coredns/coredns/plugin/metrics"
	"github.com/coredns/coredns/plugin/pkg/cache"
	"github.com/coredns/coredns/request"
	"github.com/hostmint/hostmint/served"
	"github.com/miekg/dns"
)

// A name's positive answers are packed once per version of the name and
// kept on the wire: a query for it copies the bytes and patches the
// message ID, the RD and CD bits and the question's case, instead of
// building records, sizing, compressing and packing a message each time.
// An entry belongs to one *node and one *zone, both replaced whole when
// they change, so a change never serves stale bytes: the next query finds
// no entry for the new node and packs again. Only answers that hold the
// same bytes for every query qualify: no SOA (its serial moves with every
// change), no TSIG, nothing truncated; an entry whose TTLs would shorten
// (an expiring name) or whose signature is due for renewal expires.

// wireCacheSize bounds the entries (random eviction when full): a scan of
// every name costs a bounded amount of memory, and hot names stay.
const wireCacheSize = 100_000

// Query flags an answer's bytes depend on.
const (
	wireEDNS uint8 = 1 << iota // the query had an OPT: the answer has ours
	wireDO                     // and its DO bit
)

type wireAnswer struct {
	n     *node
	z     *zone
	qtype uint16
	flags uint8
	until int64  // Unix ms the bytes are good until; 0: for good
	msg   []byte // ID 0, RD and CD clear, question in lowercase
}

type wireCache struct{ c *cache.Cache[*wireAnswer] }

func newWireCache() *wireCache { return &wireCache{c: cache.New[*wireAnswer](wireCacheSize)} }

// wireKey mixes the node's address with the question: entries hold their
// node, so an address is not reused while its entry exists.
func wireKey(n *node, qtype uint16, flags uint8) uint64 {
	return mix64(uint64(uintptr(unsafe.Pointer(n))) ^ uint64(qtype)<<48 ^ uint64(flags)<<40)
}

func (c *wireCache) get(n *node, z *zone, qtype uint16, flags uint8, now int64) *wireAnswer {
	e, ok := c.c.Get(wireKey(n, qtype, flags))
	if !ok || e.n != n || e.z != z || e.qtype != qtype || e.flags != flags || e.until != 0 && now >= e.until {
		return nil
	}
	return e
}

// wireFlags are the flags of r that its answer's bytes depend on; false
// when r is not a plain query whose answer can come from bytes: no OPT
// (then the answer has none), or one OPT of version 0 whose options are
// dropped anyway (CoreDNS copies none it was not told of), and nothing else
// (a TSIG needs its own MAC).
func wireFlags(r *dns.Msg) (uint8, bool) {
	if r.Opcode != dns.OpcodeQuery || len(r.Question) != 1 || r.Question[0].Qclass != dns.ClassINET ||
		len(r.Answer) != 0 || len(r.Ns) != 0 {
		return 0, false
	}
	switch len(r.Extra) {
	case 0:
		return 0, true
	case 1:
		o, ok := r.Extra[0].(*dns.OPT)
		// A flag besides DO in the OPT's high octet is echoed in the
		// answer (request.SizeAndDo keeps that octet): not every client's.
		if !ok || o.Version() != 0 || o.Hdr.Ttl&0x7f00 != 0 {
			return 0, false
		}
		if o.Do() {
			return wireEDNS | wireDO, true
		}
		return wireEDNS, true
	}
	return 0, false
}

// rawWriter is how to send packed bytes to w: nil when a plugin before
// this one wrapped w to read the messages it sends (log, cache, dnstap,
// nsid): they get messages. Between the server's writer and this plugin
// may stand only what passes bytes on: CoreDNS's own per-plugin wrapper
// (plugin.NextOrFailure's, which notes the plugin that wrote), and
// prometheus's recorder, which counts and is told the rcode (rec). out is
// w itself, so that each of them sees the write.
func rawWriter(w dns.ResponseWriter) (out dns.ResponseWriter, rec *metrics.Recorder) {
	for inner := w; ; {
		switch rw := inner.(type) {
		case *request.ScrubWriter:
			return w, rec
		case *metrics.Recorder:
			rec, inner = rw, rw.ResponseWriter
		default:
			next, ok := unwrapPluginWriter(inner)
			if !ok {
				return nil, nil
			}
			inner = next
		}
	}
}

// sendRaw sends b, an answer with rcode, to out (from rawWriter).
func sendRaw(out dns.ResponseWriter, rec *metrics.Recorder, b []byte, rcode int) {
	if rec != nil {
		rec.Rcode = rcode
	}
	out.Write(b)
}

// wireBufs hold a packed answer on its way out: room for any UDP answer
// and its uncompressed form, which packing sizes first.
var wireBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// serveWire answers r from n's packed answer, if it has one that fits;
// false when it has not, and nothing was sent.
func (h *Handler) serveWire(w dns.ResponseWriter, r *dns.Msg, state request.Request, z *zone, n *node, qname string) bool {
	out, rec := rawWriter(w)
	if out == nil {
		return false
	}
	flags, ok := wireFlags(r)
	if !ok {
		return false
	}
	qtype := r.Question[0].Qtype
	e := h.wire.get(n, z, qtype, flags, time.Now().UnixMilli())
	if e == nil {
		return false
	}
	udp := state.Proto() == "udp"
	if udp && len(e.msg) > min(state.Size(), maxUDPSize) {
		return false
	}
	if h.rrl != nil && udp && !h.allowedRaw(w, r, dns.RcodeSuccess, true, qname, qtype, z.name) {
		return true
	}
	bp := wireBufs.Get().(*[]byte)
	b := append((*bp)[:0], e.msg...)
	b[0], b[1] = byte(r.Id>>8), byte(r.Id)
	if r.RecursionDesired {
		b[2] |= 1
	}
	if r.CheckingDisabled {
		b[3] |= 0x10
	}
	if _, err := dns.PackDomainName(r.Question[0].Name, b, 12, nil, false); err != nil {
		wireBufs.Put(bp)
		return false
	}
	countAnswer(dns.RcodeSuccess, qtype, z.kind)
	sendRaw(out, rec, b, dns.RcodeSuccess)
	*bp = b
	wireBufs.Put(bp)
	return true
}

// wireUntil is when n's answers stop holding the same bytes: once less
// than a full TTL is left to its expiry, TTLs shorten; -1 when they already
// have.
func (h *Handler) wireUntil(n *node) int64 {
	if n.expires == 0 {
		return 0
	}
	until := n.expires - int64(max(h.cfg.addressTTL, served.TTL))*1000
	if until <= time.Now().UnixMilli() {
		return -1
	}
	return until
}

// keepWire stores m, the answer just built for r from node n of zone z,
// when its bytes will do for every query of the same name, type and
// flags until until (Unix ms, 0: for good).
func (h *Handler) keepWire(r, m *dns.Msg, z *zone, n *node, until int64) {
	flags, ok := wireFlags(r)
	if !ok || until < 0 || m.Rcode != dns.RcodeSuccess || m.Truncated || len(m.Answer) == 0 || len(m.Ns) != 0 ||
		r.Question[0].Qtype == dns.TypeRRSIG { // signatures of several RRsets, each renewed on its own
		return
	}
	for _, rr := range m.Extra {
		// Nothing but our own, bare OPT: an option one client's query had
		// (CoreDNS copies those a plugin registered) is not every client's.
		if o, ok := rr.(*dns.OPT); !ok || len(o.Option) > 0 {
			return
		}
	}
	if flags&wireDO != 0 && z.signer != nil && !allSigned(m.Answer) {
		return // a signature failed: answered once, never kept
	}
	until = renewedBy(m.Answer, until)
	c := m.Copy()
	c.Id, c.RecursionDesired, c.CheckingDisabled, c.Compress = 0, false, false, true
	c.Question = []dns.Question{{Name: lowerName(r.Question[0].Name), Qtype: r.Question[0].Qtype, Qclass: dns.ClassINET}}
	for _, rr := range c.Answer { // owners as the question, so that they point at it
		if dns.CanonicalName(rr.Header().Name) == c.Question[0].Name {
			rr.Header().Name = c.Question[0].Name
		}
	}
	b, err := c.Pack()
	if err != nil || flags&wireEDNS == 0 && len(b) > dns.MinMsgSize || len(b) > maxUDPSize {
		return
	}
	h.wire.c.Add(wireKey(n, r.Question[0].Qtype, flags), &wireAnswer{n: n, z: z, qtype: r.Question[0].Qtype, flags: flags, until: until, msg: b})
}

// renewedBy is until (Unix ms, 0: for good) or, when sooner, when the
// first signature in rrs is signed again (once less than sigRefresh is
// left to it).
func renewedBy(rrs []dns.RR, until int64) int64 {
	for _, rr := range rrs {
		if sig, ok := rr.(*dns.RRSIG); ok {
			renew := (int64(sig.Expiration) - int64(sigRefresh/time.Second)) * 1000
			if until == 0 || renew < until {
				until = renew
			}
		}
	}
	return until
}

// lowerName lowercases the ASCII letters of a presentation-form name.
func lowerName(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return dns.CanonicalName(s)
		}
	}
	return s
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
