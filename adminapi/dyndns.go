package adminapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/addrclass"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/hostnames"
)

// dyndns2 return codes. Routers and ddclient read these words, not HTTP
// statuses: every answer but badauth is 200, one line per hostname.
const (
	dynGood     = "good"
	dynNochg    = "nochg"
	dynBadauth  = "badauth"
	dynNohost   = "nohost"
	dynNotFQDN  = "notfqdn"
	dynNumhost  = "numhost"
	dynBadagent = "badagent"
	dynAbuse    = "abuse"
	dynDNSErr   = "dnserr"
	dynDonator  = "!donator"
	dyn911      = "911"
)

// maxDynHosts is the most hostnames one dyndns2 request may name, as the
// protocol's reference service allows.
const maxDynHosts = 20

// dynUpdate answers GET /nic/update: the dyndns2 protocol that routers,
// ddclient and inadyn speak, over the same rules as PUT /api/v1/hostnames/{id}.
func (s *Server) dynUpdate(w http.ResponseWriter, r *http.Request) {
	// The password is an API key; the username is whatever the client's
	// form insisted on (often the hostname) and means nothing here.
	_, key, ok := r.BasicAuth()
	if !ok || len(r.Header.Values("Authorization")) != 1 {
		dynUnauthorized(w)
		return
	}
	p, err := s.auth.Authenticate(r.Context(), key)
	if err != nil {
		if pe, ok := apierror.As(err); ok && (pe.Code == apierror.CodeUnauthorized || pe.Code == apierror.CodeKeyExpired) {
			dynUnauthorized(w)
			return
		} else if ok && pe.Code == apierror.CodeForbidden {
			// The key's team is suspended or its plan ended: the protocol's
			// "blocked", on which clients stop retrying.
			noteRefusal(w, pe.Code, dynAbuse+": "+pe.Message)
			writeText(w, http.StatusOK, dynAbuse)
			return
		}
		s.log.Warn("dyndns2: authenticating failed", "err", err)
		noteRefusal(w, apierror.CodeUnavailable, dyn911)
		writeText(w, http.StatusOK, dyn911)
		return
	}
	r = s.audit(w, r, "key:"+p.KeyID, p.AccountID, "")
	q := r.URL.Query()
	var names []string
	if v := q.Get("hostname"); v != "" {
		names = strings.Split(v, ",")
	}
	switch {
	case len(names) == 0:
		noteRefusal(w, apierror.CodeBadRequest, dynNotFQDN)
		writeText(w, http.StatusOK, dynNotFQDN)
		return
	case len(names) > maxDynHosts:
		noteRefusal(w, apierror.CodeBadRequest, dynNumhost)
		writeText(w, http.StatusOK, dynNumhost)
		return
	}
	addrs, ok := s.dynFamilies(r)
	if !ok {
		noteRefusal(w, apierror.CodeBadRequest, dynBadagent)
		writeText(w, http.StatusOK, dynBadagent)
		return
	}
	lines := make([]string, len(names))
	for i, name := range names {
		var code string
		lines[i], code = s.dynOne(r.Context(), p, strings.TrimSpace(name), addrs)
		if code != "" {
			noteRefusal(w, code, lines[i]) // the first refusal, for the audit log and metrics
		}
	}
	writeText(w, http.StatusOK, strings.Join(lines, "\n"))
}

// dynFamilies is what the request says of the addresses: the first IPv4
// and the first IPv6 of myip and myipv6, or in myipv6 an IPv6 prefix (a
// Fritz!Box's <ip6lanprefix>, "2001:db8:1:2::/64"), or the client's own
// address when none is sent. What a family left out means is the rule's
// (hostnames.SetFamilies). ok is false when a value is not an address.
func (s *Server) dynFamilies(r *http.Request) (f hostnames.Families, ok bool) {
	q := r.URL.Query()
	var given []string
	for _, field := range []string{"myip", "myipv6"} {
		if v := q.Get(field); v != "" {
			given = append(given, strings.Split(v, ",")...)
		}
	}
	if len(given) == 0 {
		a, ok := s.clientAddr(r)
		if !ok {
			return f, false
		}
		given = []string{a.String()}
	}
	for _, g := range given {
		g = strings.TrimSpace(g)
		if strings.Contains(g, "/") {
			p, err := netip.ParsePrefix(g)
			if err != nil || !p.Addr().Is6() {
				return f, false
			}
			if !f.V6Prefix.IsValid() {
				f.V6Prefix = p
			}
			continue
		}
		a, err := addrclass.Parse(g)
		if err != nil {
			return f, false
		}
		switch {
		case a.Is4() && !f.V4.IsValid():
			f.V4 = a
		case a.Is6() && !f.V6.IsValid():
			f.V6 = a
		}
	}
	return f, true
}

// dynOne updates one hostname and answers its line.
func (s *Server) dynOne(ctx context.Context, p *access.Principal, name string, addrs hostnames.Families) (line, code string) {
	h, err := s.hostnames.FindWritable(ctx, p, name)
	if err == nil {
		var changed bool
		if h, changed, err = s.hostnames.SetFamilies(ctx, p, h.ID, addrs); err == nil {
			word := dynNochg
			if changed {
				word = dynGood
			}
			return word + " " + h.Addrs, ""
		}
	}
	if errors.Is(err, hostnames.ErrNotName) {
		return dynNotFQDN, apierror.CodeBadRequest
	}
	pe, ok := apierror.As(err)
	if !ok {
		s.log.Warn("dyndns2: update failed", "hostname", name, "err", err)
		return dyn911, apierror.CodeUnavailable
	}
	// The one place a rule's refusal becomes a dyndns2 return word.
	switch pe.Code {
	case apierror.CodeNotFound:
		return dynNohost, pe.Code
	case apierror.CodeRateLimited:
		return dynAbuse, pe.Code
	case apierror.CodeConflict:
		// The address class is fixed for life; or the hostname was released
		// or terminated since it was found, which the protocol calls nohost.
		if _, err := s.hostnames.FindWritable(ctx, p, name); err != nil {
			if fe, ok := apierror.As(err); ok && fe.Code == apierror.CodeNotFound {
				return dynNohost, fe.Code
			}
		}
		return dynDNSErr, pe.Code
	case apierror.CodeForbidden:
		if s.cfg.Profile.PlanGates() {
			return dynDonator, pe.Code // the plan gate on private addresses
		}
		return dynAbuse, pe.Code // suspended while an abuse report is reviewed
	case apierror.CodeBadRequest:
		return dynBadagent, pe.Code
	}
	s.log.Warn("dyndns2: update failed", "hostname", name, "err", err)
	return dyn911, pe.Code
}

func dynUnauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="hostmint"`)
	writeText(w, http.StatusUnauthorized, dynBadauth)
}

// myIP answers GET /api/v1/myip: the caller's address as the dyndns2 route
// would take it, for clients that ask before they update.
func (s *Server) myIP(w http.ResponseWriter, r *http.Request) {
	a, ok := s.clientAddr(r)
	if !ok {
		writeText(w, http.StatusBadRequest, "the client address is unknown")
		return
	}
	writeText(w, http.StatusOK, a.String())
}

// ClientAddr is the address r came from, as clientAddr takes it; "" if unknown.
func (s *Server) ClientAddr(r *http.Request) string {
	if a, ok := s.clientAddr(r); ok {
		return a.String()
	}
	return ""
}

// clientAddr is the address the request came from: the TCP peer, unless the
// peer is a trusted proxy; then the right-most X-Forwarded-For entry that is
// not itself a trusted proxy (with or without a port: hopAddr). Entries left
// of it were written by the client or by proxies we do not know, so they may
// be forged.
func (s *Server) clientAddr(r *http.Request) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := addrclass.Parse(host)
	if err != nil {
		return netip.Addr{}, false
	}
	if !s.trusted(peer) {
		return peer, true
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := hopAddr(hops[i])
		if err != nil {
			return netip.Addr{}, false // garbage from a proxy we trust
		}
		if !s.trusted(a) {
			return a, true
		}
	}
	// Only trusted proxies all the way: the left-most is as close to the
	// client as we can see.
	if len(hops) > 0 {
		a, _ := hopAddr(hops[0])
		return a, true
	}
	return peer, true
}

// OverTLS reports whether the request reached the service over TLS: on a
// TLS connection of its own, or through a trusted proxy whose
// X-Forwarded-Proto (the right-most value, the one that proxy wrote) is
// https. A client that is not a trusted proxy cannot claim it.
func (s *Server) OverTLS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := addrclass.Parse(host)
	if err != nil || !s.trusted(peer) {
		return false
	}
	var protos []string
	for _, v := range r.Header.Values("X-Forwarded-Proto") {
		protos = append(protos, strings.Split(v, ",")...)
	}
	return len(protos) > 0 && strings.EqualFold(strings.TrimSpace(protos[len(protos)-1]), "https")
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// writeText answers one or more lines of plain text.
func writeText(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write([]byte(body + "\n"))
}
