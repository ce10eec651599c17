package chain

import "time"

// Signature lifetimes of a transferred zone. A signature is valid from an
// hour before its window starts until Life after; windows follow each
// other every Step. So a secondary that is kept current holds signatures
// with at least Life-Step (14 days) left, and each is renewed when two
// thirds of its life is left, well before the quarter the design allows.
// A secondary cut off from its primary keeps serving valid signatures for
// two weeks at least, past any sensible SOA expire.
const (
	Life = 21 * 24 * time.Hour
	Step = 7 * 24 * time.Hour
	skew = time.Hour // inception in the past, for validators' clocks behind ours
)

const stepHours = int64(Step / time.Hour)

// Hour is a clock reading of the feed, in whole hours since the Unix epoch:
// the clock of a serial is the hour its newest change was written in.
func Hour(unixMilli int64) int64 { return unixMilli / int64(time.Hour/time.Millisecond) }

// phase is the hour within Step at which owner's windows start: spread by
// a hash of the name, so a zone's owners are renewed a few each hour.
func phase(owner string) int64 {
	h := uint64(14695981039346656037) // FNV-1a, inline: a zone's renewal scan hashes every name
	for i := 0; i < len(owner); i++ {
		h = (h ^ uint64(lower(owner[i]))) * 1099511628211
	}
	return int64(h % uint64(stepHours))
}

// window is the number of owner's window at hour.
func window(owner string, hour int64) int64 {
	return floorDiv(hour-phase(owner), stepHours)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Window is the validity of owner's signatures at hour: inception and
// expiration, in seconds since the epoch (RRSIG's fields).
func Window(owner string, hour int64) (inception, expiration uint32) {
	p := phase(owner)
	start := (window(owner, hour)*stepHours + p) * int64(time.Hour/time.Second)
	return uint32(start - int64(skew/time.Second)), uint32(start + int64(Life/time.Second))
}

// Renewed reports whether owner's signatures at hour from are not those
// at hour to: a window started between the two.
func Renewed(owner string, from, to int64) bool { return window(owner, from) != window(owner, to) }
