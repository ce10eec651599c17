package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// standbyAck is one logical create the writer acknowledged with a 201.
type standbyAck struct {
	id, name, ip string
	began        time.Time // the logical create's first attempt
	sent         time.Time // the attempt that was answered 201
	at           time.Time // its answer
	attempts     int
}

// standbyLoad is what the create clients saw.
type standbyLoad struct {
	mu          sync.Mutex
	acks        []standbyAck
	unexpected  []string // answers neither 201 nor 503, nor a transport error
	abandoned   []string // logical creates never acknowledged (their IPs)
	transport   int      // attempts that got no HTTP answer
	unavailable int      // attempts answered 503
	retried     int      // logical creates that needed more than one attempt
}

// standbyDNS counts one node's answers to the DNS clients.
type standbyDNS struct {
	answered, failed atomic.Int64
	mu               sync.Mutex
	samples          []string // the first failures, for the report
}

func (d *standbyDNS) fail(format string, args ...any) {
	d.failed.Add(1)
	d.mu.Lock()
	if len(d.samples) < 10 {
		d.samples = append(d.samples, fmt.Sprintf(format, args...))
	}
	d.mu.Unlock()
}

// standbyLookup asks addr for name's A records over UDP, once.
func standbyLookup(c *dns.Client, addr, name string) ([]string, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	m.RecursionDesired = false
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		return nil, err
	}
	return addrs(r), nil
}

// A writer on the multi-host DSN and a read-only DNS node on the
// synchronous standby, under a steady load of creates and DNS queries,
// while the primary is killed and the standby promoted: the writer comes
// back by itself on the promoted standby, every create it acknowledged is
// there (and only once, retries carrying an Idempotency-Key), DNS never
// stops answering on either node, and the read-only node - whose database
// just became the primary - follows the writer again.
func TestStandbyFailover(t *testing.T) {
	t.Parallel()
	began := time.Now()
	c := newPGCluster(t)
	c.createDB(t, "hostmint")
	w := start(t, options{dialect: storage.Postgres, dsn: c.multiHostDSN("hostmint")})
	// Business: private addresses and custom labels; a cap far above the load.
	accountID, key := w.account("business", 100000)
	w.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.255.0.1", "label": "before"})
	c.waitStandbyCaughtUp(t) // the writer's migrations and the first hostname on the standby
	ro := start(t, options{dialect: storage.Postgres, dsn: c.standbyDSN("hostmint") + " readonly", dir: w.dir})
	t.Logf("cluster and both nodes up in %v", time.Since(began).Round(time.Millisecond))

	health := ro.must(200, "GET", "/api/health", "", nil)
	if health.body["read_only"] != true {
		t.Errorf("the read-only node's health: %s, want read_only true", health.raw)
	}
	if r := w.must(200, "GET", "/api/health", "", nil); r.body["read_only"] == true {
		t.Errorf("the writer's health says read_only: %s", r.raw)
	}
	if r := ro.do("POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.255.0.2"}); r.status != 503 || r.str("code") != "SERVICE_UNAVAILABLE" {
		t.Errorf("a create on the read-only node: %d %s, want 503 SERVICE_UNAVAILABLE", r.status, r.raw)
	}
	w.resolves("before.example.org", dns.TypeA, "10.255.0.1")
	ro.resolves("before.example.org", dns.TypeA, "10.255.0.1")

	// The DNS clients: two per node, each asking for before.example.org
	// every ~10 ms, until the end of the load.
	var (
		dnsStop atomic.Bool
		dnsWG   sync.WaitGroup
		killed  atomic.Int64 // the primary's kill, Unix ns, for the failure samples
	)
	nodes := []struct {
		name string
		s    *server
		dns  *standbyDNS
	}{{"writer", w, new(standbyDNS)}, {"read-only", ro, new(standbyDNS)}}
	for _, n := range nodes {
		for range 2 {
			dnsWG.Add(1)
			go func() {
				defer dnsWG.Done()
				cl := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
				for !dnsStop.Load() {
					got, err := standbyLookup(cl, n.s.dnsAddr, "before.example.org")
					when := "before the kill"
					if k := killed.Load(); k != 0 {
						when = fmt.Sprintf("%+v after the kill", time.Since(time.Unix(0, k)).Round(time.Millisecond))
					}
					switch {
					case err != nil:
						n.dns.fail("%s: %v", when, err)
					case strings.Join(got, ",") != "10.255.0.1":
						n.dns.fail("%s: answered %v", when, got)
					default:
						n.dns.answered.Add(1)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
		}
	}

	// The read-only node's health through the failover, for the report:
	// its lag behind the writer and any answer but 200.
	var (
		healthMu    sync.Mutex
		maxLag      float64
		healthCalls int
		healthBad   []string
	)
	dnsWG.Add(1)
	go func() {
		defer dnsWG.Done()
		hc := &http.Client{Timeout: 5 * time.Second}
		for !dnsStop.Load() {
			var v struct {
				LagSeconds float64 `json:"lag_seconds"`
			}
			resp, err := hc.Get(ro.api + "/api/health")
			healthMu.Lock()
			healthCalls++
			if err != nil {
				healthBad = append(healthBad, err.Error())
			} else {
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 && len(healthBad) < 10 {
					healthBad = append(healthBad, fmt.Sprintf("%d %s", resp.StatusCode, raw))
				}
				if json.Unmarshal(raw, &v) == nil {
					maxLag = max(maxLag, v.LagSeconds)
				}
			}
			healthMu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
	}()

	// The create clients: 8, each making one logical create at a time (a
	// fresh Idempotency-Key and address) and retrying it - same key, same
	// body - on a 503 or a transport error. Once stopping is set a client
	// starts no new create but still sees its current one acknowledged, so
	// every logical create the database may hold is one the test counts.
	var (
		load             standbyLoad
		stopping, abort  atomic.Bool
		loadWG           sync.WaitGroup
		giveUp           atomic.Int64 // Unix ns after which a client abandons its create; 0: none
		firstAfterSignal = make(chan struct{})
		promotedAt       atomic.Int64 // Unix ns
		recoveredOnce    sync.Once
	)
	client := &http.Client{Timeout: 15 * time.Second}
	post := func(idem string, body []byte) (int, []byte, error) {
		req, err := http.NewRequest("POST", w.api+"/api/v1/hostnames", bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", idem)
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		return resp.StatusCode, raw, err
	}
	const clients = 8
	loadStart := time.Now()
	for cl := range clients {
		loadWG.Add(1)
		go func() {
			defer loadWG.Done()
			for seq := 0; !stopping.Load() && !abort.Load(); seq++ {
				ip := fmt.Sprintf("10.%d.%d.%d", cl+1, seq/250, seq%250+1)
				b := make([]byte, 16)
				rand.Read(b)
				idemKey := hex.EncodeToString(b)
				body := []byte(fmt.Sprintf(`{"ip":%q}`, ip))
				first := time.Now()
				for attempt := 1; ; attempt++ {
					sent := time.Now()
					status, raw, err := post(idemKey, body)
					at := time.Now()
					load.mu.Lock()
					if err == nil && status == 201 {
						var v struct{ ID, Hostname, IP string }
						if err := json.Unmarshal(raw, &v); err != nil || v.ID == "" || v.IP != ip {
							load.unexpected = append(load.unexpected, fmt.Sprintf("201 for %s: %s (%v)", ip, raw, err))
						}
						load.acks = append(load.acks, standbyAck{id: v.ID, name: v.Hostname, ip: ip, began: first, sent: sent, at: at, attempts: attempt})
						if attempt > 1 {
							load.retried++
						}
						load.mu.Unlock()
						if p := promotedAt.Load(); p != 0 && sent.UnixNano() >= p {
							recoveredOnce.Do(func() { close(firstAfterSignal) })
						}
						break
					}
					switch {
					case err != nil:
						load.transport++
					case status == 503:
						load.unavailable++
					default:
						if len(load.unexpected) < 20 {
							load.unexpected = append(load.unexpected, fmt.Sprintf("%s attempt %d: %d %s", ip, attempt, status, raw))
						}
					}
					load.mu.Unlock()
					if g := giveUp.Load(); abort.Load() || (g != 0 && at.UnixNano() > g) {
						load.mu.Lock()
						load.abandoned = append(load.abandoned, ip)
						load.mu.Unlock()
						return
					}
					time.Sleep(25 * time.Millisecond)
				}
			}
		}()
	}
	// Whatever way the test ends, the clients end before the servers stop.
	stopAll := func() {
		stopping.Store(true)
		if giveUp.Load() == 0 {
			giveUp.Store(time.Now().Add(20 * time.Second).UnixNano())
		}
		loadWG.Wait()
		dnsStop.Store(true)
		dnsWG.Wait()
	}
	defer func() {
		abort.Store(true)
		stopAll()
	}()
	countAcks := func(acks []standbyAck, from, to time.Time) int {
		n := 0
		for _, a := range acks {
			if !a.at.Before(from) && a.at.Before(to) {
				n++
			}
		}
		return n
	}

	time.Sleep(2 * time.Second)
	killAt := time.Now()
	killed.Store(killAt.UnixNano())
	c.killPrimary(t)
	killedFor := time.Since(killAt)
	c.promote(t)
	promoted := time.Now()
	promotedAt.Store(promoted.UnixNano())
	t.Logf("primary killed in %v, standby promoted %v after the kill", killedFor.Round(time.Millisecond), promoted.Sub(killAt).Round(time.Millisecond))

	select {
	case <-firstAfterSignal:
	case <-time.After(30 * time.Second):
		load.mu.Lock()
		unavailable, transport, unexpected := load.unavailable, load.transport, load.unexpected
		load.mu.Unlock()
		t.Fatalf("no create sent after the promotion was acknowledged within 30 s (%d attempts answered 503, %d without an answer; unexpected: %v)",
			unavailable, transport, unexpected)
	}
	// The first 201 of an attempt sent after the promotion finished.
	var recovered time.Time
	load.mu.Lock()
	for _, a := range load.acks {
		if !a.sent.Before(promoted) && (recovered.IsZero() || a.at.Before(recovered)) {
			recovered = a.at
		}
	}
	load.mu.Unlock()
	time.Sleep(2 * time.Second)
	loadEnd := time.Now()
	stopAll()
	t.Logf("load ran %v", time.Since(loadStart).Round(time.Millisecond))

	// The clients are done: what they recorded needs no lock any more.
	acks := load.acks
	sort.Slice(acks, func(i, j int) bool { return acks[i].at.Before(acks[j].at) })
	// The writes' outage: the widest gap between two acknowledgements
	// (pg_ctl stop takes a moment to kill, so the outage begins somewhat
	// after killAt).
	var gapFrom, gapTo time.Time
	longest := 0
	for i, a := range acks {
		if i > 0 && a.at.Sub(acks[i-1].at) > gapTo.Sub(gapFrom) {
			gapFrom, gapTo = acks[i-1].at, a.at
		}
		longest = max(longest, a.attempts)
	}
	t.Logf("writer recovery: first 201 of an attempt sent after the promotion %v after it finished; widest gap between 201s %v (from %v to %v after the kill began)",
		recovered.Sub(promoted).Round(time.Millisecond), gapTo.Sub(gapFrom).Round(time.Millisecond),
		gapFrom.Sub(killAt).Round(time.Millisecond), gapTo.Sub(killAt).Round(time.Millisecond))
	beforeRate := float64(countAcks(acks, loadStart, killAt)) / killAt.Sub(loadStart).Seconds()
	afterRate := float64(countAcks(acks, recovered, loadEnd)) / loadEnd.Sub(recovered).Seconds()
	t.Logf("creates: %d acknowledged (%.0f/s before the kill, %.0f/s after the recovery); %d needed retries (at most %d attempts); attempts answered 503: %d, without an answer: %d",
		len(acks), beforeRate, afterRate, load.retried, longest, load.unavailable, load.transport)
	for _, n := range nodes {
		t.Logf("DNS on the %s: %d answered, %d failed %v", n.name, n.dns.answered.Load(), n.dns.failed.Load(), n.dns.samples)
	}
	t.Logf("the read-only node's health during the load: %d checks, highest lag_seconds %.2f, not 200: %v", healthCalls, maxLag, healthBad)
	if len(load.unexpected) > 0 {
		t.Errorf("answers to creates other than 201 and 503:\n%s", strings.Join(load.unexpected, "\n"))
	}
	if len(load.abandoned) > 0 {
		t.Errorf("%d logical creates never acknowledged within 20 s of the load's end: %v", len(load.abandoned), load.abandoned)
	}
	for _, n := range nodes {
		if f := n.dns.failed.Load(); f > 0 {
			t.Errorf("DNS on the %s failed %d of %d queries during the failover: %v", n.name, f, f+n.dns.answered.Load(), n.dns.samples)
		}
		if n.dns.answered.Load() == 0 {
			t.Errorf("DNS on the %s answered nothing", n.name)
		}
	}

	// After the failover: a create on the writer, which the read-only node
	// serves once it has followed it.
	w.must(201, "POST", "/api/v1/hostnames", key, map[string]any{"ip": "10.255.0.3", "label": "after"})
	roc := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	eventually(t, 10*time.Second, func() bool {
		got, err := standbyLookup(roc, ro.dnsAddr, "after.example.org")
		return err == nil && strings.Join(got, ",") == "10.255.0.3"
	}, "the read-only node never served after.example.org, created after the failover")
	ro.resolves("after.example.org", dns.TypeA, "10.255.0.3")
	w.resolves("after.example.org", dns.TypeA, "10.255.0.3")
	var lag float64
	eventually(t, 10*time.Second, func() bool {
		r := ro.do("GET", "/api/health", "", nil)
		lag, _ = r.body["lag_seconds"].(float64)
		return r.status == 200 && r.body["read_only"] == true && lag < 5
	}, "the read-only node's health after the failover: not 200 with lag_seconds < 5 (last lag %v)", lag)
	t.Logf("the read-only node after the failover: lag_seconds %.2f", lag)

	// Every acknowledged create is in the promoted standby's database.
	db := openSQL(t, storage.Postgres, c.standbyDSN("hostmint"))
	rows, err := db.Query("SELECT id, name, ip FROM hostnames WHERE account_id = $1", accountID)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string][2]string{} // id -> name, ip
	byIP := map[string][]string{}
	for rows.Next() {
		var id, name, ip string
		if err := rows.Scan(&id, &name, &ip); err != nil {
			t.Fatal(err)
		}
		stored[id] = [2]string{name, ip}
		byIP[ip] = append(byIP[ip], id+" "+name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	missing := 0
	for _, a := range acks {
		if got, ok := stored[a.id]; !ok || got != [2]string{a.name, a.ip} {
			missing++
			if missing <= 10 {
				t.Errorf("acknowledged create %s (%s %s, answered %v after the kill) is not in the database as such: %v",
					a.id, a.name, a.ip, a.at.Sub(killAt).Round(time.Millisecond), got)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged creates are missing from the promoted standby", missing, len(acks))
	}
	// One hostname per logical create: the acknowledged ones plus before
	// and after. Each logical create has an address of its own, so an
	// address held twice is a create minted twice.
	if want := len(acks) + 2; len(stored) != want {
		var twice []string
		for ip, ids := range byIP {
			if len(ids) > 1 {
				twice = append(twice, fmt.Sprintf("%s: %v", ip, ids))
			}
		}
		sort.Strings(twice)
		t.Errorf("the account holds %d hostnames, want %d (one per acknowledged create); addresses minted more than once: %v",
			len(stored), want, twice)
	}
	// The API agrees.
	listed := 0
	for skip := 0; ; skip += 500 {
		r := w.must(200, "GET", fmt.Sprintf("/api/v1/hostnames?limit=500&skip=%d", skip), key, nil)
		page, _ := r.body["hostnames"].([]any)
		listed += len(page)
		if len(page) < 500 {
			break
		}
	}
	if listed != len(stored) {
		t.Errorf("the API lists %d hostnames, the database holds %d", listed, len(stored))
	}

	// Every acknowledged hostname resolves to its address on both nodes.
	checkAll := func(n *server, who string) {
		t.Helper()
		cl := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
		wrong := 0
		for _, a := range acks {
			deadline := time.Now().Add(3 * time.Second)
			for {
				got, err := standbyLookup(cl, n.dnsAddr, a.name)
				if err == nil && strings.Join(got, ",") == a.ip {
					break
				}
				if time.Now().After(deadline) {
					wrong++
					if wrong <= 5 {
						t.Errorf("%s on the %s: %v %v, want %s", a.name, who, got, err, a.ip)
					}
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if wrong > 20 {
				break
			}
		}
		if wrong > 0 {
			t.Errorf("the %s does not serve %d acknowledged hostnames", who, wrong)
		}
	}
	checkAll(w, "writer")
	checkAll(ro, "read-only node")
	t.Logf("%d hostnames checked in the database and on both nodes; the test took %v", len(acks), time.Since(began).Round(time.Millisecond))
}
