package answer

import (
	"time"

	"github.com/hostmint/hostmint/plugin/hostname/index"
)

// What is kept, as the plugin's tests read it.

// Kept reports whether the answer to qtype at name (lowercase FQDN) of z,
// for queries with flags (EDNS, DO), is kept and good now: until when
// (Unix ms, 0: for good) and the serial it was built at.
func (a *Answerer) Kept(z *index.Zone, name string, qtype uint16, flags uint8) (until int64, serial uint32, ok bool) {
	q := Ask{Name: name, Qtype: qtype, Class: 1, Flags: flags}
	e := a.cache.get(z, z.Names.Get(name), name, &q, a.ix.Serial(), time.Now().UnixMilli())
	if e == nil {
		return 0, 0, false
	}
	return e.until, e.serial, true
}

// KeptCount is how many answers are kept: of names, and without a node
// (missing names, denials, the apex).
func (a *Answerer) KeptCount() (names, others int) { return a.cache.names.Len(), a.cache.denials.Len() }
