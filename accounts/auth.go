package accounts

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/plugin/pkg/cache"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/storage"
)

// Authenticator verifies bearer keys. Verified key rows are cached per node,
// so a request costs one hash and no SQL; a key's change row (revocation)
// drops it from every node's cache through the change feed, as an account's
// change row (a suspension, a plan's end) drops the account's keys, and entries are
// re-read after cacheTTL in any case. Ids that match no key are remembered
// too (bounded, briefly), so a flood of made-up keys costs no SQL either; a
// key created later reaches every node's feed, which drops the entry.
type Authenticator struct {
	store *storage.Store
	cache sync.Map // key id -> *cachedKey
	// unknown: hash of a key id -> the id (compared, so that a crafted
	// hash collision cannot hide a real key) and when it was looked up.
	unknown atomic.Pointer[cache.Cache[unknownKey]]
	// epoch moves whenever a key is forgotten: a row read before then may
	// be stale (revoked meanwhile) and is not cached.
	epoch atomic.Uint64
	now   func() time.Time
}

type cachedKey struct {
	hash      string
	principal access.Principal
	expiresAt int64
	revoked   bool
	account   storage.Account // its team's access (suspension, plan end)
	loaded    time.Time
}

type unknownKey struct {
	id     string
	loaded time.Time
}

const (
	cacheTTL       = 5 * time.Minute
	unknownTTL     = 30 * time.Second
	unknownEntries = 10_000
)

// NewAuthenticator makes an Authenticator over store.
func NewAuthenticator(store *storage.Store) *Authenticator {
	a := &Authenticator{store: store, now: time.Now}
	a.unknown.Store(cache.New[unknownKey](unknownEntries))
	return a
}

// Authenticate checks an API key (svc_<key_id>_<secret>), however the door
// it came through carried it.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (*access.Principal, error) {
	id, secret, ok := apikey.Parse(token)
	if !ok {
		return nil, apierror.Unauthorized()
	}
	now := a.now()
	k, err := a.lookup(ctx, id, now)
	if err != nil {
		return nil, err
	}
	if k == nil || k.revoked || !apikey.Verify(k.hash, secret) {
		return nil, apierror.Unauthorized()
	}
	if k.expiresAt != 0 && now.UnixMilli() >= k.expiresAt {
		return nil, apierror.New(apierror.CodeKeyExpired,
			"API key expired at %s; create a new key", stamp(k.expiresAt))
	}
	if err := CheckOpen(&k.account, now); err != nil {
		return nil, err
	}
	return &k.principal, nil
}

func (a *Authenticator) lookup(ctx context.Context, id string, now time.Time) (*cachedKey, error) {
	if v, ok := a.cache.Load(id); ok {
		if k := v.(*cachedKey); now.Sub(k.loaded) < cacheTTL {
			return k, nil
		}
	}
	h := cache.Hash([]byte(id))
	if u, ok := a.unknown.Load().Get(h); ok && u.id == id && now.Sub(u.loaded) < unknownTTL {
		return nil, nil
	}
	epoch := a.epoch.Load()
	row, err := a.store.Reader().Key(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		if a.epoch.Load() == epoch {
			a.unknown.Load().Add(h, unknownKey{id: id, loaded: now})
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p := access.Principal{AccountID: row.AccountID, KeyID: row.ID, Scopes: access.ParseScopes(row.Scopes)}
	if err := nameHostnames(ctx, a.store.Reader(), &p); err != nil {
		return nil, err
	}
	acct, err := a.store.Reader().Account(ctx, row.AccountID)
	if err != nil {
		return nil, err
	}
	k := &cachedKey{
		hash:      row.SecretHash,
		principal: p,
		expiresAt: row.ExpiresAt,
		revoked:   row.RevokedAt != 0,
		account:   acct.AccessOnly(),
		loaded:    now,
	}
	if a.epoch.Load() == epoch {
		a.cache.Store(id, k)
	}
	return k, nil
}

// nameHostnames fills p.Names for the hostnames its scopes are limited to
// (a hostname's name never changes, so the cache may keep it).
func nameHostnames(ctx context.Context, q storage.Queries, p *access.Principal) error {
	var ids []string
	for _, s := range p.Scopes {
		if s.Hostname != "" {
			ids = append(ids, s.Hostname)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	hs, err := q.HostnamesByID(ctx, ids)
	if err != nil {
		return err
	}
	p.Names = map[string]string{}
	for _, h := range hs {
		p.Names[h.ID] = h.Name
	}
	return nil
}

// Forget drops a key from this node's cache.
func (a *Authenticator) Forget(id string) {
	a.epoch.Add(1)
	a.cache.Delete(id)
	a.unknown.Load().Remove(cache.Hash([]byte(id)))
}

// ForgetAccount drops an account's keys from this node's cache: its access
// changed. Accounts change seldom, and a node caches few keys, so the walk
// is cheap.
func (a *Authenticator) ForgetAccount(id string) {
	a.epoch.Add(1)
	a.cache.Range(func(k, v any) bool {
		if v.(*cachedKey).principal.AccountID == id {
			a.cache.Delete(k)
		}
		return true
	})
}

// Load implements storage.Consumer: a new snapshot starts with an empty cache.
func (a *Authenticator) Load(context.Context, storage.Queries) error {
	a.epoch.Add(1)
	a.cache.Clear()
	a.unknown.Store(cache.New[unknownKey](unknownEntries))
	return nil
}

// Apply implements storage.Consumer: changed keys are read again on next use.
func (a *Authenticator) Apply(_ context.Context, _ storage.Queries, cs []storage.Change) error {
	for _, c := range cs {
		switch c.Kind {
		case storage.KindKey:
			a.Forget(c.Ref)
		case storage.KindAccount:
			a.ForgetAccount(c.Ref)
		}
	}
	return nil
}
