package hostnames

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/storage"
	"golang.org/x/crypto/bcrypt"
)

// acme-dns registrations for any domain (acme-dns's own use): anyone may
// register a credential whose name, <uuid>.<acme_dns_domain>, they point
// _acme-challenge.<a name of theirs> at by CNAME. No account stands
// behind one, so what bounds them is the source network's rate, allowfrom,
// and the purge of those unused for RegistrationRetention.

// RegistrationRetention is how long a registration lives without an update.
const RegistrationRetention = 180 * 24 * time.Hour

// Registrations a source network may make an hour (an IPv4 /24, an IPv6
// /56, as response rate limiting counts clients): an ACME client registers
// once per name it certifies, so even a busy network needs few; past it, a
// loop or a scan is held to one every 3 minutes.
var registerLimit = ratelimit.Limit{Kind: "acme-register", Max: 20, Window: time.Hour, What: "registrations"}

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
	sub := uuid4()
	out := &Registration{Username: uuid4(), Password: apikey.Random(25), Subdomain: sub,
		Fulldomain: sub + "." + s.acmeDNS, AllowFrom: nets, Source: SourceNetwork(from)}
	err = s.write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		now := s.now()
		err := ratelimit.Take(ctx, tx, "network:"+out.Source, registerLimit, now)
		if p, ok := apierror.As(err); ok && p.Code == apierror.CodeRateLimited {
			p.Message = "more than 20 registrations an hour from this network (" + out.Source + "); retry later"
		}
		if err != nil {
			return err
		}
		out.CreatedAt, out.UsedAt = now.UnixMilli(), now.UnixMilli()
		return tx.InsertRegistration(ctx, &storage.Registration{ID: out.Username, Subdomain: sub, Name: out.Fulldomain,
			PasswordHash: apikey.Hash(out.Password), AllowFrom: strings.Join(nets, ","), Source: out.Source,
			UsedAt: out.CreatedAt, CreatedAt: out.CreatedAt})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
func SourceNetwork(addr netip.Addr) string {
	addr = addr.Unmap()
	bits := 56
	if addr.Is4() {
		bits = 24
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

// publishRegistered is PublishChallenge for a registration's credential.
func (s *Certificates) publishRegistered(ctx context.Context, tx *storage.Tx, u ChallengeUpdate) error {
	r, err := tx.Registration(ctx, u.User)
	if errors.Is(err, storage.ErrNotFound) {
		return apierror.New(apierror.CodeUnauthorized, "invalid credentials: X-Api-User or X-Api-Key is wrong")
	}
	if err != nil {
		return err
	}
	ok, imported := verifyRegistration(r.PasswordHash, u.Key)
	if !ok {
		return apierror.New(apierror.CodeUnauthorized, "invalid credentials: X-Api-User or X-Api-Key is wrong")
	}
	if imported {
		// Checked once at its cost; Hostmint's own hash from now on.
		if err := tx.SetRegistrationPassword(ctx, r.ID, apikey.Hash(u.Key)); err != nil {
			return err
		}
	}
	if !allowed(r.AllowFrom, u.From) {
		return apierror.Forbidden("this registration takes updates only from %s (its allowfrom)", strings.ReplaceAll(r.AllowFrom, ",", ", "))
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
	return s.write(ctx, func(ctx context.Context, tx *storage.Tx) error {
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

// verifyRegistration checks a registration's password against its hash:
// Hostmint's own, or (imported) acme-dns's bcrypt hash, which the caller
// replaces with Hostmint's once it has matched. Only a caller who knows
// the username, which is never published, reaches a bcrypt check.
func verifyRegistration(hash, password string) (ok, imported bool) {
	if strings.HasPrefix(hash, "$2") {
		return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil, true
	}
	return apikey.Verify(hash, password), false
}
