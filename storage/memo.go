package storage

// One statement can read what the next call of the same transaction would
// read again: DNS UPDATE reads a name by its label and locks its row, and
// the rule it then calls locks the same row by id. On PostgreSQL that is a
// round trip while the account's other writes wait (group.go). As long as
// nothing else was sent on the transaction since, the second read would
// find what the first did (the row is locked, and this transaction changed
// nothing in between), so the first leaves its answer for it.

// memo is what one statement read, for the one call that reads it again.
type memo struct {
	key  string
	sent uint64 // the connection's statements when it was read
	val  any
}

// remember leaves v as what key reads, on PostgreSQL.
func (t *Tx) remember(key string, v any) {
	if t.pg != nil {
		t.memo = memo{key: key, sent: t.pg.Sent(), val: v}
	}
}

// recall is what key reads if it was remembered and nothing was sent on
// the transaction since; once asked, it is forgotten.
func (t *Tx) recall(key string) (any, bool) {
	m := t.memo
	t.memo = memo{}
	if t.pg == nil || m.key != key || m.sent != t.pg.Sent() {
		return nil, false
	}
	return m.val, true
}
