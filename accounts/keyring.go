package accounts

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
)

// Keyring is a node's set of TSIG keys that may sign: every key not
// revoked, its secret opened, loaded with the feed's snapshot and kept
// current by its changes (a revocation on another node reaches this one
// through the feed; on this one, at once). DNS servers verify signatures
// with Secrets; the UPDATE's principal comes from Principal, which checks
// the key and its team at the moment of use.
type Keyring struct {
	store *storage.Store
	seal  seal.Key
	now   func() time.Time

	mu   sync.RWMutex
	keys map[string]*ringKey // key name (lowercase, no trailing dot) -> key
	byID map[string]string   // id -> key name
	// version moves on every change of the set; onChange hears of it.
	version  atomic.Uint64
	onChange atomic.Pointer[func()]
}

type ringKey struct {
	id, account, algorithm, secret string
	scopes                         []access.Scope
}

// ErrUnknownTSIGKey is Principal's answer for a name that is no key of the
// ring (never issued, or revoked).
var ErrUnknownTSIGKey = errors.New("accounts: no such TSIG key")

// NewKeyring makes an empty ring over store; k opens the secrets (none: the
// ring stays empty, as no key could have been issued).
func NewKeyring(store *storage.Store, k seal.Key) *Keyring {
	return &Keyring{store: store, seal: k, now: time.Now, keys: map[string]*ringKey{}, byID: map[string]string{}}
}

// OnChange sets f to be called (from the feed's goroutine, so quickly) after
// every change of the set.
func (r *Keyring) OnChange(f func()) { r.onChange.Store(&f) }

// Version counts the changes of the set.
func (r *Keyring) Version() uint64 { return r.version.Load() }

func (r *Keyring) changed() {
	r.version.Add(1)
	if f := r.onChange.Load(); f != nil {
		(*f)()
	}
}

// Secrets returns the keys' secrets by the name a TSIG record carries
// (lowercase, with the trailing dot), as a DNS server's TsigSecret takes them.
func (r *Keyring) Secrets() map[string]string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make(map[string]string, len(r.keys))
	for name, k := range r.keys {
		out[name+"."] = k.secret
	}
	return out
}

// Algorithm is the algorithm of the key named name ("" if none).
func (r *Keyring) Algorithm(name string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if k := r.keys[keyName(name)]; k != nil {
		return k.algorithm
	}
	return ""
}

func keyName(n string) string { return strings.ToLower(strings.TrimSuffix(n, ".")) }

const keyringPage = 10_000

// Load implements storage.Consumer: the ring becomes the store's keys.
func (r *Keyring) Load(ctx context.Context, q storage.Queries) error {
	keys, byID := map[string]*ringKey{}, map[string]string{}
	if len(r.seal) > 0 {
		for after := ""; ; {
			rows, err := q.ActiveTSIGKeys(ctx, after, keyringPage)
			if err != nil {
				return err
			}
			for i := range rows {
				if k := r.open(&rows[i]); k != nil {
					keys[rows[i].KeyName], byID[k.id] = k, rows[i].KeyName
				}
			}
			if len(rows) < keyringPage {
				break
			}
			after = rows[len(rows)-1].ID
		}
	}
	r.mu.Lock()
	changed := !maps.EqualFunc(r.keys, keys, func(a, b *ringKey) bool { return a.secret == b.secret })
	r.keys, r.byID = keys, byID
	r.mu.Unlock()
	if changed {
		r.changed()
	}
	return nil
}

// open unseals a row; nil (and the key left out) when it cannot be opened:
// a node with another encryption key cannot verify its signatures.
func (r *Keyring) open(row *storage.TSIGKey) *ringKey {
	secret, err := OpenTSIGSecret(r.seal, row)
	if err != nil {
		return nil
	}
	return &ringKey{id: row.ID, account: row.AccountID, algorithm: row.Algorithm, secret: secret,
		scopes: access.ParseScopes(row.Scopes)}
}

// Apply implements storage.Consumer: changed keys are read again.
func (r *Keyring) Apply(ctx context.Context, q storage.Queries, cs []storage.Change) error {
	if len(r.seal) == 0 {
		return nil
	}
	for _, c := range cs {
		if c.Kind != storage.KindTSIGKey {
			continue
		}
		row, err := q.TSIGKey(ctx, c.Ref)
		if errors.Is(err, storage.ErrNotFound) || err == nil && row.RevokedAt != 0 {
			r.Forget(c.Ref)
			continue
		} else if err != nil {
			return err
		}
		if k := r.open(row); k != nil {
			r.mu.Lock()
			_, had := r.byID[k.id]
			r.keys[row.KeyName], r.byID[k.id] = k, row.KeyName
			r.mu.Unlock()
			if !had {
				r.changed()
			}
		}
	}
	return nil
}

// Forget drops a key (revoked) from the ring.
func (r *Keyring) Forget(id string) {
	r.mu.Lock()
	name, ok := r.byID[id]
	delete(r.byID, id)
	delete(r.keys, name)
	r.mu.Unlock()
	if ok {
		r.changed()
	}
}

// Principal is who a message signed by the key named name acts for, checked
// now against the store: ErrUnknownTSIGKey for a key that is not in the ring
// or is revoked, the 403 of a closed team, or its principal.
func (r *Keyring) Principal(ctx context.Context, name string) (*access.Principal, error) {
	r.mu.RLock()
	k := r.keys[keyName(name)]
	r.mu.RUnlock()
	if k == nil {
		return nil, ErrUnknownTSIGKey
	}
	// The row, not the ring, says whether the key still signs: a
	// revocation on another node holds before its change reaches this one.
	q := r.store.Reader()
	revoked, acct, err := q.TSIGKeyAccount(ctx, k.id)
	if errors.Is(err, storage.ErrNotFound) || err == nil && revoked {
		return nil, ErrUnknownTSIGKey
	} else if err != nil {
		return nil, err
	}
	if err := CheckOpen(acct, r.now()); err != nil {
		return nil, err
	}
	p := &access.Principal{AccountID: k.account, KeyID: k.id, Scopes: k.scopes, Credential: "TSIG key"}
	if err := nameHostnames(ctx, q, p); err != nil {
		return nil, err
	}
	return p, nil
}
