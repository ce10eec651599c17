package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// latencies summarises one kind of API call.
type latencies struct {
	p50, p99, max time.Duration
	perSecond     float64
	cpu           time.Duration // machine CPU time (every process) per call
}

func summarise(ds []time.Duration, wall time.Duration) latencies {
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return latencies{p50: at(0.50), p99: at(0.99), max: ds[len(ds)-1], perSecond: float64(len(ds)) / wall.Seconds()}
}

// apiClient talks to one server's API as one caller.
type apiClient struct {
	base, token string
	http        *http.Client
}

func newClient(s *server, token string) *apiClient {
	return &apiClient{base: fmt.Sprintf("http://127.0.0.1:%d", s.api), token: token,
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// call sends body (JSON) and decodes the answer into out when it is want.
func (c *apiClient) call(method, path string, body any, want int, out any) error {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, r)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s %s", method, path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// newAccount makes an account (with room for every name the run creates)
// and returns a client holding its key.
func newAccount(s *server, admin *apiClient, name string) (*apiClient, error) {
	var acc struct{ ID string }
	if err := admin.call("POST", "/api/admin/accounts", map[string]any{"name": name, "plan": "business", "cap": 10_000_000}, 201, &acc); err != nil {
		return nil, err
	}
	var key struct{ Key string }
	if err := admin.call("POST", "/api/admin/accounts/"+acc.ID+"/keys", map[string]any{"name": "bench"}, 201, &key); err != nil {
		return nil, err
	}
	return newClient(s, key.Key), nil
}

// apiBench runs clients callers, each with its own account, that first
// create ops/clients hostnames each and then update each of them once to a
// new address, all at once; it returns the latencies of both.
func apiBench(s *server, clients, ops int) (create, update latencies, err error) {
	tok, err := s.adminToken()
	if err != nil {
		return create, update, err
	}
	admin := newClient(s, tok)
	cs := make([]*apiClient, clients)
	for i := range cs {
		if cs[i], err = newAccount(s, admin, fmt.Sprintf("bench-api-%d", i)); err != nil {
			return create, update, err
		}
	}
	per := ops / clients
	ids := make([][]string, clients)
	create, err = parallel(clients, per, func(c int, i int) error {
		var h struct{ ID string }
		err := cs[c].call("POST", "/api/v1/hostnames", map[string]string{"ip": publicAddr(c, i, 0)}, 201, &h)
		ids[c] = append(ids[c], h.ID)
		return err
	})
	if err != nil {
		return create, update, err
	}
	update, err = parallel(clients, per, func(c int, i int) error {
		return cs[c].call("PUT", "/api/v1/hostnames/"+ids[c][i], map[string]string{"ip": publicAddr(c, i, 1)}, 200, nil)
	})
	return create, update, err
}

// parallel runs do(c, i) for i < per on every client c < clients at once
// and times each call.
func parallel(clients, per int, do func(c, i int) error) (latencies, error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		all  []time.Duration
		errs []error
	)
	t0, busy0 := time.Now(), cpuBusy()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds := make([]time.Duration, 0, per)
			for i := range per {
				t := time.Now()
				if err := do(c, i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				ds = append(ds, time.Since(t))
			}
			mu.Lock()
			all = append(all, ds...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return latencies{}, errs[0]
	}
	l := summarise(all, time.Since(t0))
	l.cpu = (cpuBusy() - busy0) / time.Duration(len(all))
	return l, nil
}

// cpuBusy is the CPU time the whole machine has spent not idle, from
// /proc/stat: what the client, the server and PostgreSQL cost together.
func cpuBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	var busy int64
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseInt(f, 10, 64)
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return time.Duration(busy) * time.Second / 100 // USER_HZ
}

// publicAddr is a distinct public IPv4 address per client, call and round.
func publicAddr(c, i, round int) string {
	return fmt.Sprintf("%d.%d.%d.%d", 23+round, c, i>>8&255, i&255)
}
