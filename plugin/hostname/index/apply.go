package index

import (
	"context"
	"errors"
	"maps"
	"runtime/debug"
	"slices"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/plugin/hostname/chain"
	"github.com/hostmint/hostmint/plugin/hostname/sign"
	"github.com/hostmint/hostmint/served"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Load implements storage.Consumer: it reads every domain, servable
// hostname and record into fresh maps and swaps them in whole.
func (ix *Index) Load(ctx context.Context, q storage.Queries) error {
	// Each zone's table sized up front: a table grown name by name holds a
	// third more memory for good, and rehashes a million names on the way.
	sizes, err := q.CountServableByDomain(ctx)
	if err != nil {
		return err
	}
	zs, err := ix.loadZones(ctx, q, nil, sizes)
	if err != nil {
		return err
	}
	recs := map[string][]storage.Record{}
	err = q.ScanRecords(ctx, func(r *storage.Record) error {
		recs[r.HostnameID] = append(recs[r.HostnameID], *r)
		return nil
	})
	if err != nil {
		return err
	}
	chals := map[string][]storage.Challenge{}
	err = q.ScanChallenges(ctx, func(c *storage.Challenge) error {
		chals[c.HostnameID] = append(chals[c.HostnameID], *c)
		return nil
	})
	if err != nil {
		return err
	}
	extra := map[string][]string{}
	var n int64
	loaded := time.Now().UnixMilli()
	err = q.ScanServable(ctx, func(h *storage.Hostname) error {
		own, below := buildNodes(h, recs[h.ID], chals[h.ID])
		own, below = ix.withoutRegistrationNames(h.Name, own, below)
		if own == nil {
			return nil
		}
		Settle(own, below, loaded)
		if !zs.Put(dns.Fqdn(h.Name), own) {
			return nil // in no served zone
		}
		for name, nd := range below {
			zs.Put(name, nd)
			extra[h.ID] = append(extra[h.ID], name)
		}
		n++
		return nil
	})
	if err != nil {
		return err
	}
	regNames, regDue, err := ix.loadRegistrations(ctx, q, zs, loaded)
	if err != nil {
		return err
	}
	ix.keepOrders(zs)
	newest, err := q.NewestChange(ctx)
	if err != nil {
		return err
	}
	last := newest.ID
	ix.extra, ix.regNames, ix.regDue = extra, regNames, regDue
	ix.size.Store(n)
	// The names and the serial change together, as a zone transfer's
	// snapshot reads them.
	ix.jr.mu.Lock()
	ix.zones.Store(&zs)
	ix.serial.Store(uint32(last))
	ix.jr.reset(uint32(last))
	ix.jr.clock = nil
	ix.jr.tick(uint32(last), newest.CreatedAt)
	ix.jr.mu.Unlock()
	ix.loaded.Store(true)
	// A snapshot leaves garbage about the size of the index (rows, the
	// previous index): hand it back to the system now rather than keep a
	// start-up peak resident for good.
	debug.FreeOSMemory()
	// A snapshot may hold any change (a node that fell behind the
	// compacted feed loads one again): every zone's secondaries are told.
	ix.touched(slices.Sorted(maps.Keys(zs)))
	return nil
}

// Apply implements storage.Consumer: it re-reads the objects the changes
// name and replaces their entries.
func (ix *Index) Apply(ctx context.Context, q storage.Queries, cs []storage.Change) error {
	var ids, regs []string
	domainsChanged := false
	var last int64
	for _, c := range cs {
		last = max(last, c.ID)
		switch c.Kind {
		case storage.KindHostname:
			ids = append(ids, c.Ref)
		case storage.KindRegistration:
			regs = append(regs, c.Ref)
		case storage.KindDomain:
			domainsChanged = true
		}
	}
	zs := *ix.zones.Load()
	var (
		moved  []movedName
		orders newOrders
		prev   Set
	)
	if domainsChanged {
		prev = zs
		var err error
		if zs, err = ix.loadZones(ctx, q, prev, nil); err != nil {
			return err
		}
		moved = zs.adopt(prev)
		orders = ix.ordersFor(zs)
	}
	hs, rs, cs2, err := q.HostnamesWithRows(ctx, ids)
	if err != nil {
		return err
	}
	recs := map[string][]storage.Record{}
	for _, r := range rs {
		recs[r.HostnameID] = append(recs[r.HostnameID], r)
	}
	chals := map[string][]storage.Challenge{}
	for _, c := range cs2 {
		chals[c.HostnameID] = append(chals[c.HostnameID], c)
	}
	if domainsChanged {
		// A registration's name may have been in no zone until now (its
		// domain made after it, a node's first start): every one served
		// is placed again.
		since := time.Now().Add(-served.ChallengeLife).UnixMilli()
		if err := q.ScanServedRegistrations(ctx, since, func(r *storage.Registration) error {
			regs = append(regs, r.ID)
			return nil
		}); err != nil {
			return err
		}
	}
	rgs, err := q.RegistrationsByID(ctx, regs)
	if err != nil {
		return err
	}
	zones := map[string]bool{}
	serial := max(uint32(last), ix.serial.Load())
	// The journal's lock is held from the new zone set and the first
	// replace to the new serial, so a transfer reads a zone, its names and
	// its serial that agree.
	ix.jr.mu.Lock()
	if domainsChanged {
		ix.zones.Store(&zs)
		orders.keep()
		for _, m := range moved {
			m.from.drop(m.name, m.n.Owner)
		}
	}
	built := time.Now().UnixMilli()
	for i := range hs {
		for name, old := range ix.hostname(zs, &hs[i], recs[hs[i].ID], chals[hs[i].ID], built) {
			if z := zs.Of(name); z != nil {
				ix.jr.add(serial, z.Name, name, old)
				zones[z.Name] = true
			}
		}
	}
	ix.applyRegistrations(rgs, regs, zs, serial, built, zones)
	ix.sweepRegistrations(zs, built)
	hour, _ := ix.jr.clockAt(serial)
	for _, c := range cs {
		ix.jr.tick(uint32(c.ID), c.CreatedAt)
	}
	if now, _ := ix.jr.clockAt(serial); now != hour {
		// A new hour: some of every signed zone's signatures may be due
		// for renewal (package chain), which its secondaries learn by IXFR.
		for name, z := range zs {
			if z.Chain != nil {
				zones[name] = true
			}
		}
	}
	ix.serial.Store(serial)
	if domainsChanged {
		ix.journalDomains(prev, zs, len(moved) > 0, serial)
		for name := range *ix.zones.Load() {
			zones[name] = true
		}
	}
	ix.jr.trim()
	ix.jr.mu.Unlock()
	ix.touched(slices.Sorted(maps.Keys(zones)))
	return nil
}

// replace swaps in a hostname's new nodes and drops the names it no longer
// holds, unless another hostname holds them by now (a released name minted
// again). It returns what each name it touched held before (the journal's
// entries).
func (ix *Index) replace(zs Set, h *storage.Hostname, own *Node, below map[string]*Node) (old map[string]*Node) {
	name, owner := dns.Fqdn(h.Name), Holder(h.ID)
	had := zs.Get(name)
	old = map[string]*Node{name: had}
	for n := range below {
		old[n] = zs.Get(n)
	}
	for _, n := range ix.extra[h.ID] {
		old[n] = zs.Get(n)
	}
	switch {
	case own != nil:
		if zs.Put(name, own) && (had == nil || had.Owner != owner) {
			ix.size.Add(1)
		}
	case had != nil && had.Owner == owner:
		zs.Drop(name, owner)
		ix.size.Add(-1)
	}
	for n, nd := range below {
		zs.Put(n, nd)
	}
	for _, n := range ix.extra[h.ID] {
		if _, kept := below[n]; !kept {
			zs.Drop(n, owner)
		}
	}
	if len(below) == 0 {
		delete(ix.extra, h.ID)
		return old
	}
	names := make([]string, 0, len(below))
	for n := range below {
		names = append(names, n)
	}
	ix.extra[h.ID] = names
	return old
}

// buildNodes are the index's nodes of what h serves (served.Hostname).
func buildNodes(h *storage.Hostname, recs []storage.Record, chals []storage.Challenge) (own *Node, below map[string]*Node) {
	o, names, ok := served.Hostname(h, recs, chals, unservable)
	if !ok {
		return nil, nil
	}
	holds := Holder(h.ID)
	own = &Node{Owner: holds, Host: true, Addrs: PackAddrs(o.Addrs), Expires: o.Expires, RRsets: o.RRsets}
	if len(names) == 0 {
		return own, nil
	}
	below = make(map[string]*Node, len(names))
	for name, n := range names {
		below[name] = &Node{Owner: holds, Expires: n.Expires, RRsets: n.RRsets}
	}
	return own, below
}

// unservable logs a record that cannot be served (a plain function: a
// closure per hostname would cost an allocation each, a million at a load).
func unservable(r *storage.Record, err error) {
	clog.Warningf("record %s at %s cannot be served: %v", r.ID, r.Name, err)
}

// hostname puts h's names, built from its rows as they stand at now, in
// zs, and returns what its names held before.
func (ix *Index) hostname(zs Set, h *storage.Hostname, recs []storage.Record, chals []storage.Challenge, now int64) (old map[string]*Node) {
	own, below := buildNodes(h, recs, chals)
	own, below = ix.withoutRegistrationNames(h.Name, own, below)
	Settle(own, below, now)
	return ix.replace(zs, h, own, below)
}

// Settle marks the nodes whose expiry has passed at now as gone. An idle
// [P1] name's expiry is recorded as a change once it has passed
// (storage.RecordExpiries), so the version built then is the one
// secondaries were told to delete.
func Settle(own *Node, below map[string]*Node, now int64) {
	if own == nil {
		return
	}
	own.Gone = own.Expires != 0 && own.Expires <= now
	for _, n := range below {
		n.Gone = n.Expires != 0 && n.Expires <= now
	}
}

// loadZones reads every domain into a zone set. A zone already in prev
// keeps its table of names, and, when its key did not change, its signer
// with the signatures already made; a new one gets an empty table (sizes:
// its expected names, by domain id), which adopt fills when it is made
// below another zone.
func (ix *Index) loadZones(ctx context.Context, q storage.Queries, prev Set, sizes map[string]int) (Set, error) {
	ds, err := q.Domains(ctx)
	if err != nil {
		return nil, err
	}
	zs := make(Set, len(ds))
	for i := range ds {
		d := &ds[i]
		name := dns.Fqdn(d.Name)
		z := &Zone{Name: name, ID: d.ID, DNSKEY: domains.KeySet(d), Kind: KindPool, CatalogVersion: d.CatalogVersion}
		if old := prev[name]; old != nil {
			z.Names = old.Names
		} else {
			z.Names = NewTable(sizes[d.ID])
		}
		if d.AccountID != "" {
			z.Kind = KindTeam
		}
		z.CAA = served.Policy(d)
		if d.DNSSEC {
			z.Signed, z.NSEC3 = true, d.NSEC3
			if old := prev[name]; old != nil && old.DNSKEY == z.DNSKEY && old.Signer != nil {
				z.Signer, z.Chain = old.Signer, old.Chain
			} else if z.Signer, z.Chain, err = ix.newSigners(d); err != nil {
				// Never unsigned: its parent publishes a DS, so an unsigned
				// answer is bogus to every validating resolver, and a
				// secondary would keep an unsigned copy for the SOA's expire.
				clog.Errorf("domain %s is signed but its key cannot be opened (is cert_encryption_key_file the writers'?): "+
					"it answers SERVFAIL, is not transferred, and this node reports not ready: %v", d.Name, err)
			}
		}
		zs[name] = z
	}
	return zs, nil
}

// newSigners are d's signers, for answers and for transfers, with its key.
func (ix *Index) newSigners(d *storage.Domain) (*sign.Signer, *chain.Signer, error) {
	if ix.signers == nil {
		return nil, nil, errors.New("no key opens DNSSEC keys (cert_encryption_key_file)")
	}
	s, err := ix.signers(d)
	if err != nil {
		return nil, nil, err
	}
	name := dns.Fqdn(d.Name)
	var others []sign.Key
	for _, k := range s.Set {
		if k.DNSKEY != s.DNSKEY {
			others = append(others, sign.Key{DNSKEY: k.DNSKEY, Private: k.Key})
		}
	}
	return sign.New(name, s.DNSKEY, s.Key).WithOthers(others), chain.New(name, s.DNSKEY, s.Key).WithOthers(others), nil
}
