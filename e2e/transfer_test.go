package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// Zone transfers to real secondaries on loopback: Knot DNS, BIND and NSD load
// the zone by AXFR and follow every change the API makes, NOTIFYed by the
// service, with transfers required to carry the TSIG key.

const (
	xfrKeyName = "xfr.key."
	xfrSecret  = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="
)

// secondary is a running secondary nameserver.
type secondary struct {
	name string
	addr string // 127.0.0.1:port
	log  string // its log file
}

// startSecondary runs kind ("knot", "bind" or "nsd") as a secondary of example.org
// whose primary answers at primary, on port.
func startSecondary(t *testing.T, kind string, port int, primary string) *secondary {
	t.Helper()
	dir := t.TempDir()
	host, pport, _ := net.SplitHostPort(primary)
	var (
		conf string
		cmd  *exec.Cmd
	)
	switch kind {
	case "knot":
		return startKnot(t, dir, port, knotConf(port, dir, host, pport, `zone:
  - domain: example.org
    master: primary
    acl: notify
`))
	case "bind":
		return startBind(t, dir, port, bindConf(port, dir, host, pport, "", fmt.Sprintf(`zone "example.org" {
    type secondary;
    primaries port %[2]s { %[1]s key "xfr.key"; };
    file "%[3]s/example.org.db";
};
`, host, pport, dir)))
	case "nsd":
		if _, err := exec.LookPath("nsd"); err != nil {
			t.Fatal("nsd is not installed: run scripts/test-deps.sh")
		}
		conf = fmt.Sprintf(`server:
    ip-address: 127.0.0.1@%[2]d
    zonesdir: "%[1]s"
    pidfile: "%[1]s/nsd.pid"
    xfrdfile: "%[1]s/xfrd.state"
    zonelistfile: "%[1]s/zone.list"
    database: ""
    username: ""
    verbosity: 2
remote-control:
    control-enable: no
key:
    name: "xfr.key"
    algorithm: hmac-sha256
    secret: "%[4]s"
zone:
    name: example.org
    zonefile: "%[1]s/example.org.zone"
    allow-notify: %[3]s NOKEY
    request-xfr: %[3]s@%[5]s xfr.key
`, dir, port, host, xfrSecret, pport)
		os.WriteFile(filepath.Join(dir, "nsd.conf"), []byte(conf), 0o600)
		cmd = exec.Command("nsd", "-d", "-c", filepath.Join(dir, "nsd.conf"))
	}
	return runSecondary(t, kind, dir, port, cmd)
}

// knotConf is a Knot configuration listening on port, with its files in
// dir, the test key and the primary at host@pport (remote "primary",
// acl "notify"), and zones (the zone and template sections).
func knotConf(port int, dir, host, pport, zones string) string {
	conf := fmt.Sprintf(`server:
    listen: 127.0.0.1@%d
    rundir: %[2]s
log:
  - target: stderr
    any: info
key:
  - id: xfr.key
    algorithm: hmac-sha256
    secret: %[3]s
remote:
  - id: primary
    address: %[4]s@%[5]s
    key: xfr.key
acl:
  - id: notify
    address: %[4]s
    action: notify
template:
  - id: default
    storage: %[2]s
`, port, dir, xfrSecret, host, pport) + zones
	if os.Geteuid() == 0 {
		conf = strings.Replace(conf, "server:\n", "server:\n    user: root:root\n", 1)
	}
	return conf
}

// bindConf is a BIND configuration likewise: options (with more in
// options), the test key, and zones.
func bindConf(port int, dir, host, pport, options, zones string) string {
	return fmt.Sprintf(`options {
    directory "%[1]s";
    pid-file "%[1]s/named.pid";
    session-keyfile "%[1]s/session.key";
    managed-keys-directory "%[1]s";
    listen-on port %[2]d { 127.0.0.1; };
    listen-on-v6 { none; };
    recursion no;
    allow-notify { %[3]s; };
    notify no;
%[5]s};
controls { };
key "xfr.key" { algorithm hmac-sha256; secret "%[4]s"; };
`, dir, port, host, xfrSecret, options) + zones
}

// startKnot runs knotd on conf (written to dir), listening on port.
func startKnot(t *testing.T, dir string, port int, conf string) *secondary {
	t.Helper()
	if _, err := exec.LookPath("knotd"); err != nil {
		t.Fatal("knotd is not installed: run scripts/test-deps.sh")
	}
	os.WriteFile(filepath.Join(dir, "knot.conf"), []byte(conf), 0o600)
	return runSecondary(t, "knot", dir, port, exec.Command("knotd", "-c", filepath.Join(dir, "knot.conf")))
}

// startBind runs named on conf (written to dir), listening on port.
func startBind(t *testing.T, dir string, port int, conf string) *secondary {
	t.Helper()
	if _, err := exec.LookPath("named"); err != nil {
		t.Fatal("named is not installed: run scripts/test-deps.sh")
	}
	os.WriteFile(filepath.Join(dir, "named.conf"), []byte(conf), 0o600)
	cmd := exec.Command("named", "-g", "-c", filepath.Join(dir, "named.conf"))
	if os.Geteuid() == 0 {
		cmd.Args = append(cmd.Args, "-u", "root")
	}
	return runSecondary(t, "bind", dir, port, cmd)
}

// runSecondary starts cmd, the secondary kind configured in dir to listen
// on port, logging to a file there, until the test ends.
func runSecondary(t *testing.T, kind, dir string, port int, cmd *exec.Cmd) *secondary {
	t.Helper()
	logPath := filepath.Join(dir, kind+".log")
	out, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", kind, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log:\n%s", kind, b)
		}
	})
	return &secondary{name: kind, addr: fmt.Sprintf("127.0.0.1:%d", port), log: logPath}
}

// incremental reports whether the secondary's log shows its last transfer
// was incremental: each says so in its own words.
func (sec *secondary) incremental() bool {
	b, _ := os.ReadFile(sec.log)
	log := string(b)
	last := func(re string) int {
		m := regexp.MustCompile(re).FindAllStringSubmatch(log, -1)
		if len(m) == 0 {
			return -1
		}
		n, _ := strconv.Atoi(m[len(m)-1][1])
		return n
	}
	switch sec.name {
	case "knot": // "IXFR, incoming, ... finished"; an AXFR-style one says so
		return regexp.MustCompile(`IXFR, incoming, remote \S+, finished`).MatchString(log) && !strings.Contains(log, "AXFR-style IXFR")
	case "bind": // a difference is a few records, the zone hundreds
		n := last(`Transfer completed: \d+ messages, (\d+) records`)
		return n > 0 && n < 50
	case "nsd": // likewise in bytes: the zone is over 10 KB
		n := last(`received update to serial \d+ at \S+ from \S+ TSIG verified with key \S+ of (\d+) bytes`)
		return n > 0 && n < 2000
	}
	return false
}

// askAt queries addr over UDP; nil when it does not answer.
func askAt(addr, name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Timeout: 500 * time.Millisecond}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		return nil
	}
	return r
}

func serialAt(addr string) (uint32, bool) {
	r := askAt(addr, "example.org", dns.TypeSOA)
	if r == nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
		return 0, false
	}
	soa, ok := r.Answer[0].(*dns.SOA)
	if !ok {
		return 0, false
	}
	return soa.Serial, true
}

// sameAnswers reports the first name whose A answer differs between the
// two servers, "" when none does.
func sameAnswers(a, b string, names []string) string {
	for _, n := range names {
		ra, rb := askAt(a, n, dns.TypeA), askAt(b, n, dns.TypeA)
		if ra == nil || rb == nil || ra.Rcode != rb.Rcode || !slices.Equal(addrs(ra), addrs(rb)) {
			return n
		}
	}
	return ""
}

// within polls cond every 20 ms for up to d.
func within(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

func TestTransferToSecondaries(t *testing.T) {
	t.Parallel()
	for _, d := range []storage.Dialect{storage.SQLite, storage.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			knotPort, bindPort, nsdPort := freePort(t), freePort(t), freePort(t)
			s := start(t, options{dialect: d, block: []string{
				fmt.Sprintf("transfer {\n    to 127.0.0.1:%d 127.0.0.1:%d 127.0.0.1:%d\n  }", knotPort, bindPort, nsdPort),
				fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret),
			}})
			_, key := s.account("business")
			var names, ids []string
			for i := range 300 {
				r := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": fmt.Sprintf("198.41.%d.%d", i/250, i%250+1)})
				names, ids = append(names, r.str("hostname")), append(ids, r.str("id"))
			}
			secs := []*secondary{startSecondary(t, "knot", knotPort, s.dnsAddr), startSecondary(t, "bind", bindPort, s.dnsAddr),
				startSecondary(t, "nsd", nsdPort, s.dnsAddr)}

			for _, sec := range secs {
				if !within(15*time.Second, func() bool {
					a, okA := serialAt(s.dnsAddr)
					b, okB := serialAt(sec.addr)
					return okA && okB && a == b
				}) {
					t.Fatalf("%s did not load the zone with the primary's serial", sec.name)
				}
				if n := sameAnswers(s.dnsAddr, sec.addr, append(names, "ns1.example.org", "nosuchname.example.org")); n != "" {
					t.Errorf("%s answers %s differently from the primary", sec.name, n)
				}
			}

			// A create, a repoint and a release reach every secondary within
			// a second, NOTIFYed.
			created := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.9.9"}).str("hostname")
			s.must(200, "PUT", "/api/v1/hostnames/"+ids[0], key, map[string]any{"ip": "198.41.9.10"})
			s.must(200, "DELETE", "/api/v1/hostnames/"+ids[1], key, nil)
			for _, sec := range secs {
				if !within(time.Second, func() bool {
					return sameAnswers(s.dnsAddr, sec.addr, []string{created, names[0], names[1]}) == ""
				}) {
					t.Errorf("%s did not follow a create, a repoint and a release within 1 s", sec.name)
				}
			}

			// ... by an incremental transfer, not the whole zone again.
			for _, sec := range secs {
				if !within(2*time.Second, sec.incremental) {
					t.Errorf("%s's log shows no incremental transfer (IXFR)", sec.name)
				}
			}

			// Transfers need the key.
			tr := &dns.Transfer{}
			m := new(dns.Msg)
			m.SetAxfr("example.org.")
			if env, err := tr.In(m, s.dnsAddr); err == nil {
				if e := <-env; e.Error == nil {
					t.Errorf("an AXFR without the TSIG key was answered: %d records", len(e.RR))
				}
			}
			m.SetTsig(xfrKeyName, dns.HmacSHA256, 300, time.Now().Unix())
			tr = &dns.Transfer{TsigSecret: map[string]string{xfrKeyName: xfrSecret}}
			env, err := tr.In(m, s.dnsAddr)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for e := range env {
				if e.Error != nil {
					t.Fatalf("an AXFR with the key: %v", e.Error)
				}
				n += len(e.RR)
			}
			if want := 2 + 1 + 1 + 300 + 1 - 1; n != want { // SOA twice, NS, glue, names (+1 created, -1 released)
				t.Errorf("AXFR with the key: %d records, want %d", n, want)
			}
		})
	}
}

// axfr transfers zone from addr with the test key: its records, or the
// error that ended it.
func axfr(addr, zone string) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	m.SetTsig(xfrKeyName, dns.HmacSHA256, 300, time.Now().Unix())
	tr := &dns.Transfer{TsigSecret: map[string]string{xfrKeyName: xfrSecret}}
	env, err := tr.In(m, addr)
	if err != nil {
		return nil, err
	}
	var out []dns.RR
	for e := range env {
		if e.Error != nil {
			return out, e.Error
		}
		out = append(out, e.RR...)
	}
	return out, nil
}

// A [P2] team domain transfers with every record callers publish, and once
// it is signed, signed.
func TestTransferTeamDomain(t *testing.T) {
	xfr := []string{
		"transfer {\n    to 127.0.0.1:9\n  }",
		fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret),
	}
	eachDialect(t, options{profile: 2, extra: []string{recKeyLine(t)}, block: xfr}, func(t *testing.T, s *server) {
		const domain = "xfr.example.net"
		_, key := s.team(t, domain)
		hid, host := s.recHost(t, key, "web", "198.41.0.4")
		for _, body := range []recObj{
			{"type": "TXT", "text": "v=spf1 -all"},
			{"type": "MX", "preference": 10, "exchange": "mx1.example.com"},
			{"type": "CAA", "flags": 0, "tag": "issue", "value": "letsencrypt.org"},
			{"type": "SRV", "name": "_sip._tcp", "priority": 1, "weight": 5, "port": 5060, "target": "sip.example.com"},
		} {
			s.must(201, "POST", recPath(hid), key, body)
		}
		want := map[string]string{
			host + ". TXT":                `"v=spf1 -all"`,
			host + ". MX":                 "10 mx1.example.com.",
			host + ". CAA":                `0 issue "letsencrypt.org"`,
			"_sip._tcp." + host + ". SRV": "1 5 5060 sip.example.com.",
			host + ". A":                  "198.41.0.4",
		}
		if !within(2*time.Second, func() bool {
			rrs, err := axfr(s.dnsAddr, domain)
			if err != nil {
				return false
			}
			got := map[string]string{}
			for _, rr := range rrs {
				got[rr.Header().Name+" "+dns.TypeToString[rr.Header().Rrtype]] = strings.TrimPrefix(rr.String(), rr.Header().String())
			}
			for k, v := range want {
				if got[k] != v {
					return false
				}
			}
			return true
		}) {
			rrs, err := axfr(s.dnsAddr, domain)
			t.Fatalf("the AXFR of %s does not hold %v: %v (%v)", domain, want, rrs, err)
		}

		// Signed, it transfers signed: the key, and a signature over every
		// record published.
		id := s.recDomainID(t, domain)
		s.must(200, "PATCH", "/api/admin/domains/"+id, s.admin, recObj{"dnssec": true})
		if !within(2*time.Second, func() bool {
			rrs, err := axfr(s.dnsAddr, domain)
			covered := map[uint16]bool{}
			for _, rr := range rrs {
				if sig, ok := rr.(*dns.RRSIG); ok {
					covered[sig.TypeCovered] = true
				}
			}
			return err == nil && covered[dns.TypeDNSKEY] && covered[dns.TypeSRV] && covered[dns.TypeNSEC] && covered[dns.TypeA]
		}) {
			rrs, err := axfr(s.dnsAddr, domain)
			t.Errorf("a signed domain's AXFR is not signed: %v (%v)", rrs, err)
		}
	})
}

// counterValue reads the counter name{label="value"} from this process's
// registry.
func counterValue(name, label, value string) float64 {
	mfs, _ := prometheus.DefaultGatherer.Gather()
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// Any node sharing the database can be the primary: a secondary of node B
// follows writes made on node A (B applies them and NOTIFYs), and both
// nodes give the same serial.
func TestTransferFromAnyNode(t *testing.T) {
	t.Parallel()
	knotPort := freePort(t)
	xfr := []string{
		fmt.Sprintf("transfer {\n    to 127.0.0.1:%d\n  }", knotPort),
		fmt.Sprintf("tsig {\n    secret %s %s\n    require AXFR IXFR\n  }", xfrKeyName, xfrSecret),
	}
	a, _ := spawn(t, options{dialect: storage.Postgres}) // no secondaries of its own
	b, _ := spawn(t, options{dialect: storage.Postgres, dsn: a.dsn, block: xfr})
	_, key := a.account("business")
	var names []string
	for i := range 50 {
		names = append(names, a.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": fmt.Sprintf("198.41.1.%d", i+1)}).str("hostname"))
	}
	if !within(5*time.Second, func() bool {
		sa, okA := serialAt(a.dnsAddr)
		sb, okB := serialAt(b.dnsAddr)
		return okA && okB && sa == sb
	}) {
		t.Fatal("the two nodes do not agree on the serial")
	}
	knot := startSecondary(t, "knot", knotPort, b.dnsAddr)
	synced := func() bool {
		sa, okA := serialAt(a.dnsAddr)
		sk, okK := serialAt(knot.addr)
		return okA && okK && sa == sk
	}
	if !within(10*time.Second, synced) {
		t.Fatal("the secondary of node B did not load the zone")
	}
	created := a.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.9.9"}).str("hostname")
	if !within(time.Second, func() bool { return synced() && sameAnswers(a.dnsAddr, knot.addr, append(names, created)) == "" }) {
		t.Errorf("a write on node A did not reach node B's secondary within 1 s")
	}
	if !within(2*time.Second, knot.incremental) {
		t.Errorf("the secondary did not transfer incrementally")
	}
}
