package e2e

import (
	"bytes"
	"context"
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
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-acme/lego/v4/certcrypto"
	"github.com/go-acme/lego/v4/certificate"
	"github.com/go-acme/lego/v4/challenge"
	"github.com/go-acme/lego/v4/challenge/dns01"
	"github.com/go-acme/lego/v4/lego"
	"github.com/go-acme/lego/v4/providers/dns/acmedns"
	"github.com/go-acme/lego/v4/registration"
	"github.com/miekg/dns"
)

// DNS-01 through the acme-dns API with the clients users run: lego as a
// library (its acme-dns provider on a pre-filled storage file), certbot with a
// manual auth hook, and the lego CLI with its exec provider. Each one obtains a
// certificate for a hostname and its wildcard in one order from Pebble (the
// Debian binary), which validates against this server's DNS. Nothing leaves
// 127.0.0.1: Pebble and the clients are given our DNS address as resolver.
//
// Helpers here are prefixed dns01 so that they do not collide with those of
// other files of the package.

// dns01Pebble is one running Pebble.
type dns01Pebble struct {
	dir    string       // directory URL
	mgmt   string       // management base URL
	rootCA string       // PEM file of the CA that signed Pebble's TLS certificate
	client *http.Client // trusts rootCA
}

// dns01Output collects a subprocess's output for failure messages.
type dns01Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *dns01Output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(b)
}

func (o *dns01Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// dns01TLS writes a CA and a server certificate for 127.0.0.1, ::1 and
// localhost signed by it; it returns the files of the CA, the server chain
// and the server key.
func dns01TLS(t *testing.T, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hostmint e2e test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, blocks ...*pem.Block) string {
		var b bytes.Buffer
		for _, bl := range blocks {
			pem.Encode(&b, bl)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	caFile = write("ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	certFile = write("cert.pem", &pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyFile = write("key.pem", &pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return caFile, certFile, keyFile
}

// dns01StartPebble runs /usr/bin/pebble validating DNS-01 against dnsAddr
// and waits until its directory answers; it is killed at cleanup.
func dns01StartPebble(t *testing.T, dnsAddr string) *dns01Pebble {
	t.Helper()
	bin, err := exec.LookPath("pebble")
	if err != nil {
		t.Fatalf("pebble is not installed (run ./scripts/test-deps.sh): %v", err)
	}
	dir := t.TempDir()
	caFile, certFile, keyFile := dns01TLS(t, dir)
	port, mgmtPort := freePort(t), freePort(t)
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress":                  fmt.Sprintf("127.0.0.1:%d", port),
		"managementListenAddress":        fmt.Sprintf("127.0.0.1:%d", mgmtPort),
		"certificate":                    certFile,
		"privateKey":                     keyFile,
		"httpPort":                       freePort(t), // HTTP-01 and TLS-ALPN-01 are not used
		"tlsPort":                        freePort(t),
		"ocspResponderURL":               "",
		"externalAccountBindingRequired": false,
	}}
	j, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "pebble-config.json")
	if err := os.WriteFile(cfgFile, j, 0o600); err != nil {
		t.Fatal(err)
	}

	out := new(dns01Output)
	cmd := exec.Command(bin, "-config", cfgFile, "-dnsserver", dnsAddr)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PEBBLE_VA_NOSLEEP=1",      // no random delay before validating
		"PEBBLE_WFE_NONCEREJECT=0", // no rejected nonces
		"PEBBLE_AUTHZREUSE=0",      // every order gets fresh authorizations
	)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("pebble output:\n%s", out)
		}
	})

	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	p := &dns01Pebble{
		dir:    fmt.Sprintf("https://127.0.0.1:%d/dir", port),
		mgmt:   fmt.Sprintf("https://127.0.0.1:%d", mgmtPort),
		rootCA: caFile,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool}, Proxy: nil}},
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := p.client.Get(p.dir)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if cmd.ProcessState != nil || time.Now().After(deadline) {
			t.Fatalf("pebble directory %s never answered 200 (last error %v); output:\n%s", p.dir, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// get reads a management endpoint.
func (p *dns01Pebble) get(t *testing.T, path string) []byte {
	t.Helper()
	resp, err := p.client.Get(p.mgmt + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("pebble GET %s: %d %v: %s", path, resp.StatusCode, err, b)
	}
	return b
}

// dns01Cred is an acme-dns registration as the service hands it out.
type dns01Cred struct {
	Username   string   `json:"username"`
	Password   string   `json:"password"`
	Fulldomain string   `json:"fulldomain"`
	Subdomain  string   `json:"subdomain"`
	ServerURL  string   `json:"server_url"`
	AllowFrom  []string `json:"allowfrom"`
}

// dns01Credential makes a credential for a hostname and checks its shape.
func (s *server) dns01Credential(t *testing.T, key, id, name string) dns01Cred {
	t.Helper()
	r := s.must(201, "POST", "/api/v1/hostnames/"+id+"/acme-credential", key, nil)
	var c dns01Cred
	if err := json.Unmarshal(r.raw, &c); err != nil {
		t.Fatal(err)
	}
	if c.Username == "" || c.Password == "" || c.Subdomain != c.Username ||
		c.Fulldomain != "_acme-challenge."+name || c.ServerURL != s.api+"/api/acme" {
		t.Fatalf("credential for %s: %s", name, r.raw)
	}
	return c
}

// dns01Env is the environment the hook scripts read the credential from.
func dns01Env(c dns01Cred) []string {
	return []string{
		"ACMEDNS_SERVER_URL=" + c.ServerURL,
		"ACMEDNS_USERNAME=" + c.Username,
		"ACMEDNS_PASSWORD=" + c.Password,
		"ACMEDNS_SUBDOMAIN=" + c.Subdomain,
	}
}

// dns01UpdateCommand is the curl call of the hook scripts; $1 is the value.
const dns01UpdateCommand = `curl -fsS --noproxy '*' -X POST \
  -H "X-Api-User: $ACMEDNS_USERNAME" -H "X-Api-Key: $ACMEDNS_PASSWORD" \
  -H 'Content-Type: application/json' \
  -d "{\"subdomain\": \"$ACMEDNS_SUBDOMAIN\", \"txt\": \"$1\"}" \
  "$ACMEDNS_SERVER_URL/update"`

// dns01Script writes an executable shell script.
func dns01Script(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\nset -eu\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// dns01Run runs a client with a time limit and returns its output.
func dns01Run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (run ./scripts/test-deps.sh): %v", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v after %s; output:\n%s", name, strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond), out)
	}
	t.Logf("%s took %s", name, time.Since(start).Round(time.Millisecond))
	return string(out)
}

// dns01Check checks an issued chain (leaf first): its names are exactly the
// hostname and its wildcard, and it chains to Pebble's root.
func dns01Check(t *testing.T, p *dns01Pebble, chain []byte, name string) {
	t.Helper()
	var certs []*x509.Certificate
	for rest := chain; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		t.Fatalf("no certificate in %q", chain)
	}
	leaf := certs[0]
	got := slices.Sorted(slices.Values(leaf.DNSNames))
	if want := []string{"*." + name, name}; !slices.Equal(got, want) {
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
	for _, host := range []string{name, "www." + name} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, Intermediates: inter}); err != nil {
			t.Fatalf("certificate does not verify for %s: %v", host, err)
		}
	}
}

// dns01Served checks that the challenge name serves the two values of the
// apex and the wildcard authorization.
func (s *server) dns01Served(t *testing.T, name string) {
	t.Helper()
	for _, proto := range []string{"udp", "tcp"} {
		m := s.query("_acme-challenge."+name, dns.TypeTXT, proto)
		var txt []string
		for _, rr := range m.Answer {
			if v, ok := rr.(*dns.TXT); ok {
				txt = append(txt, strings.Join(v.Txt, ""))
			}
		}
		if len(txt) != 2 || txt[0] == txt[1] {
			t.Fatalf("_acme-challenge.%s TXT over %s: %q, want the two values of the order", name, proto, txt)
		}
	}
}

// dns01Host mints a live hostname: on a team's domain in profile 2, on the
// service's domain in profile 1.
func (s *server) dns01Host(t *testing.T, profile int, sub string) (key, id, name string) {
	t.Helper()
	var body map[string]any
	if profile == 2 {
		_, key = s.team(t, sub+".example.net")
		body = map[string]any{"ip": "198.41.0.4", "subdomain": "box"}
	} else {
		_, key = s.account("pro")
		body = map[string]any{"ip": "198.41.0.4", "label": sub}
	}
	h := s.must(201, "POST", "/api/v1/hostnames", key, body)
	id, name = h.str("id"), h.str("hostname")
	s.live(t, key, id)
	return key, id, name
}

// dns01User is the ACME account of the library client.
type dns01User struct {
	key *ecdsa.PrivateKey
	reg *registration.Resource
}

func (u *dns01User) GetEmail() string                        { return "" }
func (u *dns01User) GetRegistration() *registration.Resource { return u.reg }
func (u *dns01User) GetPrivateKey() crypto.PrivateKey        { return u.key }

// lego as a library with its acme-dns provider. The provider's storage file
// is filled in beforehand, so it never calls /register (which answers 501
// here). lego v4.34.0 looks the account up by the authorization's identifier,
// which for *.name is name; the wildcard key is written too, as users do.
// [P2]
func TestDNS01LegoLibrary(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2})
	key, id, name := s.dns01Host(t, 2, "lego-lib")
	cred := s.dns01Credential(t, key, id, name)
	ca := dns01StartPebble(t, s.dnsAddr)

	dir := t.TempDir()
	account := map[string]string{
		"fulldomain": cred.Fulldomain, "subdomain": cred.Subdomain,
		"username": cred.Username, "password": cred.Password, "server_url": cred.ServerURL,
	}
	storage, err := json.Marshal(map[string]any{name: account, "*." + name: account})
	if err != nil {
		t.Fatal(err)
	}
	storagePath := filepath.Join(dir, "acme-dns.json")
	if err := os.WriteFile(storagePath, storage, 0o600); err != nil {
		t.Fatal(err)
	}
	provider, err := acmedns.NewDNSProviderConfig(&acmedns.Config{APIBase: cred.ServerURL, StoragePath: storagePath})
	if err != nil {
		t.Fatal(err)
	}

	// AddRecursiveNameservers and AddDNSTimeout set lego's process-wide
	// state; the other test of this package that runs lego in-process is
	// not parallel. The authoritative check would ask the NS names on port
	// 53; the recursive check asks our server, which is the authority.
	res := legoObtain(t, ca, provider, []string{name, "*." + name},
		dns01.AddRecursiveNameservers([]string{s.dnsAddr}),
		dns01.AddDNSTimeout(5*time.Second),
		dns01.DisableAuthoritativeNssPropagationRequirement(),
		dns01.RecursiveNSsPropagationRequirement(),
	)
	dns01Check(t, ca, res.Certificate, name)
	s.dns01Served(t, name)

	// The provider used the stored account and registered nothing.
	if after, err := os.ReadFile(storagePath); err != nil || !bytes.Equal(after, storage) {
		t.Fatalf("the storage file changed: %s (%v)", after, err)
	}
}

// legoObtain makes an ACME account at ca and obtains a certificate for
// domains with lego as a library, its DNS-01 challenges solved by provider
// with opts.
func legoObtain(t *testing.T, ca *dns01Pebble, provider challenge.Provider, domains []string, opts ...dns01.ChallengeOption) *certificate.Resource {
	t.Helper()
	accountKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	user := &dns01User{key: accountKey}
	cfg := lego.NewConfig(user)
	cfg.CADirURL = ca.dir
	cfg.HTTPClient = ca.client
	cfg.Certificate.KeyType = certcrypto.EC256
	client, err := lego.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if user.reg, err = client.Registration.Register(registration.RegisterOptions{TermsOfServiceAgreed: true}); err != nil {
		t.Fatal(err)
	}
	if err := client.Challenge.SetDNS01Provider(provider, opts...); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	res, err := client.Certificate.Obtain(certificate.ObtainRequest{Domains: domains, Bundle: true})
	if err != nil {
		t.Fatalf("obtain: %v", err)
	}
	t.Logf("lego obtained the certificate in %s", time.Since(begin).Round(time.Millisecond))
	return res
}

// certbot with a manual auth hook that calls the update API with curl. [P1]
func TestDNS01Certbot(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 1})
	key, id, name := s.dns01Host(t, 1, "certbot-box")
	cred := s.dns01Credential(t, key, id, name)
	ca := dns01StartPebble(t, s.dnsAddr)

	dir := t.TempDir()
	// certbot gives the hook CERTBOT_DOMAIN (the base name for the wildcard
	// too) and CERTBOT_VALIDATION (the value).
	hook := dns01Script(t, dir, "acme-dns-auth.sh", `set -- "$CERTBOT_VALIDATION"
`+dns01UpdateCommand)
	env := append(dns01Env(cred), "REQUESTS_CA_BUNDLE="+ca.rootCA)
	cfgDir := filepath.Join(dir, "config")
	dns01Run(t, env, "certbot", "certonly",
		"--server", ca.dir,
		"--config-dir", cfgDir, "--work-dir", filepath.Join(dir, "work"), "--logs-dir", filepath.Join(dir, "logs"),
		"--non-interactive", "--agree-tos", "--register-unsafely-without-email",
		"--manual", "--preferred-challenges", "dns", "--manual-auth-hook", hook,
		"-d", name, "-d", "*."+name)

	chain, err := os.ReadFile(filepath.Join(cfgDir, "live", name, "fullchain.pem"))
	if err != nil {
		t.Fatal(err)
	}
	dns01Check(t, ca, chain, name)
	s.dns01Served(t, name)
}

// The lego CLI (Debian 4.9.1, no acme-dns provider) with its exec provider:
// the script is called as `present <fqdn> <value>` and `cleanup <fqdn>
// <value>`. [P2]
func TestDNS01LegoCLI(t *testing.T) {
	t.Parallel()
	s := start(t, options{profile: 2})
	key, id, name := s.dns01Host(t, 2, "lego-cli")
	cred := s.dns01Credential(t, key, id, name)
	ca := dns01StartPebble(t, s.dnsAddr)

	dir := t.TempDir()
	script := dns01Script(t, dir, "acme-dns-exec.sh", `case "$1" in
present)
  set -- "$3"
  `+dns01UpdateCommand+`
  ;;
cleanup) ;; # acme-dns keeps the last two values; nothing to remove
esac`)
	env := append(dns01Env(cred),
		"EXEC_PATH="+script,
		"EXEC_POLLING_INTERVAL=1",
		"EXEC_PROPAGATION_TIMEOUT=20",
		"EXEC_SEQUENCE_INTERVAL=1",
		"LEGO_CA_CERTIFICATES="+ca.rootCA,
	)
	path := filepath.Join(dir, "lego")
	dns01Run(t, env, "lego",
		"--server", ca.dir, "--accept-tos", "--email", "x@example.org", "--path", path,
		"--dns", "exec", "--dns.resolvers", s.dnsAddr, "--dns.disable-cp",
		"-d", name, "-d", "*."+name, "run")

	chain, err := os.ReadFile(filepath.Join(path, "certificates", name+".crt"))
	if err != nil {
		t.Fatal(err)
	}
	dns01Check(t, ca, chain, name)
	s.dns01Served(t, name)
}
