package storage

import (
	"errors"
	"fmt"
	"slices"

	"github.com/lib/pq"
)

// A batch's account, read without its lock. On PostgreSQL the parts of a
// batch (group.go) of one account's writes do not take the account's row
// lock to check its cap: the lock would make the batch wait for the one
// before it to commit, and the counter's trigger would move the row once
// per part. Instead:
//
//   - a part reads the account as committed (LockAccountInPool,
//     LockHostnameByLabelFor) and sees, added to its counter, the active
//     hostnames the parts before it created (pendingActive);
//   - those hostnames are inserted by the batch's last statement (keepLater),
//     so that the counter's trigger moves the row once, there;
//   - a rule that allows a create under a cap says so (CapActive), and the
//     last statement takes the account's lock before anything else and
//     checks, under it, that the account's count with the batch's creates
//     stays within the least cap any of them was allowed under
//     (hostmint_capped, migration 23). If not (another node, or a write
//     alone, took the room meanwhile), the batch rolls back and each of its
//     writes runs alone, under the lock from its first statement.
//
// So the count is never over a cap a create was allowed under: each
// increment of the counter happens either under the lock taken before the
// check that read it (a write alone), or after that check ran again under
// the lock held until the commit (a batch). An account read so is marked
// Unlocked: a rule that needs the exact count (at the cap, where expired
// names are looked up) reads it again with LockAccount.

// errCapPassed is the batch's last statement refusing it
// (hostmint_capped): its writes run again alone.
var errCapPassed = errors.New("storage: the batch's creates would pass the cap they were allowed under")

// cappedCode is the SQLSTATE hostmint_capped raises.
const cappedCode = "HM409"

// capped is errCapPassed if err is hostmint_capped's, else err.
func capped(err error) error {
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == cappedCode {
		return fmt.Errorf("%w (%s)", errCapPassed, pe.Detail)
	}
	return err
}

// unlocked reports whether the transaction reads accounts without their
// lock: it runs a batch's parts on PostgreSQL.
func (q Queries) unlocked() bool { return q.tx != nil && q.tx.batch }

// pendingActive counts the active hostnames of the account that the
// transaction put off (a batch's creates, kept for its last statement).
func (t *Tx) pendingActive(accountID string) int {
	return activeIn(t.kept, accountID) + activeIn(t.later, accountID)
}

// activeIn counts the active hostnames of the account that ws insert.
func activeIn(ws []laterWrite, accountID string) int {
	n := 0
	for _, w := range ws {
		if h, ok := w.insert.(*Hostname); ok && h.AccountID == accountID && slices.Contains(ActiveStatuses, h.Status) {
			n++
		}
	}
	return n
}

// asUnlocked marks a, read without its lock, and counts in the hostnames
// the transaction put off.
func (t *Tx) asUnlocked(a *Account) {
	a.ActiveHostnames += t.pendingActive(a.ID)
	a.Unlocked = true
}

// CapActive has the write commit only if the account then holds at most
// cap active hostnames by its counter, as a rule that allows a create
// below cap has checked. Where the account was read Unlocked, the write's
// last statement checks it again under the account's lock; elsewhere the
// lock taken with the read makes the rule's check exact, and this does
// nothing.
func (t *Tx) CapActive(accountID string, cap int) {
	if !t.batch {
		return
	}
	if t.caps == nil {
		t.caps = map[string]int{}
	}
	if c, ok := t.caps[accountID]; !ok || cap < c {
		t.caps[accountID] = cap
	}
}

// keepLater moves the hostnames (and the seen MACs, seen_macs.go) a
// batch's part put off to t.kept, for the batch's last statement, unless
// the part updates a row after inserting it (then they are written in
// their order, as before).
func (t *Tx) keepLater() {
	if !t.batch || updateAfterInsert(t.later) {
		return
	}
	rest := t.later[:0:0]
	for _, w := range t.later {
		switch w.insert.(type) {
		case *Hostname, *SeenMAC:
			t.kept = append(t.kept, w)
		default:
			rest = append(rest, w)
		}
	}
	t.later = rest
}

// capColumns are the flush statement's checks of t.caps, given the
// hostnames it inserts (later): one column each, listed before any other
// column, so that the account's lock is taken before a rate limit's bucket,
// in the order a write alone takes them.
func (t *Tx) capColumns(later []laterWrite) (exprs []string, args [][]any) {
	ids := make([]string, 0, len(t.caps))
	for id := range t.caps {
		ids = append(ids, id)
	}
	slices.Sort(ids) // one order across batches of several accounts
	for _, id := range ids {
		exprs = append(exprs, "hostmint_capped(?, ?, ?)")
		args = append(args, []any{id, activeIn(later, id), t.caps[id]})
	}
	return exprs, args
}
