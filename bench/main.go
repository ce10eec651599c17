// Command bench measures Hostmint's DNS answers against CoreDNS's own file
// plugin, from the same binary on the same machine: it seeds N names into a
// fresh store and the same names into a zone file, runs each server alone
// under dnsperf (80 % names that exist, 20 % that do not), then the hostname
// plugin again with DNSSEC and the DO bit, and prints the ratios. Everything
// runs on loopback and everything it starts, it stops.
//
//	go run ./bench -names 100000 -seconds 10
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hostmint/hostmint/storage"
)

const zone = "bench.example"

func main() {
	names := flag.Int("names", 100_000, "hostnames to serve")
	seconds := flag.Int("seconds", 10, "length of each dnsperf run")
	bin := flag.String("bin", "bin/coredns", "the built binary (go build -o bin/coredns ./coredns-build)")
	flag.Parse()
	if abs, err := filepath.Abs(*bin); err == nil {
		*bin = abs
	}
	if _, err := exec.LookPath("dnsperf"); err != nil {
		log.Fatal("dnsperf is not installed: run ./scripts/test-deps.sh (or apt-get install dnsperf)")
	}
	dir, err := os.MkdirTemp("", "hostmint-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	t0 := time.Now()
	if err := seed(filepath.Join(dir, "hostmint.db"), *names); err != nil {
		log.Fatal(err)
	}
	writeZone(filepath.Join(dir, "zone"), *names)
	writeQueries(filepath.Join(dir, "queries"), *names)
	key := make([]byte, 32)
	rand.Read(key)
	os.WriteFile(filepath.Join(dir, "cert.key"), []byte(base64.StdEncoding.EncodeToString(key)), 0o600)
	log.Printf("seeded %d names in %s", *names, time.Since(t0).Round(time.Millisecond))

	hostQPS, load := run(*bin, dir, hostnameCorefile(dir), *seconds, false, "")
	fileQPS, _ := run(*bin, dir, fileCorefile(dir), *seconds, false, "")
	signedQPS, _ := run(*bin, dir, hostnameCorefile(dir), *seconds, true, "sign")

	fmt.Printf("\n%-46s %12s %10s\n", "figure ("+strconv.Itoa(*names)+" names, "+strconv.Itoa(*seconds)+" s each)", "value", "target")
	fmt.Printf("%-46s %12.0f %10s\n", "hostname plugin, queries/s", hostQPS, "")
	fmt.Printf("%-46s %12.0f %10s\n", "file plugin, same names, queries/s", fileQPS, "")
	fmt.Printf("%-46s %12.2f %10s\n", "ratio hostname / file", hostQPS/fileQPS, ">= 0.9")
	fmt.Printf("%-46s %12.0f %10s\n", "hostname plugin, signed zone, DO bit, q/s", signedQPS, "")
	fmt.Printf("%-46s %12.2f %10s\n", "ratio signed / unsigned", signedQPS/hostQPS, ">= 0.7")
	fmt.Printf("%-46s %12s %10s\n", "start-up: index loaded (SQLite)", load.Round(time.Millisecond), "< 10 s at 1 M")
}

// seed writes an account, the zone as a pool domain and n live hostnames
// h0000000 ... straight into a fresh store.
func seed(path string, n int) error {
	ctx := context.Background()
	s, err := storage.Open(ctx, storage.SQLite, path)
	if err != nil {
		return err
	}
	defer s.Close()
	now := time.Now().UnixMilli()
	_, err = s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.InsertAccount(ctx, &storage.Account{ID: "acc_bench", Name: "bench", Plan: "business", Billing: true, CreatedAt: now}); err != nil {
			return err
		}
		return tx.InsertDomain(ctx, &storage.Domain{ID: "dom_bench", Name: zone, Status: storage.DomainActive, CreatedAt: now})
	})
	if err != nil {
		return err
	}
	const batch = 5000
	for start := 0; start < n; start += batch {
		hs := make([]storage.Hostname, 0, batch)
		for i := start; i < min(n, start+batch); i++ {
			ip := addr(i)
			label := fmt.Sprintf("h%07d", i)
			hs = append(hs, storage.Hostname{ID: "h_" + label, AccountID: "acc_bench", DomainID: "dom_bench", Label: label,
				Name: label + "." + zone, IP: ip, Addrs: ip, Class: "public", Certificate: "self",
				Status: storage.StatusLive, CreatedAt: now, UpdatedAt: now})
		}
		if _, err := s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error { return tx.InsertHostnames(ctx, hs) }); err != nil {
			return err
		}
	}
	return nil
}

func addr(i int) string { return fmt.Sprintf("11.%d.%d.%d", i>>16&255, i>>8&255, i&255) }

func writeZone(path string, n int) {
	var b strings.Builder
	fmt.Fprintf(&b, "$ORIGIN %s.\n@ 3600 IN SOA ns1.%s. hostmaster.%s. 1 3600 600 1209600 60\n@ 3600 IN NS ns1.%s.\nns1 3600 IN A 127.0.0.1\n", zone, zone, zone, zone)
	for i := range n {
		fmt.Fprintf(&b, "h%07d 60 IN A %s\n", i, addr(i))
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeQueries: 80 % names that exist, 20 % that do not, spread over all.
func writeQueries(path string, n int) {
	var b strings.Builder
	for i := range 100_000 {
		j := (i * 7919) % n
		if i%5 == 4 {
			fmt.Fprintf(&b, "m%07d.%s A\n", j, zone)
		} else {
			fmt.Fprintf(&b, "h%07d.%s A\n", j, zone)
		}
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
}

var dnsPort, apiPort = freePort(), freePort()

func hostnameCorefile(dir string) string {
	return fmt.Sprintf(`%s:%d {
    bind 127.0.0.1
    hostname {
        storage sqlite %s/hostmint.db
        api 127.0.0.1:%d
        admin_token_file %s/admin.token
        cert_encryption_key_file %s/cert.key
        nameserver ns1.%s 127.0.0.1:%d
    }
}
`, zone, dnsPort, dir, apiPort, dir, dir, zone, dnsPort)
}

func fileCorefile(dir string) string {
	return fmt.Sprintf("%s:%d {\n    bind 127.0.0.1\n    file %s/zone\n}\n", zone, dnsPort, dir)
}

// run starts the binary on corefile, waits until it answers, optionally
// signs the zone, runs dnsperf and stops the server. It returns the
// queries per second and the time until the server answered.
func run(bin, dir, corefile string, seconds int, do bool, prep string) (float64, time.Duration) {
	path := filepath.Join(dir, "Corefile")
	os.WriteFile(path, []byte(corefile), 0o600)
	cmd := exec.Command(bin, "-conf", path, "-quiet")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	t0 := time.Now()
	probe := fmt.Sprintf("h0000000.%s", zone)
	for !answers(probe) {
		if time.Since(t0) > 60*time.Second {
			log.Fatal("the server did not answer within 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	load := time.Since(t0)
	if prep == "sign" {
		sign(dir)
	}
	args := []string{"-s", "127.0.0.1", "-p", strconv.Itoa(dnsPort), "-d", filepath.Join(dir, "queries"), "-c", "4", "-q", "200"}
	if do {
		args = append(args, "-D")
	}
	// One pass through the queries first: the steady state is what counts
	// (signatures made and cached, caches warm), not the first sight of a name.
	if out, err := exec.Command("dnsperf", append(args, "-n", "1")...).CombinedOutput(); err != nil {
		log.Fatalf("dnsperf: %v\n%s", err, out)
	}
	args = append(args, "-l", strconv.Itoa(seconds))
	out, err := exec.Command("dnsperf", args...).CombinedOutput()
	if err != nil {
		log.Fatalf("dnsperf: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Queries per second:\s+([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		log.Fatalf("dnsperf printed no rate:\n%s", out)
	}
	qps, _ := strconv.ParseFloat(string(m[1]), 64)
	return qps, load
}

func answers(name string) bool {
	c, err := net.DialTimeout("udp", fmt.Sprintf("127.0.0.1:%d", dnsPort), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	out, err := exec.Command("dig", "@127.0.0.1", "-p", strconv.Itoa(dnsPort), "+short", "+time=1", "+tries=1", name, "A").Output()
	return err == nil && strings.TrimSpace(string(out)) != ""
}

// sign enables DNSSEC on the zone through the admin API.
func sign(dir string) {
	tok, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequest("PATCH", fmt.Sprintf("http://127.0.0.1:%d/api/admin/domains/dom_bench", apiPort), strings.NewReader(`{"dnssec":true}`))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		log.Fatalf("enabling DNSSEC: %v %v", err, resp)
	}
	resp.Body.Close()
	time.Sleep(500 * time.Millisecond) // the zone set reloads through the feed
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
