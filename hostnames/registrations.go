package hostnames

import (
	"cmp"
	"context"
	"errors"
	"net/netip"
	"strings"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/labels"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/storage"
)

// acme-dns registrations for any domain (acme-dns's own use): anyone may
// register a credential whose name, <uuid>.<acme_dns_domain>, they point
// _acme-challenge.<a name of theirs> at by CNAME. No account stands
// behind one, so what bounds them is the source network's rate, allowfrom,
// and the purge of those unused for RegistrationRetention.

// RegistrationRetention is how long a registration lives without an update.
const RegistrationRetention = 180 * 24 * time.Hour

// Registrations an hour, counted from a source network (an IPv4 /24, an
// IPv6 /56, as response rate limiting counts clients), from the wider
// network around it (/16, /40: one holder's addresses), and from everywhere.
// An ACME client registers once per name it certifies, so even a busy
// network needs few; a loop or a scan is held to one every 3 minutes, one
// that spreads over a wide network to one every 18 s, and the table grows
// by at most 2 000 rows an hour whoever registers.
type registerLimit struct {
	v4, v6 int // prefix lengths; 0: everywhere
	limit  ratelimit.Limit
}

var (
	registerNetwork = registerLimit{24, 56, ratelimit.Limit{Kind: "acme-register", Max: 20, Window: time.Hour, What: "registrations"}}
	registerWide    = registerLimit{16, 40, ratelimit.Limit{Kind: "acme-register-wide", Max: 200, Window: time.Hour, What: "registrations"}}
	registerAll     = registerLimit{0, 0, ratelimit.Limit{Kind: "acme-register-all", Max: 2000, Window: time.Hour, What: "registrations"}}
	registerLimits  = []registerLimit{registerNetwork, registerWide, registerAll}
)

// The last registerReserve of the hour's registerAll are kept for wide
// networks that have registered fewer than reserveBelow in it: a flood
// from a few /16s or /40s (ten of them reach 2 000 at 200 each) stops at
// 1 500, and a network that has not registered still does. Spending the
// reserve too takes more than 25 wide networks of fewer than 20 each.
const (
	registerReserve = 500
	reserveBelow    = 20
)

// maxAllowFrom is the most networks a registration's allowfrom lists.
const maxAllowFrom = 20

// Registration is a registration as it is answered (Password only when it
// is made) and listed.
type Registration struct {
	Username, Password, Fulldomain, Subdomain string
	AllowFrom                                 []string
	Source                                    string // the network it was registered from
	CreatedAt, UsedAt                         int64  // Unix ms
}

// WithACMEDNS makes registrations for any domain under name (the
// Corefile's acme_dns_domain, lowercase, no trailing dot); "" offers none.
func (s *Certificates) WithACMEDNS(name string) *Certificates {
	s.acmeDNS = name
	return s
}

// Register makes a registration for a caller at from. allowFrom are the
// networks its updates may come from (CIDR; none: anywhere).
func (s *Certificates) Register(ctx context.Context, from netip.Addr, allowFrom []string) (*Registration, error) {
	if s.acmeDNS == "" {
		return nil, apierror.NotImplemented("this service does not register acme-dns accounts for any domain (no acme_dns_domain): " +
			"create a credential with POST /api/v1/hostnames/{id}/acme-credential and give your client its username, password and subdomain")
	}
	nets, err := ParseAllowFrom(allowFrom)
	if err != nil {
		return nil, err
	}
	password := apikey.Random(25)
	row, err := RegistrationRow(uuid4(), uuid4(), s.acmeDNS, apikey.Hash(password), nets, SourceNetwork(from), s.now().UnixMilli())
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, "acme-dns:"+row.ID, func(ctx context.Context, tx *storage.Tx) error {
		// Registrations are few: one at a time, so every count is exact.
		if err := tx.LockName(ctx, "acme-register"); err != nil {
			return err
		}
		if err := takeRegistration(ctx, tx, from, s.now()); err != nil {
			return err
		}
		return tx.InsertRegistration(ctx, row)
	})
	if err != nil {
		return nil, err
	}
	return &Registration{Username: row.ID, Password: password, Subdomain: row.Subdomain, Fulldomain: row.Name,
		AllowFrom: nets, Source: row.Source, CreatedAt: row.CreatedAt, UsedAt: row.UsedAt}, nil
}

// takeRegistration counts a registration from from against registerLimits
// and the reserve, or refuses it 429 with Retry-After. It runs under the
// registrations' lock: every count is read and taken one caller at a time.
func takeRegistration(ctx context.Context, tx *storage.Tx, from netip.Addr, now time.Time) error {
	keys := make([]string, len(registerLimits))
	counts, waits := map[string]int{}, map[string]time.Duration{}
	for i, l := range registerLimits {
		network := "everywhere"
		if l.v4 > 0 {
			network = prefixOf(from, l.v4, l.v6)
		}
		keys[i] = "network:" + network
		n, wait, err := ratelimit.Count(ctx, tx, keys[i], l.limit, now)
		if err != nil {
			return err
		}
		if n >= l.limit.Max {
			return ratelimit.Refuse(apierror.RateLimited("more than %d registrations an hour from %s; retry later", l.limit.Max, network), wait)
		}
		counts[l.limit.Kind], waits[l.limit.Kind] = n, wait
	}
	wide, all := registerWide.limit.Kind, registerAll.limit.Kind
	if counts[all] >= registerAll.limit.Max-registerReserve && counts[wide] >= reserveBelow {
		// Open again once either count falls: no sooner than the first
		// of their oldest leaves the window.
		return ratelimit.Refuse(apierror.RateLimited("%d registrations this hour from %s: the hour's last %d of %d are kept for networks that have made fewer than %d; retry later",
			counts[wide], prefixOf(from, registerWide.v4, registerWide.v6), registerReserve, registerAll.limit.Max, reserveBelow), min(waits[wide], waits[all]))
	}
	for i, l := range registerLimits {
		if err := ratelimit.Add(ctx, tx, keys[i], l.limit, now); err != nil {
			return err
		}
	}
	return nil
}

// RegistrationRow is a registration's row: username and subdomain, its
// name <subdomain>.<domain>, the password's hash, the networks updates may
// come from (as ParseAllowFrom gives them), where it was registered from,
// and when (Unix ms). The subdomain must be one label, so that the name
// is one below domain and nowhere else.
func RegistrationRow(username, subdomain, domain, hash string, allowFrom []string, source string, now int64) (*storage.Registration, error) {
	subdomain = strings.ToLower(subdomain)
	if err := labels.Syntax(subdomain); err != nil {
		return nil, apierror.BadRequest("subdomain %q: %v", subdomain, err)
	}
	if username == "" || len(username) > 64 || strings.ContainsFunc(username, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return nil, apierror.BadRequest("username %q is not 1-64 printable ASCII characters", username)
	}
	return &storage.Registration{ID: username, Subdomain: subdomain, Name: subdomain + "." + domain, PasswordHash: hash,
		AllowFrom: strings.Join(allowFrom, ","), Source: source, UsedAt: now, CreatedAt: now}, nil
}

// ParseAllowFrom checks allowfrom as acme-dns does (each a CIDR prefix,
// IPv6 in brackets or not), keeping each as the network it names.
func ParseAllowFrom(in []string) ([]string, error) {
	if len(in) > maxAllowFrom {
		return nil, apierror.BadRequest("allowfrom lists %d networks; at most %d", len(in), maxAllowFrom)
	}
	out := make([]string, 0, len(in))
	for _, v := range in {
		p, err := netip.ParsePrefix(strings.NewReplacer("[", "", "]", "").Replace(strings.TrimSpace(v)))
		if err != nil {
			return nil, apierror.BadRequest("allowfrom %q is not a network in CIDR notation (192.0.2.0/24, 2001:db8::/48, 192.0.2.7/32)", v)
		}
		out = append(out, p.Masked().String())
	}
	return out, nil
}

// SourceNetwork is the network registrations from addr are counted by.
func SourceNetwork(addr netip.Addr) string { return prefixOf(addr, 24, 56) }

// prefixOf is the network of addr's first v4 (IPv4) or v6 (IPv6) bits;
// "unknown" for no address (garbage from a trusted proxy), whose callers
// share one count.
func prefixOf(addr netip.Addr, v4, v6 int) string {
	if !addr.IsValid() {
		return "unknown" // the zero Addr's Prefix is no error, but "invalid Prefix"
	}
	addr = addr.Unmap()
	bits := v6
	if addr.Is4() {
		bits = v4
	}
	p, err := addr.Prefix(bits)
	if err != nil {
		return "unknown"
	}
	return p.String()
}

// allowed reports whether from is in the registration's allowfrom.
func allowed(allowFrom string, from netip.Addr) bool {
	if allowFrom == "" {
		return true
	}
	for _, n := range strings.Split(allowFrom, ",") {
		if p, err := netip.ParsePrefix(n); err == nil && from.IsValid() && p.Contains(from.Unmap()) {
			return true
		}
	}
	return false
}

// importedPassword stops an update whose registration still holds an
// imported acme-dns password, to be checked outside the transaction: the
// hash as the transaction read it.
type importedPassword struct{ id, hash string }

func (*importedPassword) Error() string { return "hostnames: an imported password to check" }

// publishRegistered is PublishChallenge for a registration's credential,
// inside its transaction. An imported acme-dns password (a bcrypt hash) is
// checked, and replaced, outside it (upgradeImported): the first time one
// is met the transaction ends with importedPassword; met again after that
// (upgraded), it did not match.
func (s *Certificates) publishRegistered(ctx context.Context, tx *storage.Tx, u ChallengeUpdate, upgraded bool) error {
	// Locked: the registration's updates are counted one at a time.
	r, err := tx.LockRegistration(ctx, u.User)
	if errors.Is(err, storage.ErrNotFound) {
		return errBadCredentials()
	}
	if err != nil {
		return err
	}
	storage.AuditObject(ctx, "acme-registration:"+r.ID)
	// Where the caller is comes before the password: from elsewhere, a
	// password is never checked (nor, imported, costs its bcrypt). The
	// answer does not say which networks are allowed: the caller has not
	// shown the password yet.
	if !allowed(r.AllowFrom, u.From) {
		return apierror.Forbidden("this registration takes no updates from %s (its allowfrom)", u.From)
	}
	if imported(r.PasswordHash) && !upgraded {
		return &importedPassword{id: r.ID, hash: r.PasswordHash}
	}
	if imported(r.PasswordHash) || !apikey.Verify(r.PasswordHash, u.Key) {
		return errBadCredentials()
	}
	if s.acmeDNS == "" || !strings.HasSuffix(r.Name, "."+s.acmeDNS) {
		return apierror.Forbidden("registration %s is for %s, which is not below this service's acme_dns_domain (%s): it is not served",
			r.ID, r.Name, cmp.Or(s.acmeDNS, "none"))
	}
	if u.Subdomain == "" {
		return apierror.BadRequest("subdomain is required: the registration's subdomain (%s)", r.Subdomain)
	}
	if !strings.EqualFold(u.Subdomain, r.Subdomain) {
		return apierror.Forbidden("subdomain %q does not belong to this credential (use %s)", u.Subdomain, r.Subdomain)
	}
	if err := checkChallenge(u.TXT); err != nil {
		return err
	}
	if err := s.takeACMEUpdate(ctx, tx, "credential:"+r.ID); err != nil {
		return err
	}
	if err := tx.PublishRegistration(ctx, r.ID, u.TXT, s.now().UnixMilli()); err != nil {
		return err
	}
	return tx.Changed(ctx, storage.KindRegistration, r.ID)
}

// imported reports whether hash is an imported acme-dns password's.
func imported(hash string) bool { return strings.HasPrefix(hash, "$2") }

// upgradeImported checks an update's password against an imported
// registration's acme-dns hash (bcrypt, bcrypt.go) outside any
// transaction, so no lock is held meanwhile, and on a match replaces it
// with Hostmint's own in a write of its own, if the hash is still the one
// read: the check is made once, whatever becomes of the update. Only a
// caller from the registration's allowfrom (checked before
// importedPassword) gets that far. A mismatch is refused here: the
// registration has no other password to match.
func (s *Certificates) upgradeImported(ctx context.Context, imp *importedPassword, key string) error {
	ok, err := s.bcrypts.compare(ctx, imp.hash, key)
	if err != nil {
		return err
	}
	if !ok {
		return errBadCredentials()
	}
	err = s.write(ctx, "acme-dns:"+imp.id, func(ctx context.Context, tx *storage.Tx) error {
		return tx.SetRegistrationPassword(ctx, imp.id, imp.hash, apikey.Hash(key))
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil // replaced, or deleted, meanwhile: the update says which
	}
	return err
}

// Registrations lists up to limit registrations after the username after
// ("": from the first), for the operator.
func (s *Certificates) Registrations(ctx context.Context, after string, limit int) ([]Registration, error) {
	rs, err := s.store.Reader().Registrations(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Registration, len(rs))
	for i, r := range rs {
		out[i] = Registration{Username: r.ID, Subdomain: r.Subdomain, Fulldomain: r.Name, AllowFrom: splitList(r.AllowFrom),
			Source: r.Source, CreatedAt: r.CreatedAt, UsedAt: r.UsedAt}
	}
	return out, nil
}

// DeleteRegistration removes a registration; its values stop being served.
func (s *Certificates) DeleteRegistration(ctx context.Context, username string) error {
	return s.write(ctx, "acme-dns:"+username, func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.DeleteRegistration(ctx, username); errors.Is(err, storage.ErrNotFound) {
			return apierror.NotFound("no acme-dns registration %s", username)
		} else if err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindRegistration, username)
	})
}

func splitList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}
