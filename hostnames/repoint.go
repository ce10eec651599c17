package hostnames

import (
	"net/netip"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// pointsAt reports whether h already points at addrs, following target
// ("" for none): a repoint to them is a no-op, and costs nothing.
func pointsAt(h *storage.Hostname, addrs []netip.Addr, target string) bool {
	return h.Addrs == joinAddrs(addrs) && h.Target == target
}

// repoint is the one way a [P2] hostname changes its addresses: the PUT of
// an ip or a target, dyndns2, and a target's refresh all come here. It
// points h at addrs (already checked: its class, at most one address per
// family, IPv4 first), following target ("" for none) until refreshAt, and
// makes it pending until every nameserver serves the new addresses. The
// addresses and target it already has change nothing: it reports false and
// h is as it was.
func repoint(h *storage.Hostname, addrs []netip.Addr, target string, refreshAt int64, now time.Time) bool {
	if pointsAt(h, addrs, target) {
		return false
	}
	h.IP, h.Addrs, h.Target, h.RefreshAt = addrs[0].String(), joinAddrs(addrs), target, refreshAt
	h.Status, h.UpdatedAt = storage.StatusPending, now.UnixMilli()
	return true
}
