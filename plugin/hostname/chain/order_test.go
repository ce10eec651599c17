package chain

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The order agrees with a sorted slice through random inserts and deletes
// across block splits, of names (NSEC) and of hashes (NSEC3): membership,
// Next (the first after the last) and Prev (the last before the first),
// for keys in it and not; pinned keys stay.
func TestOrder(t *testing.T) {
	t.Parallel()
	for _, nsec3 := range []bool{false, true} {
		testOrder(t, Denial{Zone: "example.org.", NSEC3: nsec3})
	}
}

func testOrder(t *testing.T, d Denial) {
	name := func(i int) string { return d.Key(fmt.Sprintf("h%d.example.org.", i)) }
	o := NewOrder(d, nil, d.Zone, "h7.example.org.")
	in := map[string]bool{d.Key(d.Zone): true, name(7): true}
	r := rand.New(rand.NewPCG(1, 2))
	for step := range 20_000 {
		n := name(r.IntN(3000))
		if r.IntN(3) == 0 {
			o.Delete(n)
			if n != name(7) {
				delete(in, n)
			}
		} else {
			o.Insert(n)
			in[n] = true
		}
		if step%1000 != 0 {
			continue
		}
		want := make([]string, 0, len(in))
		for k := range in {
			want = append(want, k)
		}
		slices.SortFunc(want, d.Compare)
		var got []string
		o.Each(func(n string) bool { got = append(got, n); return true })
		if !slices.Equal(got, want) || o.Len() != len(want) {
			t.Fatalf("step %d: %d names in order, want %d", step, len(got), len(want))
		}
		for range 200 {
			q := name(r.IntN(3100))
			i, found := slices.BinarySearchFunc(want, q, d.Compare)
			if o.Has(q) != found {
				t.Fatalf("Has(%s) = %v", q, !found)
			}
			j := i
			if found {
				j++
			}
			wantNext, wantWrap := want[0], true
			if j < len(want) {
				wantNext, wantWrap = want[j], false
			}
			if next, wrap := o.Next(q); next != wantNext || wrap != wantWrap {
				t.Fatalf("Next(%s) = %s %v, want %s %v", q, next, wrap, wantNext, wantWrap)
			}
			wantPrev := want[len(want)-1]
			if i > 0 {
				wantPrev = want[i-1]
			}
			if prev := o.Prev(q); prev != wantPrev {
				t.Fatalf("Prev(%s) = %s, want %s", q, prev, wantPrev)
			}
		}
	}
}

// BenchmarkOrderInsert is a name added to, and removed from, the order
// of a zone of a million names.
func BenchmarkOrderInsert(b *testing.B) {
	names := make([]string, 1_000_000)
	for i := range names {
		names[i] = fmt.Sprintf("h%07d.example.org.", i)
	}
	slices.SortFunc(names, Compare)
	o := NewOrder(Denial{Zone: "example.org."}, names, "example.org.")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		n := fmt.Sprintf("x%07d.example.org.", i%1000)
		o.Insert(n)
		o.Delete(n)
	}
}
