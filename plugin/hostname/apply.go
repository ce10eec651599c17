package hostname

import (
	"context"
	"sync"

	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// Load implements storage.Consumer: it reads every domain and servable
// hostname into fresh maps and swaps them in whole.
func (ix *Index) Load(ctx context.Context, q storage.Queries) error {
	zs, err := loadZones(ctx, q)
	if err != nil {
		return err
	}
	m := new(sync.Map)
	var n int64
	err = q.ScanServable(ctx, func(h *storage.Hostname) error {
		if e := entry(h); e != nil {
			m.Store(dns.Fqdn(h.Name), e)
			n++
		}
		return nil
	})
	if err != nil {
		return err
	}
	last, err := q.LastChange(ctx)
	if err != nil {
		return err
	}
	ix.zones.Store(&zs)
	ix.hosts.Store(m)
	ix.size.Store(n)
	ix.serial.Store(uint32(last))
	ix.loaded.Store(true)
	return nil
}

// Apply implements storage.Consumer: it re-reads the objects the changes
// name and updates their entries.
func (ix *Index) Apply(ctx context.Context, q storage.Queries, cs []storage.Change) error {
	var ids []string
	domains := false
	var last int64
	for _, c := range cs {
		last = max(last, c.ID)
		switch c.Kind {
		case storage.KindHostname:
			ids = append(ids, c.Ref)
		case storage.KindDomain:
			domains = true
		}
	}
	if domains {
		zs, err := loadZones(ctx, q)
		if err != nil {
			return err
		}
		ix.zones.Store(&zs)
	}
	hs, err := q.HostnamesByID(ctx, ids)
	if err != nil {
		return err
	}
	m := ix.hosts.Load()
	for i := range hs {
		name := dns.Fqdn(hs[i].Name)
		if e := entry(&hs[i]); e != nil {
			ix.put(m, name, e)
		} else {
			ix.remove(m, name, hs[i].ID)
		}
	}
	if s := uint32(last); s > ix.serial.Load() {
		ix.serial.Store(s)
	}
	return nil
}

// entry is the index entry for a stored hostname, nil when it is not served.
// Expiry is checked at answer time, so an idle name stops resolving the
// moment it expires without any write.
func entry(h *storage.Hostname) *host {
	if h.Status != storage.StatusLive && h.Status != storage.StatusPending {
		return nil
	}
	addrs := hostnames.AddrsOf(h)
	if len(addrs) == 0 {
		return nil
	}
	return &host{id: h.ID, addrs: addrs, expires: h.ExpiresAt}
}

func loadZones(ctx context.Context, q storage.Queries) (zoneSet, error) {
	ds, err := q.Domains(ctx)
	if err != nil {
		return nil, err
	}
	zs := make(zoneSet, len(ds))
	for _, d := range ds {
		n := dns.Fqdn(d.Name)
		zs[n] = &zone{name: n, id: d.ID}
	}
	return zs, nil
}
