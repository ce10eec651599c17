package xfr

import (
	"runtime"
	"slices"
	"sync"

	"github.com/hostmint/hostmint/plugin/hostname/chain"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/miekg/dns"
)

// A signed zone's IXFR states what changed between the secondary's serial
// and now, signatures and chain included. The zone at a serial is a
// function of its names then, the clock then and the key (package chain),
// so what the secondary holds is made again from the journal's old nodes
// at the old serial's clock: no second journal of what was sent.
//
// The names whose records or chain record may differ are the names
// changed, the apex (its SOA's signature differs at every serial), and the
// name before each changed one in the chain now: a name whose next key
// changed is the one before a name that joined the chain or left it
// (before it now, or, for one that left, before where it was, which is the
// same name, since nothing between them is in the chain at either end).
// When the clock crossed hours, the names whose windows moved meanwhile
// are renewed too; when the key set changed (a rollover's step), every
// name is.

// wholeIXFR is how many names an IXFR restates at most before the whole
// zone answers instead, when they are most of it.
const wholeIXFR = 50_000

// owner is one name an IXFR restates: what it held at the secondary's
// serial and what it holds now.
type owner struct {
	key, name        string
	old, now         *index.Node
	inOld, inNow     bool   // in the chain at each end
	nextOld, nextNow string // the key after it at each end
}

// signedIXFR is the difference of signed zone name from serial to now in
// IXFR's form; ok is false when the journal or the clock does not reach
// back to serial (the whole zone answers).
func (x *Transfers) signedIXFR(name string, serial uint32) (rrs []dns.RR, ok bool) {
	var (
		z, then           *index.Zone
		owners            []owner
		cur               uint32
		hourThen, hourNow int64
		size              int
	)
	ok = x.ix.WithChanges(name, serial, func(d *index.Diff) {
		z, then, cur, hourThen, hourNow, size = d.Zone, d.Then, d.Cur, d.HourThen, d.HourNow, d.Order.Len()
		if d.Then.DNSKEY != d.Zone.DNSKEY && size > wholeIXFR {
			return // every name restated: the whole zone answers (below), found without the walk
		}
		owners = restated(d)
	})
	if !ok || z.Chain == nil || then.Chain == nil {
		return nil, false
	}
	if owners == nil || len(owners) > wholeIXFR && len(owners) > size/2 {
		// Most of a large zone restated (a rollover's step, a secondary a
		// week behind): the difference is larger than the zone, and held
		// whole while it is made, where the zone streams. RFC 1995 lets
		// the whole zone answer.
		return nil, false
	}
	soaNow := x.answers.SOA(z, x.soa.Minimum).(*dns.SOA)
	soaNow.Serial = cur
	soaThen := x.answers.SOA(z, x.soa.Minimum).(*dns.SOA)
	soaThen.Serial = serial
	dels, adds, err := x.restate(then, z, owners, soaThen, soaNow, hourThen, hourNow)
	if err != nil {
		log.Errorf("IXFR of %s: signing failed, the whole zone answers: %v", z.Name, err)
		return nil, false
	}
	rrs = append([]dns.RR{soaNow, soaThen}, dels...)
	rrs = append(append(rrs, soaNow), adds...)
	return append(rrs, soaNow), true
}

// restated are the names the IXFR of d restates, read under the journal's
// lock.
func restated(d *index.Diff) []owner {
	o, z := d.Order, d.Zone
	den := o.Denial()
	changed := make(map[string]bool, len(d.Names))
	added := map[string]bool{}
	var removed []string // keys, in the chain's order
	wasIn := func(key string, old *index.Node) bool { return o.Pinned(key) || index.Member(den, old) }
	for _, n := range d.Names {
		changed[n] = true
		k := den.Key(n)
		was, is := wasIn(k, d.Old[n]), o.Has(k)
		switch {
		case is && !was:
			added[k] = true
		case was && !is:
			removed = append(removed, k)
		}
	}
	slices.SortFunc(removed, den.Compare)
	// nextOld is the key after k in the chain at the secondary's serial:
	// the one after it now, past the keys added since, unless a key
	// removed since comes first. The pinned apex is never added, so the
	// walk ends.
	nextOld := func(k string) string {
		next, wrapped := o.Next(k)
		for added[next] {
			var w bool
			next, w = o.Next(next)
			wrapped = wrapped || w
		}
		i, found := slices.BinarySearchFunc(removed, k, den.Compare)
		if found {
			i++
		}
		switch {
		case i < len(removed) && (wrapped || den.Compare(removed[i], next) < 0):
			return removed[i]
		case i == len(removed) && wrapped && len(removed) > 0 && den.Compare(removed[0], next) < 0:
			return removed[0] // past the last, the first of both
		}
		return next
	}
	keys := map[string]bool{den.Key(z.Name): true}
	for _, n := range d.Names {
		k := den.Key(n)
		keys[k] = true
		keys[o.Prev(k)] = true
	}
	switch {
	case d.Then.DNSKEY != z.DNSKEY:
		// Another key set signs (a rollover's step): every RRset's
		// signatures are new.
		o.Each(func(k string) bool {
			keys[k] = true
			return true
		})
	case d.HourThen != d.HourNow:
		// Renewals: each name in the chain whose windows moved meanwhile
		// (its records' at its name, its chain record's at its key's).
		o.Each(func(k string) bool {
			n := den.Name(k)
			if !changed[n] && (chain.Renewed(n, d.HourThen, d.HourNow) || den.NSEC3 && chain.Renewed(den.Owner(k), d.HourThen, d.HourNow)) {
				keys[k] = true
			}
			return true
		})
	}
	out := make([]owner, 0, len(keys))
	for k := range keys {
		n := den.Name(k)
		w := owner{key: k, name: n, now: z.Names.Get(n), inNow: o.Has(k)}
		w.old = w.now
		if changed[n] {
			w.old = d.Old[n]
		}
		w.inOld = wasIn(k, w.old)
		if w.inNow {
			w.nextNow, _ = o.Next(k)
		}
		if w.inOld {
			w.nextOld = nextOld(k)
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b owner) int { return den.Compare(a.key, b.key) })
	return out
}

// restate signs each owner as it was (in then, the zone at the
// secondary's serial) and as it is (in z), and returns what the secondary
// deletes and adds: the records of each that differ, the SOA left out (the
// frame carries it).
func (x *Transfers) restate(then, z *index.Zone, owners []owner, soaThen, soaNow dns.RR, hourThen, hourNow int64) (dels, adds []dns.RR, err error) {
	static, den := x.staticIn(z), z.Denial()
	type result struct{ dels, adds []dns.RR }
	results := make([]result, len(owners))
	errs := make([]error, len(owners))
	signAt := func(z *index.Zone, w owner, n *index.Node, next string, soa dns.RR, hour int64) ([]dns.RR, error) {
		return z.Chain.Owner(nil, x.ownerRRs(z, w.name, n, soa, static), den, w.key, next, x.soa.Minimum, hour)
	}
	work := func(i int) {
		w := owners[i]
		var was, now []dns.RR
		if w.inOld {
			if was, errs[i] = signAt(then, w, w.old, w.nextOld, soaThen, hourThen); errs[i] != nil {
				return
			}
		}
		if w.inNow {
			if now, errs[i] = signAt(z, w, w.now, w.nextNow, soaNow, hourNow); errs[i] != nil {
				return
			}
		}
		results[i].dels, results[i].adds = difference(was, now), difference(now, was)
	}
	// The owners are few for a write; an hour's renewals in a large zone
	// are thousands, signed on every core.
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(owners)) {
		wg.Go(func() {
			for i := range next {
				work(i)
			}
		})
	}
	for i := range owners {
		next <- i
	}
	close(next)
	wg.Wait()
	for i := range owners {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		dels = append(dels, results[i].dels...)
		adds = append(adds, results[i].adds...)
	}
	return dels, adds, nil
}

// difference is the records of a not in b (an RRSIG's signature
// compared too), the SOA left out.
func difference(a, b []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range a {
		if rr.Header().Rrtype != dns.TypeSOA && !slices.ContainsFunc(b, func(o dns.RR) bool { return dns.IsDuplicate(rr, o) }) {
			out = append(out, rr)
		}
	}
	return out
}
