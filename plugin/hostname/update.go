package hostname

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin/tsig"
	"github.com/hostmint/hostmint/app"
	"github.com/hostmint/hostmint/plugin/hostname/answer"
	"github.com/miekg/dns"
)

// Updater applies DNS UPDATE messages (dynamic_update) whose TSIG
// signature the server has verified; the application gives it, as
// k8s_external is given its backend.
type Updater interface {
	Update(ctx context.Context, sig *dns.TSIG, addr string, r *dns.Msg) (rcode int, ede *dns.EDNS0_EDE, err error)
}

// TSIG for UPDATE: the keys are the store's, and CoreDNS's server verifies
// signatures with the secrets its server block was set up with. setupTSIG
// adds the store's keys to them (beside those of a tsig block, which
// keeps working for transfers); when the store has a key they do not
// verify, the node reloads (as the reload plugin does) so that its
// servers take the new set. Revocation needs no reload: the key gate
// (keygate.go) refuses a key the node no longer holds, at once, on every
// path, and a reload closes TCP connections its servers had accepted and
// not yet read.

// setupTSIG lets the server block of c take UPDATE and verify the store's
// keys; it returns the secrets it added.
func setupTSIG(c *caddy.Controller, cfg *config) (map[string]string, error) {
	conf := dnsserver.GetConfig(c)
	conf.AllowOpcode(dns.OpcodeUpdate)
	secrets, err := app.TSIGSecrets(cfg.app)
	if err != nil {
		return nil, err
	}
	merged := maps.Clone(conf.TsigSecret)
	if merged == nil {
		merged = map[string]string{}
	}
	for name, s := range secrets {
		if _, taken := merged[name]; !taken { // a tsig block's own key wins
			merged[name] = s
		}
	}
	conf.TsigSecret = merged
	return secrets, nil
}

// reloader restarts the CoreDNS instance a server block belongs to, at
// most once every reloadEvery: a burst of new keys costs one reload.
type reloader struct {
	mu      sync.Mutex
	inst    *caddy.Instance // set when the instance has started, nil once it stops
	node    updateNode      // its node, once the handler started
	pending *time.Timer
	last    time.Time
}

type reloaderKey struct{}

const reloadEvery = time.Second

// reloaderOf is the reloader of the instance c sets up (one per instance).
func reloaderOf(c *caddy.Controller) *reloader {
	if r, ok := c.Get(reloaderKey{}).(*reloader); ok {
		return r
	}
	r := new(reloader)
	c.Set(reloaderKey{}, r)
	c.OnShutdown(r.stop)
	return r
}

// stop ends the reloader with its instance: a reload due then would start
// the instance's Corefile again, which a newer instance has replaced.
func (r *reloader) stop() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending != nil {
		r.pending.Stop()
		r.pending = nil
	}
	r.inst = nil
	return nil
}

func init() {
	caddy.RegisterEventHook("hostname", func(ev caddy.EventName, info any) error {
		i, ok := info.(*caddy.Instance)
		if !ok || ev != caddy.InstanceStartupEvent {
			return nil
		}
		i.StorageMu.RLock()
		r, _ := i.Storage[reloaderKey{}].(*reloader)
		i.StorageMu.RUnlock()
		if r != nil {
			r.mu.Lock()
			r.inst = i
			r.mu.Unlock()
		}
		return nil
	})
}

// reloaded is when each Corefile (its text) was last reloaded for its keys:
// a reload's new instance has a reloader of its own, and without this a
// burst of key changes would reload every 50 ms, once per instance.
var reloaded sync.Map // string -> time.Time

func (r *reloader) soon() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending != nil || r.inst == nil && !r.last.IsZero() {
		return
	}
	wait := max(50*time.Millisecond, reloadEvery-time.Since(r.last))
	r.pending = time.AfterFunc(wait, r.fire)
}

// fire reloads the instance, or waits until reloadEvery has passed since
// its Corefile was last reloaded.
func (r *reloader) fire() {
	r.mu.Lock()
	i := r.inst
	if i != nil {
		key := string(i.Caddyfile().Body())
		if at, ok := reloaded.Load(key); ok {
			if rest := reloadEvery - time.Since(at.(time.Time)); rest > 0 {
				r.pending = time.AfterFunc(rest, r.fire)
				r.mu.Unlock()
				return
			}
		}
		reloaded.Store(key, time.Now())
	}
	r.pending, r.last = nil, time.Now()
	n := r.node
	r.mu.Unlock()
	if i == nil || n == nil {
		return
	}
	log.Infof("TSIG keys changed: reloading so that the DNS servers verify the new set")
	n.ReloadTSIG(func() error {
		_, err := i.Restart(nil)
		if err != nil {
			log.Errorf("reload for new TSIG keys failed: %v", err)
		}
		return err
	})
}

// startTSIG follows the store's keys once the node is up.
func (h *Handler) startTSIG(n updateNode, u Updater) {
	h.reloader.mu.Lock()
	h.reloader.node = n
	h.reloader.mu.Unlock()
	n.ServeTSIG(h.tsigSecrets)
	h.updater = u
	h.watchKeys(n)
}

// watchKeys reloads this handler's instance when the store has a key its
// servers do not verify; again when a newer instance failed to start and
// this one goes on serving.
func (h *Handler) watchKeys(n updateNode) {
	baked := h.tsigSecrets
	n.OnTSIGChange(func() {
		if unverified(n.TSIGSecrets(), baked) {
			h.reloader.soon()
		}
	})
	if unverified(n.TSIGSecrets(), baked) {
		h.reloader.soon()
	}
}

// unverified reports whether keys holds a key (or a secret) that baked,
// what the servers verify, does not. Keys only dropped are not: the key
// gate (keygate.go) and the UPDATE door refuse them without a reload.
func unverified(keys, baked map[string]string) bool {
	for name, secret := range keys {
		if b, ok := baked[name]; !ok || b != secret {
			return true
		}
	}
	return false
}

// keyNode is the node that judges the store's TSIG keys: nil before it
// started, or without dynamic_update (no store key is verified then).
func (h *Handler) keyNode() updateNode {
	if h.reloader == nil {
		return nil
	}
	h.reloader.mu.Lock()
	defer h.reloader.mu.Unlock()
	return h.reloader.node
}

// serveUpdate answers an UPDATE message.
func (h *Handler) serveUpdate(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if h.updater == nil {
		return h.writeUpdate(w, r, nil, dns.RcodeNotImplemented, nil)
	}
	// The key gate let the signature through (its MAC and time; the door
	// judges the key itself); the tsig plugin, when there is one, verified
	// it too and signs the answer.
	sig := signatureOf(ctx)
	if sig == nil {
		return h.writeUpdate(w, r, nil, dns.RcodeRefused, &dns.EDNS0_EDE{
			InfoCode: dns.ExtendedErrorCodeProhibited, ExtraText: "UPDATE must be signed with a TSIG key this service issued"})
	}
	t := sig
	if _, verified := tsig.ValidatedKeyName(ctx); verified {
		t = nil
	}
	rcode, ede, err := h.updater.Update(ctx, sig, w.RemoteAddr().String(), r)
	if err != nil {
		tsigRefused.WithLabelValues("key").Inc()
		return writeTSIGError(w, r, sig, dns.ErrSecret)
	}
	return h.writeUpdate(w, r, t, rcode, ede)
}

// writeUpdate answers r with rcode and, when r has answer.EDNS, ede (nil: none);
// signed with t's key when t is set.
func (h *Handler) writeUpdate(w dns.ResponseWriter, r *dns.Msg, t *dns.TSIG, rcode int, ede *dns.EDNS0_EDE) (int, error) {
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	if o := r.IsEdns0(); o != nil {
		m.SetEdns0(answer.MaxUDPSize, o.Do())
		if ede != nil {
			opt := m.IsEdns0()
			opt.Option = append(opt.Option, ede)
		}
	}
	countUpdate(rcode)
	if t != nil {
		m.SetTsig(t.Hdr.Name, t.Algorithm, uint16(maxFudge), time.Now().Unix())
	}
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}

// signQuery readies the answer to a query signed with a TSIG key when no
// tsig plugin did (certbot asks for the zone's SOA this way before it
// updates). The key gate let the query through: its key may sign.
func signQuery(r, m *dns.Msg) {
	if t := r.IsTsig(); t != nil {
		m.SetTsig(t.Hdr.Name, t.Algorithm, uint16(maxFudge), time.Now().Unix())
	}
}
