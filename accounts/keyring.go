package accounts

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
)

// Keyring is a node's set of TSIG keys that may sign: every key not
// revoked, its secret opened, with who it acts for and its team's access,
// loaded with the feed's snapshot and kept current by its changes, as the
// Authenticator keeps API keys: a revocation or a team's suspension holds
// at once on the node that made it and reaches the others through the feed
// (milliseconds on PostgreSQL). DNS servers verify signatures with Secrets;
// an UPDATE's principal comes from Principal, which costs no SQL.
type Keyring struct {
	store *storage.Store
	seal  seal.Key
	now   func() time.Time

	mu        sync.RWMutex
	keys      map[string]*ringKey // key name (lowercase, no trailing dot) -> key
	byID      map[string]string   // id -> key name
	byAccount map[string][]string // account id -> key names
	onChange  atomic.Pointer[func()]
}

type ringKey struct {
	algorithm, secret string
	expiresAt         int64 // Unix ms, 0: never (the expiry of the API key that issued it)
	principal         access.Principal
	account           storage.Account // its team's access: suspension, plan end
	named             bool            // principal.Names read
}

// ErrUnknownTSIGKey is Principal's answer for a name that is no key of the
// ring (never issued, or revoked).
var ErrUnknownTSIGKey = errors.New("accounts: no such TSIG key")

// NewKeyring makes an empty ring over store; k opens the secrets (none: the
// ring stays empty, as no key could have been issued).
func NewKeyring(store *storage.Store, k seal.Key) *Keyring {
	return &Keyring{store: store, seal: k, now: time.Now, keys: map[string]*ringKey{},
		byID: map[string]string{}, byAccount: map[string][]string{}}
}

// OnChange sets f to be called (from the feed's goroutine, so quickly) after
// every change of the set of keys.
func (r *Keyring) OnChange(f func()) { r.onChange.Store(&f) }

func (r *Keyring) changed() {
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

func keyName(n string) string { return strings.ToLower(strings.TrimSuffix(n, ".")) }

const keyringPage = 10_000

// Load implements storage.Consumer: the ring becomes the store's keys.
func (r *Keyring) Load(ctx context.Context, q storage.Queries) error {
	fresh := NewKeyring(r.store, r.seal)
	if len(r.seal) > 0 {
		for after := ""; ; {
			rows, err := q.ActiveTSIGKeys(ctx, after, keyringPage)
			if err != nil {
				return err
			}
			if err := fresh.add(ctx, q, rows); err != nil {
				return err
			}
			if len(rows) < keyringPage {
				break
			}
			after = rows[len(rows)-1].ID
		}
	}
	r.mu.Lock()
	changed := !maps.EqualFunc(r.keys, fresh.keys, func(a, b *ringKey) bool { return a.secret == b.secret })
	r.keys, r.byID, r.byAccount = fresh.keys, fresh.byID, fresh.byAccount
	r.mu.Unlock()
	if changed {
		r.changed()
	}
	return nil
}

// add puts rows into the ring with their accounts' access. A row that
// cannot be opened is left out: a node with another encryption key cannot
// verify its signatures.
func (r *Keyring) add(ctx context.Context, q storage.Queries, rows []storage.TSIGKey) error {
	ids := make([]string, 0, len(rows))
	for _, row := range rows {
		ids = append(ids, row.AccountID)
	}
	as, err := q.AccountsByID(ctx, slices.Compact(slices.Sorted(slices.Values(ids))))
	if err != nil {
		return err
	}
	open := map[string]storage.Account{}
	for _, a := range as {
		open[a.ID] = a.AccessOnly()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range rows {
		row := &rows[i]
		secret, err := OpenTSIGSecret(r.seal, row)
		if err != nil {
			continue
		}
		r.drop(row.ID)
		r.keys[row.KeyName] = &ringKey{algorithm: row.Algorithm, secret: secret, expiresAt: row.ExpiresAt,
			account: open[row.AccountID], principal: principalOf(row)}
		r.byID[row.ID] = row.KeyName
		r.byAccount[row.AccountID] = append(r.byAccount[row.AccountID], row.KeyName)
	}
	return nil
}

func principalOf(row *storage.TSIGKey) access.Principal {
	return access.Principal{AccountID: row.AccountID, KeyID: row.ID, Scopes: access.ParseScopes(row.Scopes), Credential: "TSIG key"}
}

// drop removes the key with id; r.mu is held.
func (r *Keyring) drop(id string) bool {
	name, ok := r.byID[id]
	if !ok {
		return false
	}
	acct := r.keys[name].principal.AccountID
	delete(r.byID, id)
	delete(r.keys, name)
	r.byAccount[acct] = slices.DeleteFunc(r.byAccount[acct], func(n string) bool { return n == name })
	if len(r.byAccount[acct]) == 0 {
		delete(r.byAccount, acct)
	}
	return true
}

// Apply implements storage.Consumer: changed keys are read again, and a
// changed account's access with them.
func (r *Keyring) Apply(ctx context.Context, q storage.Queries, cs []storage.Change) error {
	if len(r.seal) == 0 {
		return nil
	}
	for _, c := range cs {
		switch c.Kind {
		case storage.KindTSIGKey:
			row, err := q.TSIGKey(ctx, c.Ref)
			if errors.Is(err, storage.ErrNotFound) || err == nil && row.RevokedAt != 0 {
				r.Forget(c.Ref)
				continue
			} else if err != nil {
				return err
			}
			r.mu.RLock()
			_, had := r.byID[row.ID]
			r.mu.RUnlock()
			if err := r.add(ctx, q, []storage.TSIGKey{*row}); err != nil {
				return err
			}
			if !had {
				r.changed()
			}
		case storage.KindAccount:
			r.mu.RLock()
			_, holds := r.byAccount[c.Ref]
			r.mu.RUnlock()
			if !holds {
				continue
			}
			a, err := q.Account(ctx, c.Ref)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			r.SetAccess(a)
		}
	}
	return nil
}

// SetAccess records an account's access for its keys (a suspension, a plan
// end): at once on the node that changed it, by Apply on the others.
func (r *Keyring) SetAccess(a *storage.Account) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range r.byAccount[a.ID] {
		r.keys[name].account = a.AccessOnly()
	}
}

// Forget drops a key (revoked) from the ring.
func (r *Keyring) Forget(id string) {
	r.mu.Lock()
	dropped := r.drop(id)
	r.mu.Unlock()
	if dropped {
		r.changed()
	}
}

// ErrClosedTeam is Check's answer for a key of a team that is suspended or
// whose plan ended: it may not sign until its operator restores it.
var ErrClosedTeam = errors.New("accounts: the TSIG key's team is suspended or its plan ended")

// Check is the one rule for whether the key named name (as a TSIG record
// carries it) may sign now with algorithm ("hmac-sha256."; "" when the
// signer did not say): nil, or ErrUnknownTSIGKey for a key not in the ring
// (never issued, revoked), expired, or used with another algorithm than
// its own, or ErrClosedTeam. Every path that takes a store key asks it:
// UPDATE, signed queries, transfers. It costs no SQL.
func (r *Keyring) Check(name, algorithm string) error {
	_, _, err := r.check(name, algorithm)
	return err
}

// check is Check with the key's principal as the ring holds it, and
// whether its Names were read.
func (r *Keyring) check(name, algorithm string) (p access.Principal, named bool, err error) {
	r.mu.RLock()
	k := r.keys[keyName(name)]
	if k != nil && algorithm != "" && keyName(algorithm) != k.algorithm {
		k = nil // a key is its secret and its algorithm
	}
	var (
		acct    storage.Account
		expires int64
	)
	if k != nil {
		p, acct, named, expires = k.principal, k.account, k.named, k.expiresAt
	}
	r.mu.RUnlock()
	now := r.now()
	if k == nil || expires != 0 && now.UnixMilli() >= expires {
		return p, false, ErrUnknownTSIGKey
	}
	if acct.Access(now.UnixMilli()) != storage.AccountActive {
		return p, false, ErrClosedTeam
	}
	return p, named, nil
}

// Principal is who a message signed by the key named name, with algorithm,
// acts for, when Check lets it sign.
func (r *Keyring) Principal(ctx context.Context, name, algorithm string) (*access.Principal, error) {
	p, named, err := r.check(name, algorithm)
	if err != nil {
		return nil, err
	}
	if !named {
		// The names of the hostnames its scopes are limited to, for
		// messages: read once (a hostname's name never changes).
		if err := nameHostnames(ctx, r.store.Reader(), &p); err != nil {
			return nil, err
		}
		r.mu.Lock()
		if k := r.keys[keyName(name)]; k != nil {
			k.principal.Names, k.named = p.Names, true
		}
		r.mu.Unlock()
	}
	return &p, nil
}

// ErrNoTransfer is MayTransfer's answer for a zone the key may not transfer.
var ErrNoTransfer = errors.New("accounts: a TSIG key transfers only its own team's domain, whole")

// MayTransfer is nil when the key named name, signing with algorithm, may
// transfer zone (lowercase, no trailing dot): a zone its reach covers
// whole, its team's own domain with a team-wide or domain-wide grant of
// hostnames:read or hostnames:write (external-dns's rfc2136 provider reads
// the zone to change what it made). Never a pool domain, whose other names
// are other teams', nor the catalog, nor anything once Check refuses the
// key. The operator's keys are no store keys and are not asked.
func (r *Keyring) MayTransfer(ctx context.Context, name, algorithm, zone string) error {
	p, _, err := r.check(name, algorithm)
	if err != nil {
		return err
	}
	d, err := r.store.Reader().DomainByName(ctx, zone)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return ErrNoTransfer
	case err != nil:
		return err
	}
	whole := access.Target{Domain: d.Name}
	if d.AccountID == "" || d.AccountID != p.AccountID ||
		!p.Allows(access.HostnamesRead, whole) && !p.Allows(access.HostnamesWrite, whole) {
		return ErrNoTransfer
	}
	return nil
}
