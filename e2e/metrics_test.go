package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The hostname plugin's metrics (plugin/hostname/metrics.go), read the way
// Prometheus reads them: from the prometheus plugin's /metrics of a spawned
// binary, so that every value is that one server's (in-process servers share
// this test process's default registry with every parallel test).

// metricsPrefix is the prefix of every metric of the hostname plugin.
const metricsPrefix = "coredns_hostname_"

// metricsNode is a spawned server with the prometheus plugin enabled.
type metricsNode struct {
	*server
	p       *process
	url     string // its /metrics
	spawned time.Time
}

// spawnMetrics spawns the binary on o's Corefile with a prometheus line
// added to the server block.
func spawnMetrics(t *testing.T, o options) *metricsNode {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	begin := time.Now()
	s, p, _ := spawnEdited(t, o, func(text string) string {
		if n := strings.Count(text, "\n  errors\n"); n != 1 {
			t.Fatalf("the Corefile has the errors line %d times:\n%s", n, text)
		}
		return strings.Replace(text, "\n  errors\n", "\n  errors\n  prometheus "+addr+"\n", 1)
	})
	return &metricsNode{server: s, p: p, url: "http://" + addr + "/metrics", spawned: begin}
}

// scrape is one read of /metrics, by family name.
type scrape map[string]*dto.MetricFamily

// scrape reads and parses n's /metrics.
func (n *metricsNode) scrape(t testing.TB) scrape {
	t.Helper()
	resp, err := http.Get(n.url)
	if err != nil {
		t.Fatalf("GET %s: %v", n.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: status %d", n.url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", n.url, err)
	}
	return fams
}

// get is the sum of the series of metric name (without the prefix) whose
// labels include the given name/value pairs, and whether there is any.
// A histogram's name_count and name_sum read its count and sum.
func (sc scrape) get(name string, labels ...string) (float64, bool) {
	field := ""
	f := sc[metricsPrefix+name]
	if f == nil {
		for _, suffix := range []string{"_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && sc[metricsPrefix+base] != nil {
				f, field = sc[metricsPrefix+base], suffix
			}
		}
	}
	if f == nil {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range f.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		found = true
		switch {
		case field == "_count":
			sum += float64(m.GetHistogram().GetSampleCount())
		case field == "_sum":
			sum += m.GetHistogram().GetSampleSum()
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum, found
}

func hasLabels(m *dto.Metric, labels []string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for i := 0; i+1 < len(labels); i += 2 {
		if v, ok := have[labels[i]]; !ok || v != labels[i+1] {
			return false
		}
	}
	return true
}

// value is get's value; the series must exist.
func (sc scrape) value(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	v, ok := sc.get(name, labels...)
	if !ok {
		t.Fatalf("no series %s%s%v in the scrape", metricsPrefix, name, labels)
	}
	return v
}

// labelValues is every value label takes in metric name's series.
func (sc scrape) labelValues(name, label string) []string {
	seen := map[string]bool{}
	if f := sc[metricsPrefix+name]; f != nil {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					seen[l.GetValue()] = true
				}
			}
		}
	}
	return sortedKeys(seen)
}

// answers is coredns_hostname_answers_total by "rcode type kind".
func (sc scrape) answers() map[string]float64 {
	out := map[string]float64{}
	if f := sc[metricsPrefix+"answers_total"]; f != nil {
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out[l["rcode"]+" "+l["type"]+" "+l["kind"]] = m.GetCounter().GetValue()
		}
	}
	return out
}

// metricsRun is what the shared workload did and the scrapes it took.
type metricsRun struct {
	node        *metricsNode
	dnsWant     map[string]float64 // answers_total increments the DNS workload must make
	creates     int                // 201s of POST /api/v1/hostnames
	rateLimited int                // 429s of POST records
	hostnames   int                // hostnames left in the store
	before      scrape             // once every hostname is live, before the DNS workload
	after       scrape             // right after the DNS workload
	final       scrape             // after one more write
	finalAt     time.Time          // when final was scraped
}

const (
	metricsTeam    = "metrics.example.net"
	metricsRecords = "POST /api/v1/hostnames/{id}/records"
)

var (
	metricsOnce sync.Once
	metricsDone *metricsRun
)

// metricsWorkload runs the scripted workload once per test process (with
// the t of the first test that asks) and hands every test its scrapes.
func metricsWorkload(t *testing.T) *metricsRun {
	t.Helper()
	metricsOnce.Do(func() { metricsDone = runMetricsWorkload(t) })
	if metricsDone == nil {
		t.Fatal("the metrics workload failed in another test of this run; see its output")
	}
	return metricsDone
}

func runMetricsWorkload(t *testing.T) *metricsRun {
	t.Helper()
	// A Pebble validating against the server's DNS port, so that one
	// certificate order completes (certificate_orders_total has no series
	// before one does). record_write_per_minute 1 makes the rate limit
	// cheap to reach.
	port := freePort(t)
	pebble := dns01StartPebble(t, fmt.Sprintf("127.0.0.1:%d", port))
	n := spawnMetrics(t, options{profile: 2, dnsPort: port, extra: []string{
		certKeyFile(t), "acme_ca letsencrypt " + pebble.dir + " " + pebble.rootCA, "record_write_per_minute 1", "dynamic_update"}})
	s := n.server
	run := &metricsRun{node: n}
	_, key := s.team(t, metricsTeam)
	// The certificate's team is another one, so that its challenge records
	// do not meet the first team's record write limit.
	_, certKey := s.team(t, "certs.example.net")

	ids := map[string]string{}
	names := map[string]string{}
	for i, sub := range []string{"alpha", "bravo", "charlie", "gone"} {
		h := s.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": fmt.Sprintf("198.41.0.%d", i+1), "subdomain": sub})
		ids[sub], names[sub] = h.str("id"), h.str("hostname")
		run.creates++
	}
	certID, _ := s.certMint(t, certKey, "managed")
	run.creates++
	s.must(200, "DELETE", "/api/v1/hostnames/"+ids["gone"], key, nil)
	run.hostnames = 4 // alpha, bravo, charlie and the certificate's

	// Rate limit: one record write a minute for the team; the rest are 429.
	s.live(t, key, ids["alpha"])
	s.must(201, "POST", recPath(ids["alpha"]), key, map[string]any{"type": "TXT", "text": "metrics"})
	for range 2 {
		if r := s.do("POST", recPath(ids["alpha"]), key, map[string]any{"type": "TXT", "name": "more", "text": "x"}); r.status == 429 && r.str("code") == "RATE_LIMITED" {
			run.rateLimited++
		} else {
			t.Fatalf("record write past record_write_per_minute 1: %d %s", r.status, r.raw)
		}
	}

	// One DNS UPDATE, signed with a TSIG key of the team: a DNS-01 value.
	s.mustUpdate(s.tsig("/api/v1/tsig-keys", key, nil),
		"zone "+metricsTeam+"\nupdate add _acme-challenge."+names["alpha"]+" 60 TXT "+acmeValue())

	// One 401 for each credential, and a path that is no route.
	s.must(401, "GET", "/api/v1/hostnames", key+"x", nil)
	s.must(401, "GET", "/api/admin/domains", s.admin+"x", nil)
	bogus := acmeCred{user: "6f1c2a3e-4b5d-4e6f-8a7b-9c0d1e2f3a4b", pass: "not-the-password"}
	if r := s.acmeSend(t, "POST", "/api/acme/update", bogus.headers(""), acmeBody("subdomain", bogus.user, "txt", acmeValue())); r.status != 401 {
		t.Fatalf("acme-dns update with a wrong credential: %d %s", r.status, r.raw)
	}
	if a := s.dyn(t, "/nic/update", "wrong-password", "hostname="+names["alpha"]+"&myip=198.41.0.9", nil); a.status != 401 {
		t.Fatalf("dyndns2 with a wrong password: %d %q", a.status, a.body)
	}
	s.must(404, "GET", "/api/v1/no-such-route", key, nil)

	// Everything live and the certificate issued: from here on nothing
	// is pending, so the watcher sends no probe and the CA no query.
	s.certIssued(t, certKey, certID, nil)
	for _, sub := range []string{"alpha", "bravo", "charlie"} {
		s.live(t, key, ids[sub])
	}
	s.live(t, certKey, certID)
	s.resolves(names["alpha"], dns.TypeA, "198.41.0.1")
	run.before = n.scrape(t)

	// DNS: exactly these queries, nothing else reaches the server.
	const aQueries, missing, outside = 5, 3, 2
	for range aQueries {
		if m := s.query(names["alpha"], dns.TypeA, "udp"); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
			t.Fatalf("A %s: %v", names["alpha"], m)
		}
	}
	for i := range missing {
		if m := s.query(fmt.Sprintf("missing-%d.%s", i, metricsTeam), dns.TypeA, "udp"); m.Rcode != dns.RcodeNameError {
			t.Fatalf("a missing name answered %s", dns.RcodeToString[m.Rcode])
		}
	}
	// example.org, the Corefile's domain, has no owner: a pool domain.
	if m := s.query("missing.example.org", dns.TypeA, "udp"); m.Rcode != dns.RcodeNameError {
		t.Fatalf("a missing name in the pool domain answered %s", dns.RcodeToString[m.Rcode])
	}
	for range outside {
		if m := s.query("www.example.com", dns.TypeA, "tcp"); m.Rcode != dns.RcodeRefused {
			t.Fatalf("a name outside answered %s", dns.RcodeToString[m.Rcode])
		}
	}
	if m := s.query(names["alpha"], dns.TypeTXT, "udp"); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
		t.Fatalf("TXT %s: %v", names["alpha"], m)
	}
	run.dnsWant = map[string]float64{
		"NOERROR A team": aQueries, "NXDOMAIN A team": missing, "NXDOMAIN A pool": 1, "REFUSED A outside": outside,
		"NOERROR TXT team": 1,
	}
	run.after = n.scrape(t)

	// One more write: the feed moves on.
	s.must(200, "PUT", "/api/v1/hostnames/"+ids["bravo"], key, map[string]any{"ip": "198.41.0.22"})
	last := run.after.value(t, "feed_last_change_id")
	eventually(t, 2*time.Second, func() bool {
		run.final, run.finalAt = n.scrape(t), time.Now()
		return run.final.value(t, "feed_last_change_id") > last
	}, "feed_last_change_id stayed %v after a write", last)
	return run
}

// A scripted workload on a spawned profile-2 server, then every metric by
// name, labels and value.
func TestMetrics(t *testing.T) {
	t.Parallel()
	run := metricsWorkload(t)
	before, after, final := run.before, run.after, run.final

	t.Run("answers", func(t *testing.T) {
		// The P2 watcher probes pending hostnames by asking the nameservers,
		// this server among them (one A and, once that matches, one AAAA
		// query a probe): those answers are counted too. So the exact counts
		// are the increments over the DNS workload, taken once nothing was
		// pending; the totals are at least the workload plus the served
		// probes' A queries.
		b, a := before.answers(), after.answers()
		got := map[string]float64{}
		for k, v := range a {
			if d := v - b[k]; d != 0 {
				got[k] = d
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(run.dnsWant) {
			t.Errorf("answers_total grew by %v over the DNS workload, want %v", got, run.dnsWant)
		}
		served := after.value(t, "nameserver_probes_total", "result", "served")
		if total := a["NOERROR A team"]; total < run.dnsWant["NOERROR A team"]+served {
			t.Errorf("answers_total{NOERROR,A,team} %v, want at least %v queries + %v served probes", total, run.dnsWant["NOERROR A team"], served)
		}
	})

	t.Run("index", func(t *testing.T) {
		if got := after.value(t, "index_hostnames"); got != float64(run.hostnames) {
			t.Errorf("index_hostnames %v, want %d", got, run.hostnames)
		}
	})

	t.Run("api", func(t *testing.T) {
		if got := after.value(t, "api_requests_total", "route", "POST /api/v1/hostnames", "status", "201"); got != float64(run.creates) {
			t.Errorf("api_requests_total{POST /api/v1/hostnames, 201} %v, want %d", got, run.creates)
		}
		for _, cred := range []string{"key", "admin", "acme-dns", "basic"} {
			if got, _ := after.get("api_auth_failures_total", "credential", cred); got != 1 {
				t.Errorf("api_auth_failures_total{credential=%q} %v, want 1", cred, got)
			}
		}
		if creds := after.labelValues("api_auth_failures_total", "credential"); len(creds) != 4 {
			t.Errorf("api_auth_failures_total credentials %v, want exactly key, admin, acme-dns, basic", creds)
		}
		if got, _ := after.get("api_requests_total", "route", "other"); got != 1 {
			t.Errorf("api_requests_total{route=other} %v, want 1", got)
		}
		if got, _ := after.get("api_requests_total", "route", "other", "status", "404"); got != 1 {
			t.Errorf("api_requests_total{route=other, status=404} %v, want 1", got)
		}
		// Every request is timed once, under its route.
		for _, route := range after.labelValues("api_requests_total", "route") {
			reqs := after.value(t, "api_requests_total", "route", route)
			if got, _ := after.get("api_request_duration_seconds_count", "route", route); got != reqs {
				t.Errorf("api_request_duration_seconds_count{route=%q} %v, want %v (its requests)", route, got, reqs)
			}
		}
		if routes := after.labelValues("api_request_duration_seconds", "route"); len(routes) != len(after.labelValues("api_requests_total", "route")) {
			t.Errorf("api_request_duration_seconds routes %v differ from api_requests_total's", routes)
		}
	})

	t.Run("rate limit", func(t *testing.T) {
		if run.rateLimited == 0 {
			t.Fatal("the workload saw no 429")
		}
		if got, _ := after.get("api_rate_limited_total", "route", metricsRecords); got != float64(run.rateLimited) {
			t.Errorf("api_rate_limited_total{route=%q} %v, want %d (the 429s seen)", metricsRecords, got, run.rateLimited)
		}
		if got, _ := after.get("api_rate_limited_total"); got != float64(run.rateLimited) {
			t.Errorf("api_rate_limited_total over all routes %v, want %d", got, run.rateLimited)
		}
		if got, _ := after.get("api_requests_total", "route", metricsRecords, "status", "429"); got != float64(run.rateLimited) {
			t.Errorf("api_requests_total{%s, 429} %v, want %d", metricsRecords, got, run.rateLimited)
		}
	})

	t.Run("feed", func(t *testing.T) {
		id := after.value(t, "feed_last_change_id")
		if id <= 0 {
			t.Errorf("feed_last_change_id %v, want > 0", id)
		}
		if next := final.value(t, "feed_last_change_id"); next <= id {
			t.Errorf("feed_last_change_id %v after a write, was %v", next, id)
		}
		if n := final.value(t, "feed_lag_seconds_count"); n <= 0 {
			t.Errorf("feed_lag_seconds_count %v, want > 0", n)
		}
		if n := final.value(t, "feed_lag_seconds_count"); n < after.value(t, "feed_lag_seconds_count") {
			t.Errorf("feed_lag_seconds_count went down")
		}
		if age := final.value(t, "feed_last_change_age_seconds"); age < 0 || age >= 60 {
			t.Errorf("feed_last_change_age_seconds %v, want 0..60 right after a write", age)
		}
		// Against the scrape's time, not the check's: a loaded machine may
		// run this subtest long after the scrape.
		if at := final.value(t, "feed_last_change_timestamp_seconds"); run.finalAt.Sub(time.Unix(int64(at), 0)).Abs() > time.Minute {
			t.Errorf("feed_last_change_timestamp_seconds %v is not within a minute of the scrape at %v", at, run.finalAt)
		}
		if up := final.value(t, "store_up"); up != 1 {
			t.Errorf("store_up %v, want 1", up)
		}
	})

	t.Run("probes", func(t *testing.T) {
		ns := run.node.dnsAddr
		if got, _ := after.get("nameserver_probes_total", "nameserver", ns, "result", "served"); got <= 0 {
			t.Errorf("nameserver_probes_total{nameserver=%q, result=served} %v, want > 0 once hostnames went live", ns, got)
		}
		if nss := after.labelValues("nameserver_probes_total", "nameserver"); len(nss) != 1 || nss[0] != ns {
			t.Errorf("nameserver_probes_total nameservers %v, want only %s", nss, ns)
		}
	})

	t.Run("certificates", func(t *testing.T) {
		// The gauges are read from the store at start and then every
		// minute: within the first minute they are the start's, all 0.
		fresh := time.Since(run.node.spawned) < 55*time.Second
		for _, status := range []string{storage.CertRequested, storage.CertIssuing, storage.CertIssued,
			storage.CertFailed, storage.CertRevoking, storage.CertRevoked} {
			v, ok := final.get("certificates", "status", status)
			if !ok {
				t.Errorf("no certificates{status=%q} gauge", status)
			} else if fresh && v != 0 {
				t.Errorf("certificates{status=%q} %v within the first minute, want 0 (read at start)", status, v)
			}
		}
		if v := final.value(t, "certificate_expiry_soonest_timestamp_seconds"); fresh && v != 0 {
			t.Errorf("certificate_expiry_soonest_timestamp_seconds %v within the first minute, want 0", v)
		}
		if v := final.value(t, "certificates_expiring"); v != 0 {
			t.Errorf("certificates_expiring %v, want 0", v)
		}
		if got, _ := final.get("certificate_orders_total", "result", "issued", "kind", "first"); got != 1 {
			t.Errorf("certificate_orders_total{issued, first} %v, want 1 (the one managed certificate)", got)
		}
		if got, _ := final.get("certificate_orders_total"); got != 1 {
			t.Errorf("certificate_orders_total over all labels %v, want 1", got)
		}
	})

	t.Run("audit", func(t *testing.T) {
		if v := final.value(t, "audit_write_failures_total"); v != 0 {
			t.Errorf("audit_write_failures_total %v, want 0", v)
		}
	})
}

// histogramBase maps name_bucket, name_count and name_sum of a histogram
// family of sc to name; any other name is its own.
func (sc scrape) histogramBase(name string) string {
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if f := sc[base]; f != nil && f.GetType() == dto.MetricType_HISTOGRAM {
				return base
			}
		}
	}
	return name
}

var metricNameRE = regexp.MustCompile(metricsPrefix + `[a-zA-Z0-9_]+`)

// namedIn is every metric family of sc's kind named in text.
func (sc scrape) namedIn(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range metricNameRE.FindAllString(text, -1) {
		out[sc.histogramBase(m)] = true
	}
	return out
}

// readmeMetrics is the Metrics section of the plugin's README.
func readmeMetrics(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../plugin/hostname/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## Metrics\n")
	if !ok {
		t.Fatal("plugin/hostname/README.md has no Metrics section")
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

// grafanaExprs is every expr of the dashboard, joined.
func grafanaExprs(t *testing.T, path string) (string, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && k == "expr" {
					exprs = append(exprs, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	if len(exprs) == 0 {
		t.Fatalf("%s has no expr", path)
	}
	return strings.Join(exprs, "\n"), nil
}

// Every metric the plugin exports is documented in the README's Metrics
// section and charted by the Grafana dashboard, and every metric the
// section names is exported.
func TestMetricsDocumented(t *testing.T) {
	t.Parallel()
	run := metricsWorkload(t)
	sc := run.final
	exported := map[string]bool{}
	for name := range sc {
		if strings.HasPrefix(name, metricsPrefix) {
			exported[name] = true
		}
	}
	if len(exported) == 0 {
		t.Fatal("the scrape has no coredns_hostname_ metric")
	}

	t.Logf("%d coredns_hostname_ metric families exported", len(exported))
	documented := sc.namedIn(readmeMetrics(t))
	for _, name := range sortedKeys(exported) {
		if !documented[name] {
			t.Errorf("%s is exported but not named in plugin/hostname/README.md's Metrics section", name)
		}
	}
	for _, name := range sortedKeys(documented) {
		if !exported[name] {
			t.Errorf("plugin/hostname/README.md's Metrics section names %s, which the scrape after the workload does not have", name)
		}
	}

	const dashboard = "../deploy/grafana/hostmint.json"
	exprs, err := grafanaExprs(t, dashboard)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s does not exist yet: its half of the check is skipped", dashboard)
	}
	if err != nil {
		t.Fatal(err)
	}
	charted := sc.namedIn(exprs)
	t.Logf("%d charted in %s", len(charted), dashboard)
	for _, name := range sortedKeys(exported) {
		if !charted[name] {
			t.Errorf("%s is exported but used in no expr of deploy/grafana/hostmint.json", name)
		}
	}
	var unknown []string
	for name := range charted {
		if !exported[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("deploy/grafana/hostmint.json charts %v, which the plugin does not export", unknown)
	}
}

// lazy formats as f's value when it is formatted, not when it is passed.
type lazy func() any

func (f lazy) String() string { return fmt.Sprint(f()) }

// Two nodes on one PostgreSQL: a write on node A reaches node B, whose
// feed_last_change_id equals A's within 2 s and whose feed_lag_seconds
// counts it — what the README's multi-node runbook tells operators to watch.
func TestMetricsTwoNodes(t *testing.T) {
	t.Parallel()
	a := spawnMetrics(t, options{dialect: storage.Postgres})
	b := spawnMetrics(t, options{dialect: storage.Postgres, dsn: a.dsn})
	_, key := a.account("pro")

	ids := func() (float64, float64) {
		return a.scrape(t).value(t, "feed_last_change_id"), b.scrape(t).value(t, "feed_last_change_id")
	}
	// Settled on the account's changes first.
	eventually(t, 2*time.Second, func() bool { x, y := ids(); return x == y && x > 0 },
		"the nodes never agreed on feed_last_change_id after the account was made")
	idA0, _ := ids()
	lagB0 := b.scrape(t).value(t, "feed_lag_seconds_count")

	a.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "198.41.0.4"})
	wrote := time.Now()
	var idA, idB float64
	eventually(t, 2*time.Second, func() bool { idA, idB = ids(); return idA > idA0 && idB == idA },
		"node B's feed_last_change_id %v, node A's %v (was %v) 2 s after a write on A",
		lazy(func() any { return idB }), lazy(func() any { return idA }), idA0)
	t.Logf("node B caught up to change %v %v after the write", idB, time.Since(wrote).Round(time.Millisecond))
	if lagB := b.scrape(t).value(t, "feed_lag_seconds_count"); lagB <= lagB0 {
		t.Errorf("node B's feed_lag_seconds_count %v, was %v before the write", lagB, lagB0)
	}
	if up := b.scrape(t).value(t, "store_up"); up != 1 {
		t.Errorf("node B's store_up %v", up)
	}
}
