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
// The owners whose records or NSEC may differ are the names changed, the
// apex (its SOA's signature differs at every serial), and the name before
// each changed one in the order now: a name whose next name changed is the
// one before a name that joined the chain or left it (before it now, or,
// for one that left, before where it was, which is the same name, since
// nothing between them is in the chain at either end). When the clock
// crossed hours, the names whose windows moved meanwhile are renewed too.

// owner is one name an IXFR restates: what it held at the secondary's
// serial and what it holds now.
type owner struct {
	name             string
	old, now         *index.Node
	inOld, inNow     bool   // in the chain at each end
	nextOld, nextNow string // its NSEC's next name at each end
	static           bool
}

// signedIXFR is the difference of signed zone name from serial to now in
// IXFR's form; ok is false when the journal or the clock does not reach
// back to serial (the whole zone answers).
func (x *Transfers) signedIXFR(name string, serial uint32) (rrs []dns.RR, ok bool) {
	z := x.ix.Zone(name)
	if z == nil || z.Chain == nil {
		return nil, false
	}
	static := x.staticIn(z)
	var (
		owners            []owner
		cur               uint32
		hourThen, hourNow int64
	)
	ok = x.ix.WithChanges(name, serial, func(d *index.Diff) {
		z, cur, hourThen, hourNow = d.Zone, d.Cur, d.HourThen, d.HourNow
		owners = restated(d, static)
	})
	if !ok || z.Chain == nil {
		return nil, false
	}
	soaNow := x.answers.SOA(z, x.soa.Minimum).(*dns.SOA)
	soaNow.Serial = cur
	soaThen := x.answers.SOA(z, x.soa.Minimum).(*dns.SOA)
	soaThen.Serial = serial
	dels, adds, err := x.restate(z, owners, static, soaThen, soaNow, hourThen, hourNow)
	if err != nil {
		log.Errorf("IXFR of %s: signing failed, the whole zone answers: %v", z.Name, err)
		return nil, false
	}
	rrs = append([]dns.RR{soaNow, soaThen}, dels...)
	rrs = append(append(rrs, soaNow), adds...)
	return append(rrs, soaNow), true
}

// restated are the owners the IXFR of d restates, read under the
// journal's lock.
func restated(d *index.Diff, static map[string]index.AddrList) []owner {
	o, apex := d.Order, d.Zone.Name
	statics := make([]string, 0, len(static))
	for n := range static {
		if n != apex {
			statics = append(statics, n)
		}
	}
	slices.SortFunc(statics, chain.Compare)
	isStatic := func(n string) bool { _, ok := static[n]; return ok }
	inNow := func(n string) bool { return n == apex || isStatic(n) || o.Has(n) }
	changed := make(map[string]bool, len(d.Names))
	added := map[string]bool{}
	var removed []string
	for _, n := range d.Names {
		changed[n] = true
		was := n == apex || isStatic(n) || d.Old[n].Chained()
		switch is := inNow(n); {
		case is && !was:
			added[n] = true
		case was && !is:
			removed = append(removed, n)
		}
	}
	slices.SortFunc(removed, chain.Compare)
	// nextNow is the name after n in the chain now: the order's, or a
	// nameserver's, whichever comes first; the apex after the last.
	nextNow := func(n string) (string, bool) {
		next, wrapped := o.Next(n)
		i, found := slices.BinarySearchFunc(statics, n, chain.Compare)
		if found {
			i++
		}
		if i < len(statics) && (wrapped || chain.Compare(statics[i], next) < 0) {
			return statics[i], false
		}
		return next, wrapped
	}
	prevNow := func(n string) string {
		prev := o.Prev(n)
		i, _ := slices.BinarySearchFunc(statics, n, chain.Compare)
		if i > 0 && (prev == apex || chain.Compare(statics[i-1], prev) > 0) {
			return statics[i-1]
		}
		return prev
	}
	// nextOld is the name after n in the chain at the secondary's serial:
	// the one after now, past the names added since, unless a name
	// removed since comes first.
	nextOld := func(n string) string {
		next, wrapped := nextNow(n)
		for !wrapped && added[next] {
			next, wrapped = nextNow(next)
		}
		i, found := slices.BinarySearchFunc(removed, n, chain.Compare)
		if found {
			i++
		}
		if i < len(removed) && (wrapped || chain.Compare(removed[i], next) < 0) {
			return removed[i]
		}
		return next
	}
	names := map[string]bool{apex: true}
	for _, n := range d.Names {
		names[n] = true
		names[prevNow(n)] = true
	}
	if d.HourThen != d.HourNow {
		// Renewals: each name in the chain whose window moved meanwhile.
		renewed := func(n string) bool {
			if chain.Renewed(n, d.HourThen, d.HourNow) && !changed[n] {
				names[n] = true
			}
			return true
		}
		o.Each(renewed)
		for _, n := range statics {
			renewed(n)
		}
	}
	out := make([]owner, 0, len(names))
	for n := range names {
		w := owner{name: n, static: isStatic(n), inNow: inNow(n)}
		if n != apex {
			w.now = d.Zone.Names.Get(n)
		} else {
			w.now = d.Zone.Names.Get(apex) // a hostname at the apex, if any
		}
		w.old = w.now
		if changed[n] {
			w.old = d.Old[n]
		}
		w.inOld = n == apex || w.static || w.old.Chained()
		if w.inNow {
			w.nextNow, _ = nextNow(n)
		}
		if w.inOld {
			w.nextOld = nextOld(n)
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b owner) int { return chain.Compare(a.name, b.name) })
	return out
}

// restate signs each owner as it was and as it is, and returns what the
// secondary deletes and adds: the records of each that differ, the SOA
// left out (the frame carries it).
func (x *Transfers) restate(z *index.Zone, owners []owner, static map[string]index.AddrList, soaThen, soaNow dns.RR, hourThen, hourNow int64) (dels, adds []dns.RR, err error) {
	type result struct{ dels, adds []dns.RR }
	results := make([]result, len(owners))
	errs := make([]error, len(owners))
	signAt := func(w owner, n *index.Node, next string, soa dns.RR, hour int64) ([]dns.RR, error) {
		rrs := x.ownerRRs(z, w.name, n, soa, static)
		if len(rrs) == 0 {
			return nil, nil
		}
		return z.Chain.Owner(nil, rrs, w.name, next, x.soa.Minimum, hour)
	}
	work := func(i int) {
		w := owners[i]
		var then, now []dns.RR
		if w.inOld {
			if then, errs[i] = signAt(w, w.old, w.nextOld, soaThen, hourThen); errs[i] != nil {
				return
			}
		}
		if w.inNow {
			if now, errs[i] = signAt(w, w.now, w.nextNow, soaNow, hourNow); errs[i] != nil {
				return
			}
		}
		results[i].dels, results[i].adds = difference(then, now), difference(now, then)
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
