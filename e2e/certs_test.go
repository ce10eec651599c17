package e2e

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// Certificates the service runs itself ([P2] certificate csr and managed):
// the server is an ACME client of Pebble (the Debian binary, one process
// per CA) and answers DNS-01 from its own DNS, which Pebble asks. Each test
// starts its own Pebble(s) and server, on loopback only.
//
// Helpers here are prefixed cert so that they do not collide with those of
// other files of the package; Pebble itself is started by dns01StartPebble.

// certIssueWait bounds one issuance (first order, renewal, fallback).
const certIssueWait = 60 * time.Second

// certSetup starts a Pebble validating against a fresh DNS port and a
// profile-2 server on that port with an encryption key and Pebble as
// letsencrypt; extra lines are added to the Corefile. It returns the
// server, the Pebble, and a team key on certs.example.net.
func certSetup(t *testing.T, extra ...string) (*server, *dns01Pebble, string) {
	s, p, key, _ := certSetupTeam(t, extra...)
	return s, p, key
}

// certSetupTeam is certSetup that also gives the team's account id.
func certSetupTeam(t *testing.T, extra ...string) (s *server, p *dns01Pebble, key, account string) {
	t.Helper()
	port := freePort(t)
	p = dns01StartPebble(t, fmt.Sprintf("127.0.0.1:%d", port))
	lines := append([]string{certKeyFile(t), "acme_ca letsencrypt " + p.dir + " " + p.rootCA}, extra...)
	s = start(t, options{profile: 2, dnsPort: port, extra: lines})
	account, key = s.team(t, "certs.example.net")
	return s, p, key, account
}

// certMint mints a live hostname on certs.example.net with the given
// certificate mode and returns its id and name.
func (s *server) certMint(t *testing.T, key, mode string) (id, name string) {
	t.Helper()
	h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4", "certificate": mode})
	if h.str("certificate") != mode {
		t.Fatalf("minted hostname has certificate %q, want %q: %s", h.str("certificate"), mode, h.raw)
	}
	return h.str("id"), h.str("hostname")
}

// certPoll polls GET certificate every 100 ms until cond holds; it returns
// the last answer.
func (s *server) certPoll(t *testing.T, key, id string, d time.Duration, what string, cond func(r response) bool) response {
	t.Helper()
	deadline := time.Now().Add(d)
	var r response
	for {
		r = s.do("GET", "/api/v1/hostnames/"+id+"/certificate", key, nil)
		if cond(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("certificate of %s: %s not reached within %s; last answer %d: %s", id, what, d, r.status, r.raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// certIssued waits for a 200 issued answer whose leaf passes accept (nil:
// any) and returns it; while none is held the answer must be a JSON 409.
func (s *server) certIssued(t *testing.T, key, id string, accept func(leaf *x509.Certificate) bool) response {
	t.Helper()
	begin := time.Now()
	r := s.certPoll(t, key, id, certIssueWait, "status issued", func(r response) bool {
		switch r.status {
		case 200:
			if r.str("status") != "issued" {
				return false // a later order runs; the chain held is shown
			}
			return accept == nil || accept(certChain(t, r.str("certificate"))[0])
		case 409:
			if r.str("code") != "CONFLICT" {
				t.Fatalf("409 without a JSON CONFLICT body: %s", r.raw)
			}
			return false
		default:
			t.Fatalf("GET certificate: %d: %s", r.status, r.raw)
			return false
		}
	})
	t.Logf("certificate issued after %s", time.Since(begin).Round(time.Millisecond))
	return r
}

// certChain parses a PEM chain, leaf first.
func certChain(t *testing.T, text string) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for rest := []byte(text); ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			t.Fatalf("chain holds a %s block", b.Type)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatalf("no certificate in %q", text)
	}
	return out
}

// certVerify checks that chain's leaf names exactly names and that the
// chain verifies to p's root for each of them; it returns the leaf.
func certVerify(t *testing.T, p *dns01Pebble, chain string, names ...string) *x509.Certificate {
	t.Helper()
	certs := certChain(t, chain)
	leaf := certs[0]
	got := slices.Sorted(slices.Values(leaf.DNSNames))
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(got, want) {
		t.Fatalf("certificate names %v, want %v", got, want)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.get(t, "/roots/0")) {
		t.Fatal("pebble's root does not parse")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	for _, n := range names {
		host := strings.Replace(n, "*", "www", 1)
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, Intermediates: inter}); err != nil {
			t.Fatalf("certificate does not verify for %s: %v", host, err)
		}
	}
	return leaf
}

// certKeyMatches checks that keyPEM is the private key of leaf and
// returns it.
func certKeyMatches(t *testing.T, chain, keyPEM string, leaf *x509.Certificate) crypto.Signer {
	t.Helper()
	if _, err := tls.X509KeyPair([]byte(chain), []byte(keyPEM)); err != nil {
		t.Fatalf("chain and private_key do not pair: %v", err)
	}
	b, _ := pem.Decode([]byte(keyPEM))
	if b == nil {
		t.Fatalf("private_key is not PEM: %q", keyPEM)
	}
	var k any
	var err error
	switch b.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(b.Bytes)
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	default:
		t.Fatalf("private_key is a %s block", b.Type)
	}
	if err != nil {
		t.Fatal(err)
	}
	signer := k.(crypto.Signer)
	if !signer.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(leaf.PublicKey) {
		t.Fatal("private_key is not the key of the leaf")
	}
	return signer
}

// certStatus is Pebble's view of a certificate: "Valid" or "Revoked".
func certStatus(t *testing.T, p *dns01Pebble, leaf *x509.Certificate) string {
	t.Helper()
	var st struct{ Status string }
	if err := json.Unmarshal(p.get(t, "/cert-status-by-serial/"+leaf.SerialNumber.Text(16)), &st); err != nil {
		t.Fatal(err)
	}
	return st.Status
}

// certRequest makes a PEM CSR for names with crypto/x509.
func certRequest(t *testing.T, names ...string) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: names[0]}, DNSNames: names}, k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// certParallel runs TestCerts' subtests in parallel with one another.
// Off until certs serialises lego across Managers: every Manager calls
// dns01.AddRecursiveNameservers, which writes lego's package-level
// resolver list (certs/issue.go obtain; the lock there, Manager.issue, is
// per Manager), so two servers of one process ordering at once race on it
// (go test -race reports it in about two runs of three) and each may check
// propagation at the other's DNS. With a process-wide lock in certs the
// subtests pass in parallel under -race (on 2 CPUs about 40 s instead of
// 45 to 60 s).
const certParallel = true

// TestCerts is a sequential top-level test, so it never runs alongside the
// package's parallel tests: TestDNS01LegoLibrary runs lego in-process and
// shares the same process-wide lego settings; a server here would point that
// test's propagation check at its own, soon stopped, DNS. Run one subtest
// with -run 'TestCerts/Managed'.
func TestCerts(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Managed", certManaged},
		{"Renewal", certRenewal},
		{"CSR", certCSR},
		{"Fallback", certFallback},
		{"Revocation", certRevocation},
		{"ReleaseDuringOrder", certReleaseDuringOrder},
		{"KeyUnreadable", certKeyUnreadable},
	} {
		t.Run(c.name, func(t *testing.T) {
			if certParallel {
				t.Parallel()
			}
			c.run(t)
		})
	}
}

// The service runs a managed certificate: while the order runs GET answers
// 409 with the order's state, then 200 with a chain for exactly the
// hostname that verifies to the CA's root and the private key of its leaf;
// the CA is letsencrypt, on the certificate and on the hostname.
func certManaged(t *testing.T) {
	s, p, key, account := certSetupTeam(t)
	id, name := s.certMint(t, key, "managed")

	first := s.do("GET", "/api/v1/hostnames/"+id+"/certificate", key, nil)
	if first.status != 409 || first.str("code") != "CONFLICT" {
		t.Fatalf("GET certificate right after minting: %d: %s", first.status, first.raw)
	}
	state, _ := first.body["certificate"].(map[string]any)
	if st := state["status"]; st != "requested" && st != "issuing" {
		t.Fatalf("order state while none is held: %s", first.raw)
	}

	r := s.certIssued(t, key, id, nil)
	chain := r.str("certificate")
	leaf := certVerify(t, p, chain, name)
	certKeyMatches(t, chain, r.str("private_key"), leaf)
	// The private key goes only to a key that may write the hostname: a
	// read-only key, or one for DNS-01 alone, sees the chain and no key.
	for _, scope := range []string{"hostnames:read", "dns01:write"} {
		other := s.key(t, account, []map[string]any{{"scope": scope}})
		g := s.must(200, "GET", "/api/v1/hostnames/"+id+"/certificate", other, nil)
		if _, has := g.body["private_key"]; has || g.str("certificate") != chain {
			t.Errorf("GET certificate with %s only: %s; want the chain without private_key", scope, g.raw)
		}
	}
	if r.str("ca") != "letsencrypt" {
		t.Fatalf("certificate ca %q, want letsencrypt: %s", r.str("ca"), r.raw)
	}
	if exp, err := time.Parse(time.RFC3339, r.str("expires_at")); err != nil || exp.Sub(leaf.NotAfter).Abs() > time.Second {
		t.Fatalf("certificate expires_at %q, leaf notAfter %s (%v)", r.str("expires_at"), leaf.NotAfter, err)
	}
	h := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil)
	if h.str("ca") != "letsencrypt" || h.str("certificate") != "managed" {
		t.Fatalf("hostname after issuance: %s", h.raw)
	}
	if certStatus(t, p, leaf) != "Valid" {
		t.Fatalf("pebble does not hold the certificate as valid")
	} // The key the caller gets is stored sealed, never as it is handed out.
	dump := storeDump(t, storage.SQLite, s.dsn)
	if lines := strings.Split(r.str("private_key"), "\n"); strings.Contains(dump, "PRIVATE KEY") || strings.Contains(dump, lines[1]) {
		t.Fatalf("the store holds the certificate's private key in the clear")
	}
}

// Managed renewal: with cert_renew_at this small a Pebble certificate (5
// years) is due again a few seconds after issuance; the renewal brings a
// new certificate on a new key, from the same CA.
func certRenewal(t *testing.T) {
	s, p, key := certSetup(t, "cert_renew_at 0.00000002")
	id, name := s.certMint(t, key, "managed")

	r1 := s.certIssued(t, key, id, nil)
	leaf1 := certVerify(t, p, r1.str("certificate"), name)
	key1 := certKeyMatches(t, r1.str("certificate"), r1.str("private_key"), leaf1)

	// Renewals go on every few seconds from here: stop at the first.
	r2 := s.certIssued(t, key, id, func(leaf *x509.Certificate) bool {
		return leaf.SerialNumber.Cmp(leaf1.SerialNumber) != 0
	})
	leaf2 := certVerify(t, p, r2.str("certificate"), name)
	key2 := certKeyMatches(t, r2.str("certificate"), r2.str("private_key"), leaf2)
	if key2.Public().(*ecdsa.PublicKey).Equal(key1.Public()) {
		t.Fatal("the renewal reused the private key")
	}
	if r2.str("private_key") == r1.str("private_key") {
		t.Fatal("the renewal returned the old private key")
	}
	if r2.str("ca") != "letsencrypt" {
		t.Fatalf("renewal from %q, want letsencrypt", r2.str("ca"))
	}
	if leaf2.NotBefore.Before(leaf1.NotBefore) {
		t.Fatalf("renewal notBefore %s is before the first's %s", leaf2.NotBefore, leaf1.NotBefore)
	}
}

// csr mode: the caller posts a PKCS#10 request (made by crypto/x509 for the
// name and its wildcard, then by openssl for the name alone); the service
// orders, answers DNS-01 and stores the chain, never a key. Requests for
// other names, garbage, and the wrong certificate modes are refused.
func certCSR(t *testing.T) {
	s, p, key := certSetup(t)
	id, name := s.certMint(t, key, "csr")
	path := "/api/v1/hostnames/" + id + "/certificate"
	s.live(t, key, id)

	// Nothing posted yet: 409 with a JSON body.
	if r := s.must(409, "GET", path, key, nil); r.str("code") != "CONFLICT" {
		t.Fatalf("GET before any CSR: %s", r.raw)
	}

	// Refused requests.
	for what, csr := range map[string]string{
		"another name":          certRequest(t, "elsewhere.example.com"),
		"a sibling":             certRequest(t, "other.certs.example.net"),
		"name and another name": certRequest(t, name, "other."+name),
		"name and a foreign":    certRequest(t, name, "other.example.com"),
		"garbage":               "not a certificate request",
		"an empty csr":          "",
		"a certificate":         string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")})),
	} {
		if r := s.do("POST", path, key, map[string]any{"csr": csr}); r.status != 400 || r.str("code") != "BAD_REQUEST" {
			t.Errorf("CSR for %s: %d: %s", what, r.status, r.raw)
		}
	}
	if r := s.do("POST", path, key, "{not json"); r.status != 400 {
		t.Errorf("malformed body: %d: %s", r.status, r.raw)
	}

	// crypto/x509, name and wildcard.
	r := s.must(202, "POST", path, key, map[string]any{"csr": certRequest(t, name, "*."+name)})
	if r.str("status") != "requested" {
		t.Fatalf("202 answer: %s", r.raw)
	}
	if _, ok := r.body["private_key"]; ok {
		t.Fatalf("202 answer carries a private key: %s", r.raw)
	}
	r = s.certIssued(t, key, id, nil)
	if _, ok := r.body["private_key"]; ok {
		t.Fatalf("csr certificate answer carries a private key: %s", r.raw)
	}
	leaf1 := certVerify(t, p, r.str("certificate"), name, "*."+name)
	if r.str("ca") != "letsencrypt" {
		t.Fatalf("certificate ca %q: %s", r.str("ca"), r.raw)
	}
	h := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil)
	exp, err := time.Parse(time.RFC3339, h.str("expires_at"))
	if err != nil || exp.Sub(leaf1.NotAfter).Abs() > time.Second {
		t.Fatalf("hostname expires_at %q, leaf notAfter %s (%v): %s", h.str("expires_at"), leaf1.NotAfter, err, h.raw)
	}
	if h.str("ca") != "letsencrypt" {
		t.Fatalf("hostname ca: %s", h.raw)
	}

	// openssl req, the name alone: the next CSR renews.
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("openssl is not installed: run ./scripts/test-deps.sh")
	}
	dir := t.TempDir()
	out, err := exec.Command("openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
		"-keyout", filepath.Join(dir, "key.pem"), "-out", filepath.Join(dir, "req.pem"),
		"-subj", "/CN="+name, "-addext", "subjectAltName=DNS:"+name).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl req: %v: %s", err, out)
	}
	csr, err := os.ReadFile(filepath.Join(dir, "req.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.must(202, "POST", path, key, map[string]any{"csr": string(csr)}); r.str("status") != "requested" {
		t.Fatalf("202 answer: %s", r.raw)
	}
	r = s.certIssued(t, key, id, func(leaf *x509.Certificate) bool {
		return leaf.SerialNumber.Cmp(leaf1.SerialNumber) != 0
	})
	if _, ok := r.body["private_key"]; ok {
		t.Fatalf("csr certificate answer carries a private key: %s", r.raw)
	}
	leaf2 := certVerify(t, p, r.str("certificate"), name)
	certKeyMatches(t, r.str("certificate"), certRead(t, filepath.Join(dir, "key.pem")), leaf2)

	// Wrong modes.
	mid, mname := s.certMint(t, key, "managed")
	s.live(t, key, mid)
	if r := s.do("POST", "/api/v1/hostnames/"+mid+"/certificate", key, map[string]any{"csr": certRequest(t, mname)}); r.status != 409 {
		t.Errorf("CSR on a managed hostname: %d: %s", r.status, r.raw)
	}
	sid, sname := s.certMint(t, key, "self")
	s.live(t, key, sid)
	if r := s.do("POST", "/api/v1/hostnames/"+sid+"/certificate", key, map[string]any{"csr": certRequest(t, sname)}); r.status != 409 {
		t.Errorf("CSR on a self hostname: %d: %s", r.status, r.raw)
	}
	if r := s.do("GET", "/api/v1/hostnames/"+sid+"/certificate", key, nil); r.status != 404 || r.str("code") == "" {
		t.Errorf("GET certificate of a self hostname: %d: %s", r.status, r.raw)
	}
}

func certRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// certProxy is a TLS reverse proxy in front of a Pebble, standing in for a
// CA: intercept (if set) sees every request first and answers it itself by
// returning true. Pebble writes its URLs from the request's Host, which the
// proxy keeps, so every URL lego is given points at the proxy. Every chain
// Pebble hands out through it is recorded.
type certProxy struct {
	dir      string // directory URL
	root     string // PEM file of the proxy's TLS root
	newOrder string // path of the new-order URL

	mu     sync.Mutex
	chains []string
}

func certStartProxy(t *testing.T, p *dns01Pebble, intercept func(w http.ResponseWriter, r *http.Request) bool) *certProxy {
	t.Helper()
	resp, err := p.client.Get(p.dir)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		NewOrder string `json:"newOrder"`
	}
	err = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if err != nil || d.NewOrder == "" {
		t.Fatalf("pebble directory: %v %+v", err, d)
	}
	newOrder, err := url.Parse(d.NewOrder)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(p.dir)
	if err != nil {
		t.Fatal(err)
	}
	cp := &certProxy{newOrder: newOrder.Path}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.URL.Path, r.Out.URL.RawPath = r.In.URL.Path, r.In.URL.RawPath
			r.Out.Host = r.In.Host
		},
		Transport: p.client.Transport,
		ModifyResponse: func(resp *http.Response) error {
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/pem-certificate-chain") {
				return nil
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			cp.mu.Lock()
			cp.chains = append(cp.chains, string(b))
			cp.mu.Unlock()
			resp.Body = io.NopCloser(bytes.NewReader(b))
			return nil
		},
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if intercept != nil && intercept(w, r) {
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cp.root = filepath.Join(t.TempDir(), "proxy-root.pem")
	if err := os.WriteFile(cp.root, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cp.dir = srv.URL + target.Path
	return cp
}

// issued is the chains handed out so far.
func (cp *certProxy) issued() []string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return slices.Clone(cp.chains)
}

// certRateLimited is a proxy in front of p that answers every new-order
// POST with an ACME rateLimited problem; refused counts them.
func certRateLimited(t *testing.T, p *dns01Pebble) (cp *certProxy, refused *atomic.Int32) {
	t.Helper()
	refused = new(atomic.Int32)
	var newOrder atomic.Value
	cp = certStartProxy(t, p, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != "POST" || r.URL.Path != newOrder.Load() {
			return false
		}
		refused.Add(1)
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"type":"urn:ietf:params:acme:error:rateLimited","detail":"too many new orders for this domain","status":429}`)
		return true
	})
	newOrder.Store(cp.newOrder)
	return cp, refused
}

// Fallback: letsencrypt answers rateLimited for new orders, so the order
// goes to google, which issues; the hostname then reads ca google. The
// limit is remembered for the domain: the next hostname (csr this time)
// goes to google without asking letsencrypt.
func certFallback(t *testing.T) {
	port := freePort(t)
	dnsAddr := fmt.Sprintf("127.0.0.1:%d", port)
	le := dns01StartPebble(t, dnsAddr)
	google := dns01StartPebble(t, dnsAddr)
	limited, refused := certRateLimited(t, le)
	s := start(t, options{profile: 2, dnsPort: port, extra: []string{certKeyFile(t),
		"acme_ca letsencrypt " + limited.dir + " " + limited.root,
		"acme_ca google " + google.dir + " " + google.rootCA}})
	_, key := s.team(t, "certs.example.net")

	id, name := s.certMint(t, key, "managed")
	if h := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil); h.str("ca") != "letsencrypt" {
		t.Fatalf("hostname before issuance: %s", h.raw)
	}
	r := s.certIssued(t, key, id, nil)
	if r.str("ca") != "google" || r.str("error") != "" {
		t.Fatalf("certificate ca %q, want google: %s", r.str("ca"), r.raw)
	}
	t.Logf("letsencrypt refused %d new orders", refused.Load())
	leaf := certVerify(t, google, r.str("certificate"), name)
	certKeyMatches(t, r.str("certificate"), r.str("private_key"), leaf)
	if refused.Load() == 0 {
		t.Fatal("letsencrypt was never asked for an order")
	}
	if h := s.must(200, "GET", "/api/v1/hostnames/"+id, key, nil); h.str("ca") != "google" {
		t.Fatalf("hostname after fallback: %s", h.raw)
	}

	before := refused.Load()
	cid, cname := s.certMint(t, key, "csr")
	s.live(t, key, cid)
	s.must(202, "POST", "/api/v1/hostnames/"+cid+"/certificate", key, map[string]any{"csr": certRequest(t, cname)})
	r = s.certIssued(t, key, cid, nil)
	if r.str("ca") != "google" {
		t.Fatalf("csr certificate ca %q, want google: %s", r.str("ca"), r.raw)
	}
	certVerify(t, google, r.str("certificate"), cname)
	if n := refused.Load(); n != before {
		t.Fatalf("letsencrypt was asked again (%d new orders) although it rate-limits the domain", n-before)
	}
	if h := s.must(200, "GET", "/api/v1/hostnames/"+cid, key, nil); h.str("ca") != "google" {
		t.Fatalf("csr hostname after fallback: %s", h.raw)
	}
}

// Release revokes: the CA reports the certificate revoked within seconds,
// and the service no longer hands out its key. Termination (admin) revokes
// too.
func certRevocation(t *testing.T) {
	s, p, key := certSetup(t)
	id, name := s.certMint(t, key, "managed")
	tid, tname := s.certMint(t, key, "managed")
	leaf := certVerify(t, p, s.certIssued(t, key, id, nil).str("certificate"), name)
	tleaf := certVerify(t, p, s.certIssued(t, key, tid, nil).str("certificate"), tname)
	for _, l := range []*x509.Certificate{leaf, tleaf} {
		if st := certStatus(t, p, l); st != "Valid" {
			t.Fatalf("pebble status before release: %q", st)
		}
	}

	s.must(200, "DELETE", "/api/v1/hostnames/"+id, key, nil)
	s.must(200, "POST", "/api/admin/hostnames/"+tid+"/terminate", s.admin, nil)
	begin := time.Now()
	for what, l := range map[string]*x509.Certificate{"released": leaf, "terminated": tleaf} {
		eventually(t, 15*time.Second, func() bool {
			time.Sleep(100 * time.Millisecond)
			return certStatus(t, p, l) == "Revoked"
		}, "pebble never reported the %s hostname's serial %s revoked", what, l.SerialNumber.Text(16))
		t.Logf("%s: revoked %s after release", what, time.Since(begin).Round(time.Millisecond))
	}

	after := s.do("GET", "/api/v1/hostnames/"+id+"/certificate", key, nil)
	certNoKeyAfterRelease(t, after)
	t.Logf("GET certificate after release: %d status %q", after.status, after.str("status"))
}

// certNoKeyAfterRelease checks a GET certificate answer of a released
// hostname: never the key; a 200 says revoking or revoked.
func certNoKeyAfterRelease(t *testing.T, r response) {
	t.Helper()
	if strings.Contains(string(r.raw), "PRIVATE KEY") || r.str("private_key") != "" {
		t.Fatalf("GET certificate after release hands out the key: %d: %s", r.status, r.raw)
	}
	switch r.status {
	case 200:
		if st := r.str("status"); st != "revoking" && st != "revoked" {
			t.Fatalf("GET certificate after release: status %q: %s", st, r.raw)
		}
	case 404, 409, 410:
	default:
		t.Fatalf("GET certificate after release: %d: %s", r.status, r.raw)
	}
}

// A hostname released while its order runs: the CA's finalize call is held
// until the release is done, so the chain arrives for a released hostname.
// It must be revoked at the CA too, and its key never handed out.
func certReleaseDuringOrder(t *testing.T) {
	port := freePort(t)
	p := dns01StartPebble(t, fmt.Sprintf("127.0.0.1:%d", port))
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cp := certStartProxy(t, p, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == "POST" && strings.Contains(r.URL.Path, "finalize") {
			once.Do(func() { close(arrived) })
			select {
			case <-release:
			case <-time.After(20 * time.Second):
			}
		}
		return false
	})
	s := start(t, options{profile: 2, dnsPort: port, extra: []string{certKeyFile(t), "acme_ca letsencrypt " + cp.dir + " " + cp.root}})
	_, key := s.team(t, "certs.example.net")
	id, name := s.certMint(t, key, "managed")

	select {
	case <-arrived:
	case <-time.After(certIssueWait):
		t.Fatal("the order never reached finalize")
	}
	s.must(200, "DELETE", "/api/v1/hostnames/"+id, key, nil)
	close(release)

	var chains []string
	eventually(t, 30*time.Second, func() bool {
		chains = cp.issued()
		return len(chains) > 0
	}, "the CA never handed out the chain")
	leaf := certVerify(t, p, chains[0], name)
	eventually(t, 15*time.Second, func() bool {
		time.Sleep(100 * time.Millisecond)
		return certStatus(t, p, leaf) == "Revoked"
	}, "the chain issued after release (serial %s) was never revoked", leaf.SerialNumber.Text(16))
	r := s.do("GET", "/api/v1/hostnames/"+id+"/certificate", key, nil)
	certNoKeyAfterRelease(t, r)
	t.Logf("GET certificate after release: %d status %q", r.status, r.str("status"))
	if n := len(cp.issued()); n != 1 {
		t.Fatalf("%d chains issued for a released hostname", n)
	}
}

// A stored private key is sealed with the encryption key: a server
// restarted on the same database with another key cannot open it and
// answers 500, never the key; with the right key again it is served.
func certKeyUnreadable(t *testing.T) {
	port := freePort(t)
	p := dns01StartPebble(t, fmt.Sprintf("127.0.0.1:%d", port))
	ca := "acme_ca letsencrypt " + p.dir + " " + p.rootCA
	right := certKeyFile(t)
	s := start(t, options{profile: 2, dnsPort: port, extra: []string{right, ca}})
	_, key := s.team(t, "certs.example.net")
	id, _ := s.certMint(t, key, "managed")
	r := s.certIssued(t, key, id, nil)
	priv := r.str("private_key")
	if priv == "" {
		t.Fatalf("no private key: %s", r.raw)
	}
	s.stop()

	wrong := start(t, options{profile: 2, dir: s.dir, dsn: s.dsn, extra: []string{certKeyFile(t), ca}})
	got := wrong.do("GET", "/api/v1/hostnames/"+id+"/certificate", key, nil)
	if got.status != 500 || got.str("code") != "INTERNAL_ERROR" {
		t.Errorf("GET certificate with another encryption key: %d: %s", got.status, got.raw)
	}
	if strings.Contains(string(got.raw), "PRIVATE KEY") {
		t.Fatalf("the key is served without the encryption key: %s", got.raw)
	}
	wrong.stop()

	again := start(t, options{profile: 2, dir: s.dir, dsn: s.dsn, extra: []string{right, ca}})
	back := again.must(200, "GET", "/api/v1/hostnames/"+id+"/certificate", key, nil)
	if back.str("private_key") != priv {
		t.Fatalf("with the right key again the stored key is not served: %s", back.raw)
	}
}
