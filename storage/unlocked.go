package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hostmint/hostmint/storage/pgwire"
	"github.com/lib/pq"
)

// A batch's account, read without its lock. On PostgreSQL the parts of a
// batch (group.go) do not take their account's row lock to check its cap:
// the lock would make the batch wait for writes alone of the account to
// commit, and the counter's trigger would move the row once per part.
// Instead:
//
//   - a part reads the account as committed (AccountAndPool,
//     HostnameForMint) and sees, added to its counter, the active
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
//
// Since every grouped write locks its accounts first (lockFirst, below),
// the account a create is keyed by is locked from the batch's start, and
// its count read so is exact: the last statement's check, and the parts'
// reads of accounts not locked, remain for a write whose key is not its
// account, which no rule makes today. Both cost a statement's column and
// nothing else; the differential test fails without the locks and without
// the check (dnsupdate/pipeline_diff_test.go, docs/performance.md).

// errCapPassed is the batch's last statement refusing it
// (hostmint_capped): its writes run again alone.
var errCapPassed = errors.New("storage: the batch's creates would pass the cap they were allowed under")

// cappedCode is the SQLSTATE hostmint_capped raises.
const cappedCode = "HM409"

// capped is errCapPassed if err is hostmint_capped's, else err.
func capped(err error) error {
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == cappedCode {
		account, _, _ := strings.Cut(pe.Detail, " ") // "<account> <held> + <adding> > <cap>"
		return &accountRefusal{account: account, err: fmt.Errorf("%w (%s)", errCapPassed, pe.Detail)}
	}
	return err
}

// accountRefusal is a transaction's last statement refusing it for one
// account's sake: a cap its creates passed, or a rate limit its writes
// overdrew, together. A batch so refused runs that account's writes
// alone, and the others again as a batch (group.go): one account at its
// limits does not make every other account's writes run alone.
type accountRefusal struct {
	account string
	err     error
}

func (e *accountRefusal) Error() string { return e.err.Error() }
func (e *accountRefusal) Unwrap() error { return e.err }

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
	t.held.capped(accountID)
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

// A batch's creates are held by construction: a part that creates an
// active hostname for an account must either have read the account under
// its row lock (LockAccount), which no one else's create can then pass, or
// have told the batch the cap it checked (CapActive), which the last
// statement checks again under the lock. A part that did neither (a new
// create path, or a new limit on an account's names, that forgot
// CapActive) is rolled back and runs again alone, where every read of the
// account takes its lock: slower, never past a cap. PipelineStats counts
// such parts, and the pipeline's differential test requires none.

// errUnheld rolls back a batch's part that created an active hostname
// without holding its account's count (see above).
var errUnheld = errors.New("storage: a batch's part created a hostname without its account's lock or a cap (CapActive)")

// held is what the transaction holds its creates by: the accounts it
// locked, and those the running part gave a cap.
type held struct {
	locked, caps map[string]bool
	created      []*Hostname // inserted at once by the running part (InsertHostname)
}

func (h *held) lock(id string) {
	if h.locked == nil {
		h.locked = map[string]bool{}
	}
	h.locked[id] = true
}

func (h *held) capped(id string) {
	if h.caps == nil {
		h.caps = map[string]bool{}
	}
	h.caps[id] = true
}

// unheld is the first account the running part created an active
// hostname for (at once, or put off in later) without holding its count;
// "" if none.
func (t *Tx) unheld(later []laterWrite) string {
	check := func(h *Hostname) bool {
		return slices.Contains(ActiveStatuses, h.Status) && !t.held.locked[h.AccountID] && !t.held.caps[h.AccountID]
	}
	for _, h := range t.held.created {
		if check(h) {
			return h.AccountID
		}
	}
	for _, w := range later {
		if h, ok := w.insert.(*Hostname); ok && check(h) {
			return h.AccountID
		}
	}
	return ""
}

// lockFirst locks the accounts keys name (a key that is no account's id
// locks nothing), in the order of their ids, before anything else the
// transaction does: the statement is kept to go with its next one, so it
// costs no round trip. Every grouped write on PostgreSQL does so, in a
// batch or alone: the accounts' rows are then always taken before the
// rows under them (hostnames, buckets) and in one order, so that two
// transactions, on this node or on others, do not take them in opposite
// orders and deadlock (which PostgreSQL breaks only after its
// deadlock_timeout, a second of waiting for every write of the batch).
// The locked accounts' counts are exact, as LockAccount's are.
func (t *Tx) lockFirst(ctx context.Context, keys []string) error {
	if t.dialect != Postgres {
		return nil
	}
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		// No account id has a $ (which could end the block's quoting), a
		// NUL or a byte that is not UTF-8 (which PostgreSQL refuses): a
		// key with one, from a caller's header, is no account's.
		if utf8.ValidString(k) && !strings.ContainsAny(k, "$\x00") {
			ids = append(ids, k)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return nil
	}
	// A DO block returns no rows, so the statement it goes with keeps its
	// own first result.
	list := t.tx.NewRaw("?::text[]", pq.Array(ids)).String()
	stmt := "DO $hostmint$ BEGIN PERFORM 1 FROM accounts WHERE id = ANY(" + list + ") ORDER BY id FOR UPDATE; END $hostmint$"
	if _, err := t.tx.ExecContext(t.withNextCtx(ctx), pgwire.WithNext(stmt)); err != nil {
		return err
	}
	for _, id := range ids {
		t.held.lock(id)
	}
	return nil
}
