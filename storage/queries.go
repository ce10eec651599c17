package storage

import (
	"github.com/uptrace/bun"
)

// Queries are the reads and writes of single rows, shared by the store (no
// transaction) and Tx (inside one).
type Queries struct {
	db      bun.IDB
	dialect Dialect
	tx      *Tx     // the transaction these run in; nil for a Reader
	served  *served // rows read ahead by ChangesServed
}
