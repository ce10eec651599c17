package xfr

import (
	"maps"
	"testing"

	"github.com/hostmint/hostmint/plugin/hostname/answer"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/hostmint/hostmint/served"
)

// The catalog is made again only when its serial moves: a domain added
// puts a member more and the serial one up; a hostname write (the same
// zone set) moves nothing; a signed domain is a member as any other, and
// unsigned it stays one: the catalog is not made again.
func TestCatalogSerial(t *testing.T) {
	t.Parallel()
	zs := index.Set{}
	for _, name := range []string{"example.org.", "team.example.net.", "signed.example.net."} {
		zs[name] = &index.Zone{Name: name, ID: "dom_" + name, Names: index.NewTable(0), CatalogVersion: 1}
	}
	zs["signed.example.net."].Signed, zs["signed.example.net."].CatalogVersion = true, 2
	ix := index.New(nil, "")
	ix.SetZones(zs)
	a := answer.New(answer.Config{Nameservers: served.Nameservers{Names: []string{"ns1.example.org."}}}, ix)
	x := New(Config{Catalog: "catalog.invalid."}, ix, a)

	before := x.catalog()
	if c := x.catalog(); c != before || c.serial != 5 || len(c.rrs) != 5 {
		t.Errorf("the catalog: serial %d, %d records, made again %v; want 5, 5, not made again", c.serial, len(c.rrs), c != before)
	}
	more := maps.Clone(zs)
	more["new.example.com."] = &index.Zone{Name: "new.example.com.", ID: "dom_new", Names: index.NewTable(0), CatalogVersion: 1}
	ix.SetZones(more)
	added := x.catalog()
	if added.serial != 6 || len(added.rrs) != 6 {
		t.Errorf("after a domain was added: serial %d, %d records; want 6 and 6", added.serial, len(added.rrs))
	}
	unsigned := maps.Clone(more)
	z := *unsigned["signed.example.net."]
	z.Signed = false
	unsigned["signed.example.net."] = &z
	ix.SetZones(unsigned)
	if c := x.catalog(); c != added {
		t.Errorf("after a domain was unsigned: serial %d, %d records, made again; want the same catalog", c.serial, len(c.rrs))
	}
}
