package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/adminapi"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
)

// Node is what every DNS node runs: a store, the feed that keeps its index
// current, and its readiness. A writer (Start) adds the services, the API
// and the background work; a read-only node (StartReadOnly) adds only
// GET /api/health.
type Node struct {
	node   *node
	api    *listener // nil: none (a read-only node without api)
	maxLag time.Duration
	key    seal.Key // cert_encryption_key_file's
}

// openNode acquires the node of cfg (shared with any other configuration
// on the same store).
func openNode(ctx context.Context, cfg *Config, newIndex NewIndex) (*Node, error) {
	key, err := certKey(cfg.CertKeyFile, cfg.ReadOnly)
	if err != nil {
		return nil, err
	}
	n, err := acquireNode(ctx, cfg, key, newIndex)
	if err != nil {
		return nil, err
	}
	return &Node{node: n, maxLag: cfg.MaxLag, key: key}, nil
}

// StartReadOnly starts a DNS-only node on cfg's store (a hot standby is
// fine): it checks the schema instead of migrating, follows the writers
// by polling, writes nothing, and serves only GET /api/health on cfg.API
// (when set), every other route answering that the node is read-only.
func StartReadOnly(cfg Config, newIndex NewIndex) (*Node, error) {
	cfg.ReadOnly = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := openNode(ctx, &cfg, newIndex)
	if err != nil {
		return nil, err
	}
	if cfg.API != "" {
		srv := adminapi.ReadOnly(n.health, observeAPI, slog.Default().With("plugin", "hostname"))
		if n.api, err = acquireListener(cfg.API, srv, apiLimits(nil)); err != nil {
			n.node.release()
			return nil, err
		}
	}
	log.Infof("read-only node: serving DNS from %s storage, writing nothing", cfg.Dialect)
	return n, nil
}

// Index is the store's index, made by the NewIndex of the first start on
// that store.
func (n *Node) Index() Index { return n.node.index }

// Ready reports whether the node should be answering: its index is loaded
// and it is within max_lag of its database's writers.
func (n *Node) Ready() bool {
	lag, changes := n.node.feed.Lag()
	return n.lagging(lag, changes) == nil
}

// lagging says why the node, lag and changes behind, is not ready; nil
// when it is.
func (n *Node) lagging(lag time.Duration, changes int64) error {
	if !n.node.feed.Loaded() {
		return fmt.Errorf("the DNS index is not loaded yet")
	}
	if zs := n.node.index.Unservable(); len(zs) > 0 {
		return fmt.Errorf("signed domain(s) %s: their DNSSEC key cannot be opened with this node's cert_encryption_key_file; "+
			"they answer SERVFAIL", strings.Join(zs, ", "))
	}
	if n.maxLag > 0 && lag > n.maxLag {
		return fmt.Errorf("this node is %.1f s (%d changes) behind its database's writers, more than max_lag %v", lag.Seconds(), changes, n.maxLag)
	}
	return nil
}

// health is the API's health check: the index is loaded, the node within
// max_lag, and the store answers.
func (n *Node) health(ctx context.Context) (adminapi.Health, error) {
	lag, changes := n.node.feed.Lag()
	h := adminapi.Health{ReadOnly: n.node.store.ReadOnly(), LagSeconds: lag.Seconds(), LagChanges: changes}
	if err := n.lagging(lag, changes); err != nil {
		return h, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := n.node.store.Ping(ctx); err != nil {
		return h, fmt.Errorf("the database does not answer")
	}
	return h, nil
}

// Stop releases what the start acquired.
func (n *Node) Stop() error {
	var errAPI error
	if n.api != nil {
		errAPI = n.api.release()
	}
	errStore := n.node.release()
	if errAPI != nil {
		return errAPI
	}
	return errStore
}

// node is one open store with the feed that keeps its index current.
type node struct {
	key     string
	refs    int
	store   *storage.Store
	feed    *storage.Feed
	index   Index
	auth    *accounts.Authenticator
	keyring *accounts.Keyring
	// served are the TSIG keys this node's DNS servers verify (set by the
	// plugin when they start), by name with the trailing dot.
	served atomic.Pointer[map[string]string]
	// tsigMu guards a reload for new keys in flight (ReloadTSIG) and the
	// keys its new servers verify, counted once it is done.
	tsigMu    sync.Mutex
	reloading int
	incoming  *map[string]string
	metrics   *feedMetrics
	// guesses throttles wrong admin tokens: the API and the dashboard, and
	// the old and new instance of a reload, count together.
	guesses *ratelimit.Guesses
	certs   atomic.Pointer[storage.CertificateStats]
	cancel  context.CancelFunc
	done    chan struct{}
}

// fanout feeds every consumer the same snapshot and changes.
type fanout []storage.Consumer

func (f fanout) Load(ctx context.Context, q storage.Queries) error {
	for _, c := range f {
		if err := c.Load(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func (f fanout) Apply(ctx context.Context, q storage.Queries, cs []storage.Change) error {
	for _, c := range f {
		if err := c.Apply(ctx, q, cs); err != nil {
			return err
		}
	}
	return nil
}

// openStore opens cfg's store: migrated by a writer, checked by a
// read-only node.
func openStore(ctx context.Context, cfg *Config) (*storage.Store, error) {
	if cfg.ReadOnly {
		return storage.OpenReadOnly(ctx, cfg.Dialect, cfg.DSN)
	}
	return storage.Open(ctx, cfg.Dialect, cfg.DSN)
}

// nodeKey names the shared node of a store: a read-only node and a writer
// on one database in one process are two.
func nodeKey(cfg *Config) string {
	return fmt.Sprintf("%s %s readonly=%v", cfg.Dialect, cfg.DSN, cfg.ReadOnly)
}

// acquireNode opens (or shares) the store of cfg and starts its feed;
// key opens the zones' DNSSEC keys and is the index's from the start, so
// a signed zone is never loaded unsigned.
func acquireNode(ctx context.Context, cfg *Config, key seal.Key, newIndex NewIndex) (*node, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	id := nodeKey(cfg)
	if b, ok := nodes[id]; ok {
		b.refs++
		return b, nil
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	signers := func(d *storage.Domain) (*domains.Signer, error) { return domains.OpenSigner(d, key) }
	b := &node{key: id, refs: 1, store: store, index: newIndex(signers), auth: accounts.NewAuthenticator(store),
		keyring: accounts.NewKeyring(store, key), metrics: &feedMetrics{}, guesses: ratelimit.NewGuesses(), done: make(chan struct{})}
	b.feed = storage.NewFeed(store, fanout{b.index, b.auth, b.keyring, b.metrics}, cfg.FeedPoll, slog.Default().With("plugin", "hostname"))
	b.feed.Reloaded = feedReloads.Inc
	fctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	var wg sync.WaitGroup
	wg.Go(func() { b.feed.Run(fctx) })
	wg.Go(func() { b.watchCertificates(fctx) })
	go func() {
		defer close(b.done)
		wg.Wait()
	}()
	nodes[id] = b
	return b, nil
}

func (b *node) release() error {
	sharedMu.Lock()
	if b.refs--; b.refs > 0 {
		sharedMu.Unlock()
		return nil
	}
	delete(nodes, b.key)
	sharedMu.Unlock()
	// Waited for without the lock: the goroutines take it to publish.
	b.cancel()
	<-b.done
	return b.store.Close()
}

// IndexSize is the number of hostnames in the indexes of every open store.
func IndexSize() int64 {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	var n int64
	for _, b := range nodes {
		n += b.index.Len()
	}
	return n
}
