package hostname

import (
	"net/netip"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/miekg/dns"
)

// The fast path's answers: what ServeDNS would send, from the bytes it
// kept (wire.go, denialwire.go), rate limited and counted as it is.

// fastAnswerer answers queries from names' packed answers, for one
// server: routes are its zone keys, true where this block is the one the
// server gives the key's names to.
type fastAnswerer struct {
	h      *Handler
	routes map[string]bool
	ours   sync.Map // zone name -> bool: the server gives every name of the zone here
	// missing holds the zones' NXDOMAIN answers: missingKey -> *missingWire.
	missing sync.Map
}

// Answer implements udpbatch.Answerer: the answer ServeDNS would send, for
// a name whose answer is kept as bytes (serveWire), a name that does not
// exist (the zone's NXDOMAIN, or with DO in a signed zone the denial kept
// for it); nil for every other query, which the CoreDNS server answers.
func (a *fastAnswerer) Answer(buf, q []byte, client netip.AddrPort) ([]byte, bool) {
	h := a.h
	var nb [256]byte
	p, ok := parseQuery(q, &nb)
	if !ok || !h.index.Loaded() {
		return nil, false
	}
	qname := unsafe.String(&nb[0], p.nameLen) // looked up, never kept
	z := h.index.zoneOf(qname)
	if z == nil || z.unservable() || qname == z.name || !fromBytes(p.qtype, z) || !a.routed(z) {
		return nil, false
	}
	n := z.names.get(qname)
	if n == nil {
		return a.answerMissing(buf, q, p, qname, z, client)
	}
	e := h.wire.get(n, z, p.qtype, p.flags, time.Now().UnixMilli())
	if e == nil || len(e.msg) > min(p.size, maxUDPSize) {
		return nil, false
	}
	return a.respond(buf, q, p, client, rrlAnswer, qname, dns.RcodeSuccess, z.kind, e.msg)
}

// respond sends the answer made of parts, with rcode, to the query q:
// rate limited as class and name, counted, and with the query's ID, RD and
// CD bits and the case of its name.
func (a *fastAnswerer) respond(buf, q []byte, p query, client netip.AddrPort, class int, name string, rcode int, kind string, parts ...[]byte) ([]byte, bool) {
	qtype := p.qtype
	if class == rrlNXDomain {
		qtype = 0
	}
	if drop, slip := a.limited(client, class, name, qtype); drop {
		return nil, true
	} else if slip {
		return slipped(buf, q, p, rcode), false
	}
	countAnswer(rcode, p.qtype, kind)
	b := buf
	for _, part := range parts {
		b = append(b, part...)
	}
	b[0], b[1] = q[0], q[1]
	b[2] |= q[2] & 0x01              // RD
	b[3] |= q[3] & 0x10              // CD
	copy(b[12:], q[12:12+p.wireLen]) // the question's case
	return b, false
}

// fromBytes reports whether a query of qtype in z may be answered from
// bytes: not the types ServeDNS (or a plugin before it) answers otherwise
// than a name's records or its denial: transfers (REFUSED), meta-types
// (NOTIMP), ANY (the any plugin), DS (the server routes it to a parent's
// block when it has one), and in a signed zone NSEC and RRSIG (answered,
// never denied).
func fromBytes(qtype uint16, z *zone) bool {
	switch qtype {
	case dns.TypeAXFR, dns.TypeIXFR, dns.TypeTKEY, dns.TypeTSIG, dns.TypeMAILA, dns.TypeMAILB, dns.TypeANY, dns.TypeDS:
		return false
	case dns.TypeNSEC, dns.TypeRRSIG:
		return z.signer == nil && !z.signed
	}
	return true
}

// answerMissing answers qname, which has no node in z: NXDOMAIN, as answer()
// writes it, when nothing else makes the name exist and no signature is
// asked for.
func (a *fastAnswerer) answerMissing(buf, q []byte, p query, qname string, z *zone, client netip.AddrPort) ([]byte, bool) {
	h := a.h
	if h.static[qname] != "" || h.aboveStatic(qname) || h.aboveRegistrations(qname) ||
		h.cfg.catalog != "" && strings.HasSuffix(qname, h.cfg.catalog) {
		return nil, false
	}
	if p.flags&wireDO != 0 && z.signer != nil {
		return a.answerDenial(buf, q, p, z, client)
	}
	w := a.missingWire(z, p.flags)
	if w == nil || len(w.head)+p.questionEnd-12+len(w.tail) > min(p.size, maxUDPSize) {
		return nil, false
	}
	// NXDOMAINs by zone, as allowedRaw counts them.
	return a.respond(buf, q, p, client, rrlNXDomain, z.name, dns.RcodeNameError, z.kind, w.head, q[12:p.questionEnd], w.tail)
}

// answerDenial answers a missing name of a signed zone, asked with DO,
// from the denial ServeDNS sent for it (keepDenial): NOERROR with the
// name's signed NSEC.
func (a *fastAnswerer) answerDenial(buf, q []byte, p query, z *zone, client netip.AddrPort) ([]byte, bool) {
	h := a.h
	e := h.denials.get(z, q[12:12+p.wireLen], p.flags, h.index.serial.Load(), time.Now().UnixMilli())
	if e == nil || len(e.head)+p.questionEnd-12+len(e.tail) > min(p.size, maxUDPSize) {
		return nil, false
	}
	// Denials by zone, as allowedRaw counts them.
	return a.respond(buf, q, p, client, rrlNXDomain, z.name, dns.RcodeSuccess, z.kind, e.head, q[12:p.questionEnd], e.tail)
}

// limited applies response_rate_limit as allowedRaw does.
func (a *fastAnswerer) limited(client netip.AddrPort, class int, name string, qtype uint16) (drop, slip bool) {
	if a.h.rrl == nil {
		return false, false
	}
	switch a.h.rrl.verdict(client.Addr(), class, strings.Clone(name), qtype) {
	case rrlDrop:
		rrlResponses[rrlDrop].Inc()
		return true, false
	case rrlSlip:
		rrlResponses[rrlSlip].Inc()
		return false, true
	}
	return false, false
}

// routed reports whether the server gives every name of z to this block:
// the nearest of its keys at or above z is this block's, and none of its
// keys is below z (another block's zone inside it).
func (a *fastAnswerer) routed(z *zone) bool {
	if v, ok := a.ours.Load(z.name); ok {
		return v.(bool)
	}
	ours := a.routes["."] // the server's last resort
	for k := range a.routes {
		if k != z.name && dns.IsSubDomain(z.name, k) {
			a.ours.Store(z.name, false)
			return false
		}
	}
	for off, end := 0, false; !end; off, end = dns.NextLabel(z.name, off) {
		if v, ok := a.routes[z.name[off:]]; ok {
			ours = v
			break
		}
	}
	a.ours.Store(z.name, ours)
	return ours
}

// missingWire is a zone's NXDOMAIN answer around the question, for each
// of the query flags it depends on (none, EDNS, EDNS with DO), at one
// serial: packed uncompressed, as write() sends it, so the question can be
// any name's.
type missingWire struct {
	zone       uintptr // the *zone it was packed for: kept by address, not kept alive
	serial     uint32
	head, tail []byte
}

type missingKey struct {
	zone  string
	flags uint8
}

// missingWire is z's NXDOMAIN answer for queries with flags, packed
// again when the serial or the flags change.
func (a *fastAnswerer) missingWire(z *zone, flags uint8) *missingWire {
	h := a.h
	serial := h.index.serial.Load()
	if v, ok := a.missing.Load(missingKey{z.name, flags}); ok {
		if w := v.(*missingWire); w.serial == serial && w.zone == uintptr(unsafe.Pointer(z)) {
			return w
		}
	}
	m := new(dns.Msg)
	m.Response, m.Authoritative, m.Rcode = true, true, dns.RcodeNameError
	m.Question = []dns.Question{{Name: ".", Qtype: dns.TypeA, Qclass: dns.ClassINET}}
	m.Ns = []dns.RR{h.soa(z, h.cfg.app.SOA.Minimum)}
	if flags&wireEDNS != 0 {
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(maxUDPSize)
		if flags&wireDO != 0 {
			o.SetDo()
		}
		m.Extra = []dns.RR{o}
	}
	b, err := m.Pack()
	if err != nil {
		return nil
	}
	w := &missingWire{zone: uintptr(unsafe.Pointer(z)), serial: serial, head: b[:12], tail: b[12+5:]}
	a.missing.Store(missingKey{z.name, flags}, w)
	return w
}

// slipped is RRL's truncated reply to the query q: its question, and its
// OPT as the server's writer hands it back (flags but DO cleared), rcode,
// AA and TC set, as allowedRaw sends it.
func slipped(buf, q []byte, p query, rcode int) []byte {
	b := append(buf, q[:p.questionEnd]...)
	b[2] = b[2]&0x79 | 0x80 | 0x04 | 0x02 // QR, AA, TC; opcode and RD kept
	b[3] = b[3]&0x10 | byte(rcode)        // CD kept
	clear(b[6:12])                        // no answer, authority or additional records
	if p.flags&wireEDNS != 0 {
		b[11] = 1
		opt := len(b)
		b = append(b, q[p.questionEnd:p.questionEnd+11]...)
		b[opt+5], b[opt+8] = 0, 0 // extended rcode, the flags' low octet
	}
	return b
}
