package dnsupdate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/profile"
	"github.com/hostmint/hostmint/served"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// MaxUpdates bounds the prerequisites and updates of one message: more is
// FORMERR. A DNS-01 order or a repoint takes a handful; the bound keeps
// one message from holding a transaction for long.
const MaxUpdates = 64

// Updater applies UPDATE messages through the rules.
type Updater struct {
	store   *storage.Store
	keys    *accounts.Keyring
	rules   hostnames.Rules
	profile profile.Profile
	// Audit records each message: begin before its transaction, finish
	// with its outcome; nil records nothing.
	Audit Auditor
	// zones are the served domains by name, as read: a domain is never
	// deleted and its id never changes, so a message does not read its
	// zone's row again (a name not found is read again each time).
	zones sync.Map // name -> *storage.Domain
	// ns and soa are what the apexes serve from configuration (WithApex).
	ns  served.Nameservers
	soa served.SOA
}

// Auditor is the audit log as the door uses it.
type Auditor interface {
	Begin(ctx context.Context, e *storage.AuditEntry) context.Context
	Finish(e *storage.AuditEntry, a Answer)
}

// New makes an Updater over the rules; keys says who a key acts for.
func New(store *storage.Store, keys *accounts.Keyring, rules hostnames.Rules, p profile.Profile) *Updater {
	return &Updater{store: store, keys: keys, rules: rules, profile: p}
}

// ErrBadKey is Update's error for a key that may not sign (revoked since
// the server verified it, or never issued): NOTAUTH with TSIG error BADKEY.
var ErrBadKey = errors.New("dnsupdate: the TSIG key may not sign")

// Update applies r, signed with sig (the request's TSIG record as the
// server verified it: its key name, algorithm, time and MAC), from the
// client at addr (for the audit log). A message whose MAC was seen before
// is not applied again (replay.go).
func (u *Updater) Update(ctx context.Context, sig *dns.TSIG, addr string, r *dns.Msg) (Answer, error) {
	seen, a := seenOf(sig, time.Now())
	if a != nil {
		return *a, nil
	}
	key, algorithm := sig.Hdr.Name, sig.Algorithm
	zone, a := checkZone(r)
	if a != nil {
		return *a, nil
	}
	if a := checkSections(r, zone); a != nil {
		return *a, nil
	}
	p, err := u.keys.Principal(ctx, key, algorithm)
	if errors.Is(err, accounts.ErrClosedTeam) {
		// Its team may be restored within the window: the MAC is kept, so
		// the message is not applied then.
		u.unapplied(ctx, seen, Answer{Rcode: dns.RcodeNotAuth})
	}
	if errors.Is(err, accounts.ErrUnknownTSIGKey) || errors.Is(err, accounts.ErrClosedTeam) {
		return Answer{Rcode: dns.RcodeNotAuth}, ErrBadKey
	}
	if err != nil {
		return u.unapplied(ctx, seen, answerOf(err)), nil
	}
	e := &storage.AuditEntry{Actor: "tsig:" + p.KeyID, AccountID: p.AccountID, Action: "DNS UPDATE " + zone, Address: addr}
	if u.Audit != nil {
		ctx = u.Audit.Begin(ctx, e)
	}
	out := u.apply(ctx, p, zone, r, seen)
	if u.Audit != nil {
		u.Audit.Finish(e, out)
	}
	return out, nil
}

func (u *Updater) apply(ctx context.Context, p *access.Principal, zone string, r *dns.Msg, seen *storage.SeenMAC) Answer {
	dom, err := u.zone(ctx, zone)
	if errors.Is(err, storage.ErrNotFound) {
		return u.unapplied(ctx, seen, refuse(dns.RcodeNotAuth, dns.ExtendedErrorCodeNotAuthoritative, fmt.Sprintf("zone %s is not served here", zone)))
	}
	if err != nil {
		return u.unapplied(ctx, seen, answerOf(err))
	}
	if e, ok := u.expect(p, dom, r); ok {
		ctx = storage.Expect(ctx, e)
	}
	// The account's other writes (API or UPDATE) share their commits.
	err = u.store.WriteAllGrouped(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		z := &zoneState{u: u, dom: dom, tx: tx, q: tx.Queries, p: p, names: map[string]*node{}}
		if err := z.readAll(ctx, r); err != nil {
			return err
		}
		if err := z.prerequisites(ctx, r.Answer); err != nil {
			return err
		}
		for _, rr := range r.Ns {
			if err := z.update(ctx, rr); err != nil {
				return err
			}
		}
		if !z.changes() {
			// As a no-op PUT: no audit entry, no change row, no serial.
			tx.NothingChanged()
		} else if err := z.commit(ctx, p); err != nil {
			return err
		}
		tx.RecordMACLater(seen)
		return nil
	})
	if err == nil {
		return ok
	}
	if errors.Is(err, storage.ErrSeenMAC) {
		return replayed
	}
	out := answerOf(err)
	var rej *rejection
	if errors.As(err, &rej) {
		out = rej.Answer
	}
	return u.unapplied(ctx, seen, out)
}

// expect is the read r's first name makes (readAll, which reads the names
// in sortedNames' order), when a batch can make it with its other parts'
// (storage.Expect). It needs no care to stay right: a part takes the
// batch's answer only if it makes the very same calls (storage compares
// them), so an expect that drifted from readAll costs a round trip.
func (u *Updater) expect(p *access.Principal, dom *storage.Domain, r *dns.Msg) (storage.Expected, bool) {
	z := &zoneState{u: u, dom: dom}
	for _, name := range z.sortedNames(r) {
		switch kind, label := z.kindOf(name); {
		case kind == kindHostname:
			return u.rules.Lifecycle.ExpectLabel(p, dom, label)
		case label != "":
			return storage.Expected{}, false
		}
	}
	return storage.Expected{}, false
}

// zone is the served domain named name. Only its name and id are used:
// the rules read the domain itself where they need it (minting on it).
func (u *Updater) zone(ctx context.Context, name string) (*storage.Domain, error) {
	if d, ok := u.zones.Load(name); ok {
		return d.(*storage.Domain), nil
	}
	d, err := u.store.Reader().DomainByName(ctx, name)
	if err != nil {
		return nil, err
	}
	u.zones.Store(name, d)
	return d, nil
}

// checkZone reads the zone section (RFC 2136 3.1): one SOA question of
// class IN, whose name is the zone.
func checkZone(r *dns.Msg) (string, *Answer) {
	if len(r.Question) != 1 || r.Question[0].Qtype != dns.TypeSOA || r.Question[0].Qclass != dns.ClassINET {
		a := refuse(dns.RcodeFormatError, dns.ExtendedErrorCodeOther, "the zone section must hold one SOA question of class IN")
		return "", &a
	}
	return lower(r.Question[0].Name), nil
}

// checkSections is the prescan of RFC 2136 3.2 and 3.4.1: every record in
// the zone, each class and type used as the RFC allows, nothing more than
// MaxUpdates.
func checkSections(r *dns.Msg, zone string) *Answer {
	if n := len(r.Answer) + len(r.Ns); n > MaxUpdates {
		a := refuse(dns.RcodeFormatError, dns.ExtendedErrorCodeOther, fmt.Sprintf("%d prerequisites and updates; at most %d a message", n, MaxUpdates))
		return &a
	}
	for _, rr := range append(append([]dns.RR{}, r.Answer...), r.Ns...) {
		if !dns.IsSubDomain(zone+".", dns.Fqdn(lower(rr.Header().Name))) {
			a := refuse(dns.RcodeNotZone, dns.ExtendedErrorCodeOther, fmt.Sprintf("%s is outside zone %s", lower(rr.Header().Name), zone))
			return &a
		}
	}
	for _, rr := range r.Answer {
		h := rr.Header()
		if h.Ttl != 0 || h.Class != dns.ClassINET && h.Class != dns.ClassANY && h.Class != dns.ClassNONE ||
			h.Class != dns.ClassINET && !empty(rr) || h.Class == dns.ClassINET && (meta(h.Rrtype) || empty(rr)) {
			a := refuse(dns.RcodeFormatError, dns.ExtendedErrorCodeOther, fmt.Sprintf("prerequisite %s is malformed (RFC 2136 2.4)", rr))
			return &a
		}
	}
	for _, rr := range r.Ns {
		h := rr.Header()
		bad := meta(h.Rrtype) && !(h.Rrtype == dns.TypeANY && h.Class == dns.ClassANY)
		switch h.Class {
		case dns.ClassINET:
			bad = bad || h.Rrtype == dns.TypeANY
		case dns.ClassANY:
			bad = bad || h.Ttl != 0 || !empty(rr)
		case dns.ClassNONE:
			bad = bad || h.Ttl != 0 || h.Rrtype == dns.TypeANY
		default:
			bad = true
		}
		if bad {
			a := refuse(dns.RcodeFormatError, dns.ExtendedErrorCodeOther, fmt.Sprintf("update %s is malformed (RFC 2136 2.5)", rr))
			return &a
		}
	}
	return nil
}

// meta reports the types no update may carry: the query-only and
// transaction types.
func meta(t uint16) bool {
	switch t {
	case dns.TypeANY, dns.TypeAXFR, dns.TypeIXFR, dns.TypeMAILA, dns.TypeMAILB, dns.TypeTSIG, dns.TypeTKEY, dns.TypeOPT:
		return true
	}
	return false
}

// empty reports an RR without rdata (rdlength 0), as class ANY and NONE
// prerequisites and RRset deletes carry.
func empty(rr dns.RR) bool { return rr.Header().Rdlength == 0 }

func lower(name string) string { return strings.TrimSuffix(strings.ToLower(name), ".") }
