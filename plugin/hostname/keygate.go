package hostname

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/hostmint/hostmint/app"
	"github.com/hostmint/hostmint/plugin/hostname/answer"
	"github.com/hostmint/hostmint/plugin/hostname/xfr"
	"github.com/miekg/dns"
)

// The key gate is the first handler of a server block's chain: every
// signed message passes it before any plugin (tsig, transfer, this one)
// acts on it, so one rule decides, on every path, whether its key may sign
// and what it may transfer. CoreDNS's server has verified the MAC and the
// client's own time window (w.TsigStatus) with every secret it was set up
// with: the operator's tsig block and the store's keys alike. The gate adds
// what the server cannot know:
//   - a window of at most maxFudge, whatever fudge the client sent;
//   - for a store key, its state now (accounts.Keyring.Check: revoked,
//     expired, another algorithm than its own, its team closed), which the
//     servers' secret map holds until their next reload; an UPDATE's is
//     judged by its door by the same rule (see storeKey);
//   - for a store key, the zones it may transfer (its team's own domain,
//     whole; never a pool domain or the catalog). The operator's keys, and
//     transfer's address list, admit any transfer, as DESIGN says.
// A TSIG error is answered here, by writeTSIGError, for every path alike.

// keyGateName is the gate's name in the chain (CoreDNS registers handlers
// by name: it must not be this plugin's).
const keyGateName = "hostname_tsig"

// maxFudge caps the time window of a signed message, in seconds (RFC 8945
// 5.2.3 leaves it to the server): a client's fudge of 65535 does not
// stretch it to 18 hours. It is the window the UPDATE door remembers MACs
// for (app.TSIGWindow), so no message it accepts is one it forgot.
const maxFudge = uint64(app.TSIGWindow / time.Second)

type keyGate struct {
	h    *Handler
	Next plugin.Handler
	// operator are the tsig block's key names (lowercase FQDN): not the store's.
	operator map[string]bool
}

func (g *keyGate) Name() string { return keyGateName }

type signatureKey struct{}

// signatureOf is the TSIG record of the request ctx carries, as the gate
// let it through (the tsig plugin strips it from the message); nil when
// the request was not signed.
func signatureOf(ctx context.Context) *dns.TSIG {
	t, _ := ctx.Value(signatureKey{}).(*dns.TSIG)
	return t
}

// ServeDNS implements plugin.Handler.
func (g *keyGate) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	t := r.IsTsig()
	if t == nil {
		if rcode, done := g.h.serveUDPIXFR(w, r); done {
			return rcode, nil
		}
		return plugin.NextOrFailure(g.Name(), g.Next, ctx, w, r)
	}
	status := w.TsigStatus()
	if status == nil && skew(t.TimeSigned, time.Now()) > maxFudge {
		status = dns.ErrTime
	}
	if status != nil {
		tsigRefused.WithLabelValues(tsigReason(status)).Inc()
		return writeTSIGError(w, r, t, status)
	}
	if !g.operator[strings.ToLower(t.Hdr.Name)] {
		if rcode, refused := g.storeKey(ctx, w, r, t); refused {
			return rcode, nil
		}
	}
	return plugin.NextOrFailure(g.Name(), g.Next, context.WithValue(ctx, signatureKey{}, t), w, r)
}

// storeKey answers r, signed with the store's key of t, when the key may
// not sign now or may not transfer what r asks for.
func (g *keyGate) storeKey(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, t *dns.TSIG) (int, bool) {
	n := g.h.keyNode()
	if n == nil {
		// Not started, or no dynamic_update: no store key is verified then,
		// so a key here is one the node cannot judge yet.
		m := new(dns.Msg).SetRcode(r, dns.RcodeServerFailure)
		w.WriteMsg(m)
		return dns.RcodeSuccess, true
	}
	// An UPDATE's key is judged by its door, by the same rule
	// (dnsupdate asks accounts.Keyring.Principal), which also records the
	// MAC of a message refused for a state that can change back (a team
	// suspended, then restored), so it cannot be replayed then.
	if r.Opcode != dns.OpcodeUpdate {
		if err := n.CheckTSIG(t.Hdr.Name, t.Algorithm); err != nil {
			tsigRefused.WithLabelValues("key").Inc()
			rcode, _ := writeTSIGError(w, r, t, dns.ErrSecret)
			return rcode, true
		}
	}
	if !asksTransfer(r) {
		return 0, false
	}
	zone := strings.TrimSuffix(strings.ToLower(r.Question[0].Name), ".")
	ok, err := n.MayTransferTSIG(ctx, t.Hdr.Name, t.Algorithm, zone)
	if ok && err == nil {
		return 0, false
	}
	rcode := dns.RcodeRefused
	if err != nil {
		log.Errorf("checking a transfer of %s signed with %s: %v", zone, t.Hdr.Name, err)
		rcode = dns.RcodeServerFailure
	} else {
		xfr.RefusedByKey()
	}
	m := new(dns.Msg).SetRcode(r, rcode)
	if o := r.IsEdns0(); o != nil {
		m.SetEdns0(answer.MaxUDPSize, o.Do()) // the OPT before the TSIG
	}
	m.SetTsig(t.Hdr.Name, t.Algorithm, uint16(maxFudge), time.Now().Unix())
	w.WriteMsg(m) // signed by the server: the key is good, its reach is not
	return dns.RcodeSuccess, true
}

// asksTransfer reports whether r asks for a zone transfer.
func asksTransfer(r *dns.Msg) bool {
	if r.Opcode != dns.OpcodeQuery || len(r.Question) != 1 {
		return false
	}
	q := r.Question[0].Qtype
	return q == dns.TypeAXFR || q == dns.TypeIXFR
}

// skew is how far signed is from now, in seconds, either way.
func skew(signed uint64, now time.Time) uint64 {
	s := uint64(now.Unix())
	if s > signed {
		return s - signed
	}
	return signed - s
}

// tsigReason names a TSIG error for coredns_hostname_tsig_refused_total.
func tsigReason(status error) string {
	switch status {
	case dns.ErrSecret, dns.ErrKeyAlg:
		return "key"
	case dns.ErrTime:
		return "time"
	}
	return "signature"
}

// writeTSIGError answers r, whose signature t did not pass, NOTAUTH with
// the TSIG error (RFC 8945 5.3.2), its OPT (when r had one) before the
// TSIG as RFC 6891 and 8945 place them. BADTIME is signed over the
// client's time with the server's own in Other Data (5.2.3), so the client
// can tell clock skew; BADKEY and BADSIG carry no MAC and the client's
// time, written as they are (the server's signer would zero that time
// along with the MAC, and clients then report clock skew instead).
func writeTSIGError(w dns.ResponseWriter, r *dns.Msg, t *dns.TSIG, status error) (int, error) {
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeNotAuth)
	if o := r.IsEdns0(); o != nil {
		m.SetEdns0(answer.MaxUDPSize, o.Do())
	}
	rt := &dns.TSIG{Hdr: dns.RR_Header{Name: t.Hdr.Name, Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
		Algorithm: t.Algorithm, TimeSigned: t.TimeSigned, Fudge: t.Fudge, OrigId: r.Id}
	switch status {
	case dns.ErrSecret, dns.ErrKeyAlg:
		rt.Error = dns.RcodeBadKey
	case dns.ErrTime:
		rt.Error = dns.RcodeBadTime
		b := make([]byte, 8)
		binary.BigEndian.PutUint64(b, uint64(time.Now().Unix()))
		rt.OtherData, rt.OtherLen = hex.EncodeToString(b[2:]), 6
	default:
		rt.Error = dns.RcodeBadSig
	}
	m.Extra = append(m.Extra, rt)
	if r.Opcode == dns.OpcodeUpdate {
		countUpdate(dns.RcodeNotAuth)
	}
	if rt.Error == dns.RcodeBadTime {
		w.WriteMsg(m) // signed by the server, over the times above
		return dns.RcodeSuccess, nil
	}
	b, err := m.Pack()
	if err != nil {
		return dns.RcodeServerFailure, err
	}
	w.Write(b)
	return dns.RcodeSuccess, nil
}
