package dnsupdate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// A signed message is applied at most once. TSIG's time window (RFC 8945
// 5.2.3) lets a captured message be sent again for as long as it lasts,
// and a replay would undo what was done since (an address moved back). So
// every verified message's MAC is recorded in the store, whatever the
// message's outcome (short of refusals no change of the zone turns: a
// malformed message, a name outside its zone, a key the node does not
// hold), and one whose MAC is recorded already is refused:
//   - a message that writes records it in its own transaction, with its
//     last statement (no round trip of its own);
//   - one that commits nothing (a no-op commits only its MAC; a refusal,
//     a prerequisite that failed) records it in a statement of its own,
//     so that, replayed once the zone has changed, it is not applied then.
// The table is shared by every node on the store, and its key decides
// between two nodes given the same message at once (storage/seen_macs.go).

// MaxFudge is the most a signed message's time may be off this server's
// clock. A MAC is kept for that long past its message's time, plus
// macMargin, so no message is taken that is not remembered.
const MaxFudge = 300 * time.Second

// macMargin keeps a MAC past its window: another node whose clock is
// behind this one's takes the message for that much longer.
const macMargin = time.Minute

// replayed is the answer to a message whose MAC was recorded already.
var replayed = refuse(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited,
	"this signed message was already received: a replay (or a retransmission); sign a new one")

// seenOf is the row that records sig's MAC, or the refusal of a message
// whose MAC cannot be kept: none (the server always passes the record it
// verified), or a time the store would not remember it for.
func seenOf(sig *dns.TSIG, now time.Time) (*storage.SeenMAC, *Answer) {
	if sig == nil || sig.MAC == "" {
		a := refuse(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, "the message's TSIG record carries no MAC")
		return nil, &a
	}
	signed := time.Unix(int64(sig.TimeSigned), 0)
	if d := now.Sub(signed); d > MaxFudge || d < -MaxFudge {
		a := refuse(dns.RcodeRefused, dns.ExtendedErrorCodeProhibited, fmt.Sprintf(
			"the message was signed at %s, %.0f s from this server's clock; at most %.0f s are taken (RFC 8945 5.2.3): check the client's clock",
			signed.UTC().Format(time.RFC3339), d.Abs().Seconds(), MaxFudge.Seconds()))
		return nil, &a
	}
	sum := sha256.Sum256([]byte(lower(sig.Hdr.Name) + "|" + strings.ToLower(sig.MAC)))
	return &storage.SeenMAC{Digest: hex.EncodeToString(sum[:]), ExpiresAt: signed.Add(MaxFudge + macMargin).UnixMilli()}, nil
}

// unapplied is a, the answer to a message that committed nothing, once
// its MAC is recorded in a statement of its own; replayed when it was
// recorded already. A store that failed (SERVFAIL) keeps its answer: its
// commit may have gone through unheard, the MAC with it.
func (u *Updater) unapplied(ctx context.Context, seen *storage.SeenMAC, a Answer) Answer {
	fresh, err := u.store.RecordMAC(ctx, seen)
	if err == nil && !fresh && a.Rcode != dns.RcodeServerFailure {
		return replayed
	}
	return a
}
