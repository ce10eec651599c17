package fastudp

import (
	"encoding/binary"
	"unsafe"

	"github.com/miekg/dns"
)

// Query is a plain query read from a datagram.
type Query struct {
	Name     string // lowercase FQDN: the bytes ParseQuery was given, not to be kept
	Wire     []byte // the name on the wire, as asked
	Qtype    uint16
	ID       uint16
	RD       bool
	EDNS, DO bool // it has an OPT, with the DO bit
	CO       bool // and the CO bit (RFC 9824 4)
	Limit    int  // the largest answer the client takes: its buffer, at most maxUDPSize
}

// maxUDPSize caps a UDP answer whatever EDNS buffer the client claims
// (the plugin's, the DNS Flag Day 2020 size).
const maxUDPSize = 1232

// ParseQuery reads a plain query from q: one question of class IN whose
// name is letters, digits, '-' and '_' (lowercased into name, dotted), and
// at most an OPT of version 0 with no options, nothing else. false for
// anything else: the full server reads it.
func ParseQuery(q []byte, name *[256]byte) (Query, bool) {
	var p Query
	// ID, QR clear and opcode QUERY, rcode 0; one question, no answers
	// or authority, at most one additional record.
	if len(q) < 17 || q[2]&0xf8 != 0 || q[3]&0x0f != 0 ||
		binary.BigEndian.Uint16(q[4:]) != 1 || binary.BigEndian.Uint16(q[6:]) != 0 || binary.BigEndian.Uint16(q[8:]) != 0 {
		return p, false
	}
	ar := binary.BigEndian.Uint16(q[10:])
	off, n := 12, 0
	for {
		if off >= len(q) {
			return p, false
		}
		l := int(q[off])
		off++
		if l == 0 {
			break
		}
		if l > 63 || off+l > len(q) || n+l+1 > 254 {
			return p, false // a pointer, or too long
		}
		for _, c := range q[off : off+l] {
			switch {
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
			default:
				return p, false // escaped in presentation form
			}
			name[n] = c
			n++
		}
		name[n] = '.'
		n++
		off += l
	}
	if n == 0 || off+4 > len(q) || binary.BigEndian.Uint16(q[off+2:]) != dns.ClassINET {
		return p, false
	}
	p.Name, p.Wire = unsafe.String(&name[0], n), q[12:off]
	p.Qtype = binary.BigEndian.Uint16(q[off:])
	p.ID, p.RD = binary.BigEndian.Uint16(q), q[2]&0x01 != 0
	off += 4
	p.Limit = dns.MinMsgSize
	switch {
	case ar == 0 && off == len(q):
		return p, true
	case ar == 1 && off+11 == len(q):
		// OPT: root owner, type 41, class the buffer size, TTL: the
		// extended rcode (the answer clears it), version 0, DO (the
		// answer's OPT has no other flag); no options.
		if q[off] != 0 || binary.BigEndian.Uint16(q[off+1:]) != dns.TypeOPT || q[off+6] != 0 ||
			binary.BigEndian.Uint16(q[off+9:]) != 0 {
			return p, false
		}
		p.Limit = min(max(int(binary.BigEndian.Uint16(q[off+3:])), dns.MinMsgSize), maxUDPSize)
		p.EDNS, p.DO, p.CO = true, q[off+7]&0x80 != 0, q[off+7]&0x40 != 0
		return p, true
	}
	return p, false
}
