package storage

import (
	"context"
	"time"
)

// The feed's clock: a signed zone's transfer is signed in the windows of
// the hour its serial's newest change was written (plugin/hostname/chain),
// so its signatures are renewed only when changes come. A quiet service
// still has to renew them: while any domain is signed, a change of kind
// clock is written once in each hour no other change was, and moves the
// serial, which brings every node's secondaries the renewals due.

// KindClock is a change that names nothing: it moves the feed's clock.
const KindClock = "clock"

// TickClock writes a clock change when a domain is signed and the newest
// change was written before the hour of now; it reports whether it wrote
// one. Every node may run it: two in the same hour write two changes, which
// cost nothing but a serial.
func (s *Store) TickClock(ctx context.Context, now time.Time) (bool, error) {
	q := s.Reader()
	newest, err := q.NewestChange(ctx)
	if err != nil {
		return false, err
	}
	if newest.CreatedAt/hourMilli >= now.UnixMilli()/hourMilli {
		return false, nil
	}
	signed, err := q.db.NewSelect().Model((*Domain)(nil)).Where("dnssec").Exists(ctx)
	if err != nil || !signed {
		return false, mapErr(err)
	}
	_, err = s.Write(ctx, func(ctx context.Context, tx *Tx) error {
		tx.NoAudit()
		return tx.Changed(ctx, KindClock, "")
	})
	return err == nil, err
}

const hourMilli = int64(time.Hour / time.Millisecond)
