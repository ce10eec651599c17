package hostname

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/plugin/hostname/chain"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/miekg/dns"
)

// What the signed transfer tests check a zone with, as a strict secondary
// and a validator would read it.

// journalFrom starts ix's journal at serial, as a load does: IXFRs from
// there on are differences.
func journalFrom(ix *index.Index, serial uint32) {
	ix.Freeze()
	ix.ResetJournal(serial)
	ix.Thaw()
}

func mustRR(t *testing.T, s string) dns.RR {
	t.Helper()
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// transferAll is the whole transfer of example.org. from serial.
func transferAll(t *testing.T, h *Handler, serial uint32) []dns.RR {
	t.Helper()
	ch, err := h.Transfer("example.org.", serial)
	if err != nil {
		t.Fatal(err)
	}
	var rrs []dns.RR
	for b := range ch {
		rrs = append(rrs, b...)
	}
	return rrs
}

// checkSignedZone checks an AXFR of a signed zone as a validator would read
// a secondary's copy: SOA first and last and nowhere else; every RRset
// signed by key, valid at now; an NSEC at every name that holds data,
// in canonical order, the last back to the apex, each listing its types.
func checkSignedZone(t *testing.T, rrs []dns.RR, key *dns.DNSKEY, now time.Time, more ...*dns.DNSKEY) {
	t.Helper()
	if len(rrs) < 2 || rrs[0].Header().Rrtype != dns.TypeSOA || rrs[len(rrs)-1].Header().Rrtype != dns.TypeSOA {
		t.Fatalf("not framed by the SOA: %d records", len(rrs))
	}
	apex := rrs[0].Header().Name
	type set struct {
		name string
		t    uint16
	}
	sets := map[set][]dns.RR{}
	sigs := map[set][]*dns.RRSIG{}
	types := map[string][]uint16{}
	nsecs := map[string]*dns.NSEC{}
	for i, rr := range rrs[:len(rrs)-1] {
		h := rr.Header()
		if h.Rrtype == dns.TypeSOA && i != 0 {
			t.Fatalf("a SOA in the middle, at %d", i)
		}
		switch r := rr.(type) {
		case *dns.RRSIG:
			sigs[set{h.Name, r.TypeCovered}] = append(sigs[set{h.Name, r.TypeCovered}], r)
			continue
		case *dns.NSEC:
			if nsecs[h.Name] != nil {
				t.Errorf("two NSECs at %s", h.Name)
			}
			nsecs[h.Name] = r
		}
		k := set{h.Name, h.Rrtype}
		if sets[k] == nil && h.Rrtype != dns.TypeNSEC {
			types[h.Name] = append(types[h.Name], h.Rrtype)
		}
		sets[k] = append(sets[k], rr)
	}
	for k, rrset := range sets {
		// Every key of the set signs every RRset.
		keys := append([]*dns.DNSKEY{key}, more...)
		valid := 0
		for _, key := range keys {
			for _, sig := range sigs[k] {
				if sig.KeyTag == key.KeyTag() && sig.Verify(key, rrset) == nil && sig.ValidityPeriod(now) {
					valid++
				}
			}
		}
		if valid < len(keys) {
			t.Errorf("%s %s: %d valid RRSIGs among %v, want one a key of %d", k.name, dns.TypeToString[k.t], valid, sigs[k], len(keys))
		}
	}
	owners := make([]string, 0, len(types))
	for n := range types {
		owners = append(owners, n)
	}
	if len(nsecs) > 0 {
		checkNSECChain(t, apex, owners, types, nsecs)
	} else {
		checkNSEC3Chain(t, apex, owners, types, rrs)
	}
}

// checkNSECChain: an NSEC at every name that holds data, in canonical
// order, the last back to the apex, each listing its types.
func checkNSECChain(t *testing.T, apex string, owners []string, types map[string][]uint16, nsecs map[string]*dns.NSEC) {
	t.Helper()
	for _, n := range owners {
		if nsecs[n] == nil {
			t.Errorf("%s holds %v and has no NSEC", n, types[n])
		}
	}
	if len(nsecs) != len(owners) {
		t.Errorf("%d NSECs for %d names", len(nsecs), len(owners))
	}
	slices.SortFunc(owners, chain.Compare)
	if owners[0] != apex {
		t.Fatalf("the first name is %s, not the apex", owners[0])
	}
	for i, n := range owners {
		next := owners[(i+1)%len(owners)]
		nsec := nsecs[n]
		if nsec == nil {
			continue
		}
		if !strings.EqualFold(nsec.NextDomain, next) {
			t.Errorf("NSEC at %s points to %s, want %s", n, nsec.NextDomain, next)
		}
		want := append(slices.Clone(types[n]), dns.TypeRRSIG, dns.TypeNSEC)
		slices.Sort(want)
		if !slices.Equal(nsec.TypeBitMap, want) {
			t.Errorf("NSEC at %s lists %v, want %v", n, nsec.TypeBitMap, want)
		}
	}
}

// checkNSEC3Chain: RFC 9276's parameters in NSEC3PARAM and every NSEC3; an
// NSEC3 at the hash of every name that holds data and of every empty
// non-terminal above one, in hash order, the last back to the first, each
// listing its name's types (and RRSIG, where there are any); no NSEC.
func checkNSEC3Chain(t *testing.T, apex string, owners []string, types map[string][]uint16, rrs []dns.RR) {
	t.Helper()
	byHash := map[string]*dns.NSEC3{}
	params := 0
	for _, rr := range rrs {
		switch r := rr.(type) {
		case *dns.NSEC3:
			if r.Hash != dns.SHA1 || r.Iterations != 0 || r.Salt != "" && r.Salt != "-" || r.Flags != 0 {
				t.Errorf("NSEC3 with parameters other than RFC 9276's: %v", r)
			}
			label, _, _ := strings.Cut(r.Hdr.Name, ".")
			byHash[strings.ToUpper(label)] = r
		case *dns.NSEC3PARAM:
			params++
			if r.Hdr.Name != apex || r.Hash != dns.SHA1 || r.Iterations != 0 || r.Salt != "" && r.Salt != "-" || r.Flags != 0 {
				t.Errorf("NSEC3PARAM %v", r)
			}
		}
	}
	if params != 1 {
		t.Errorf("%d NSEC3PARAMs at the apex, want 1", params)
	}
	exists := map[string]bool{}
	for _, n := range owners {
		if strings.Contains(n, ".") && dns.IsSubDomain(apex, n) && !isNSEC3Owner(n, apex, byHash) {
			for p := n; p != apex; p = p[strings.Index(p, ".")+1:] {
				exists[p] = true
			}
			exists[apex] = true
		}
	}
	var hashes []string
	want := map[string][]uint16{}
	for n := range exists {
		h := dns.HashName(n, dns.SHA1, 0, "")
		hashes = append(hashes, h)
		if ts := types[n]; len(ts) > 0 {
			want[h] = append(slices.Clone(ts), dns.TypeRRSIG)
			slices.Sort(want[h])
		}
	}
	if len(byHash) != len(hashes) {
		t.Errorf("%d NSEC3s for %d names", len(byHash), len(hashes))
	}
	slices.Sort(hashes)
	for i, h := range hashes {
		r := byHash[h]
		if r == nil {
			t.Errorf("no NSEC3 at the hash of a name (%s)", h)
			continue
		}
		if next := hashes[(i+1)%len(hashes)]; !strings.EqualFold(r.NextDomain, next) {
			t.Errorf("NSEC3 %s points to %s, want %s", h, r.NextDomain, next)
		}
		if !slices.Equal(r.TypeBitMap, want[h]) {
			t.Errorf("NSEC3 %s lists %v, want %v", h, r.TypeBitMap, want[h])
		}
	}
}

// isNSEC3Owner reports whether n is an NSEC3's own owner (a hash label in
// the zone): not a name of the zone's.
func isNSEC3Owner(n, apex string, byHash map[string]*dns.NSEC3) bool {
	label, rest, _ := strings.Cut(n, ".")
	return rest == apex && byHash[strings.ToUpper(label)] != nil
}

// zoneSet is a transfer's records but the SOA, as text, for comparing a
// secondary's copy.
func zoneSet(rrs []dns.RR) map[string]bool {
	set := map[string]bool{}
	for _, rr := range rrs {
		if rr.Header().Rrtype != dns.TypeSOA {
			set[rr.String()] = true
		}
	}
	return set
}

// applyIXFR applies an IXFR's difference to a secondary's copy as a strict
// secondary does: a deletion of a record it lacks, or an addition of one
// it has, fails the transfer.
func applyIXFR(t *testing.T, copy map[string]bool, rrs []dns.RR, from, to uint32) {
	t.Helper()
	soas := 0
	for i, rr := range rrs {
		if soa, ok := rr.(*dns.SOA); ok {
			soas++
			want := to
			if soas == 2 {
				want = from
			}
			if soa.Serial != want {
				t.Fatalf("SOA %d of the IXFR has serial %d, want %d", soas, soa.Serial, want)
			}
			continue
		}
		k := rr.String()
		switch {
		case soas == 2 && !copy[k]:
			t.Fatalf("the IXFR deletes what the secondary lacks (record %d): %s", i, k)
		case soas == 2:
			delete(copy, k)
		case soas == 3 && copy[k]:
			t.Fatalf("the IXFR adds what the secondary has (record %d): %s", i, k)
		case soas == 3:
			copy[k] = true
		default:
			t.Fatalf("record %d outside the IXFR's sections: %s", i, k)
		}
	}
	if soas != 4 {
		t.Fatalf("an IXFR of %d SOAs, want 4 (a difference)", soas)
	}
}
