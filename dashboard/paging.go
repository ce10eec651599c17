package dashboard

import (
	"net/http"
	"strconv"
)

// maxSkip bounds ?skip=: the operator's list of every team reads skip+50
// hostnames of each team, and a larger skip only shows an empty page.
const maxSkip = 1 << 30

// skipOf reads a list's ?skip= (or a post's skip field): empty is 0, and
// anything but a whole number of 0 or more is refused, as the page's own
// links never send one.
func skipOf(s string) (int, bool) {
	if s == "" {
		return 0, true
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && s[0] != '-' {
			return maxSkip, true // a whole number all the same: past the end
		}
		return 0, false
	}
	if n < 0 {
		return 0, false
	}
	return min(n, maxSkip), true
}

// badSkip answers a skip that skipOf refused.
func (h *Handler) badSkip(w http.ResponseWriter) {
	h.status(w, http.StatusBadRequest, "Bad request", "skip must be a whole number of 0 or more; follow the page's links.")
}

// pager is where one page of a list, newest first, stands among the rest,
// and the links to the pages on either side.
type pager struct {
	From, To int    // the rows shown, counted from 1; To < From when none are
	Total    int    // every row; -1 when the list does not count them ([P1] teams)
	Newer    string // the previous page's URL, "" on the first
	Older    string // the next page's URL, "" on the last
}

// newPager places shown rows read at skip (limit a page); more reports
// whether rows follow them. link is a page's URL by its skip.
func newPager(skip, limit, shown, total int, more bool, link func(skip int) string) pager {
	p := pager{From: skip + 1, To: skip + shown, Total: total}
	if skip > 0 {
		back := skip
		if total >= 0 {
			back = min(skip, total) // past the end: back to the last page
		}
		p.Newer = link(max(back-limit, 0))
	}
	if more {
		p.Older = link(skip + shown)
	}
	return p
}

// All reports whether the page shows the whole list.
func (p pager) All() bool { return p.From == 1 && p.Newer == "" && p.Older == "" }

// Count says which rows are shown: "Showing 3 of 3", "Showing 101–120 of
// 120", or without a total "Showing 1–100".
func (p pager) Count() string {
	n := strconv.Itoa
	switch {
	case p.To < p.From && p.Total >= 0:
		return "Showing none of " + n(p.Total)
	case p.To < p.From:
		return "Showing none"
	case p.All() && p.Total >= 0:
		return "Showing " + n(p.To) + " of " + n(p.Total)
	case p.All():
		return "Showing all " + n(p.To)
	case p.Total >= 0:
		return "Showing " + n(p.From) + "–" + n(p.To) + " of " + n(p.Total)
	}
	return "Showing " + n(p.From) + "–" + n(p.To)
}
