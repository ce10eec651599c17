package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// knotConf serves the bench zone from dir/zone on port. Signed, Knot signs
// it whole at load (ECDSAP256SHA256, NSEC, as Hostmint's signed zones),
// with a signing thread per CPU so that start-up is not one core's work.
// The signed zone stays in memory: neither the zone file nor a journal is
// written, which would measure the disk rather than the server.
func knotConf(dir string, port, workers int, signed bool) string {
	c := fmt.Sprintf(`server:
    rundir: "%[1]s"
    listen: 127.0.0.1@%[2]d
    udp-workers: %[3]d

database:
    storage: "%[1]s"

log:
  - target: stderr
    any: warning

template:
  - id: default
    storage: "%[1]s"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none

policy:
  - id: bench
    algorithm: ecdsap256sha256
    nsec3: off
    signing-threads: %[4]d

zone:
  - domain: %[5]s
    file: "%[1]s/zone"
`, dir, port, workers, runtime.NumCPU(), zone)
	if signed {
		c += "    dnssec-signing: on\n    dnssec-policy: bench\n"
	}
	return c
}

// measureKnot runs knotd unsigned, then signed, each from a fresh dir
// under dir: start-up, memory and dnsperf.
func measureKnot(dir, queries string, seconds, workers int) (peer, error) {
	p := peer{workers: workers}
	for _, signed := range []bool{false, true} {
		s, err := startKnot(dir, workers, signed)
		if err != nil {
			return p, err
		}
		rss, _ := s.rss()
		if signed {
			err = signedDenial(s.dns)
		}
		var run perf
		if err == nil {
			run, err = dnsperf(s, queries, seconds, signed)
		}
		s.stop()
		os.RemoveAll(s.dir)
		if err != nil {
			return p, err
		}
		if signed {
			p.startSigned, p.rssSigned, p.signed, p.signedCPU = s.started, rss, run.qps, run.cpu
		} else {
			p.start, p.rss, p.qps, p.cpu = s.started, rss, run.qps, run.cpu
		}
	}
	return p, nil
}

func startKnot(dir string, workers int, signed bool) (*server, error) {
	kd, err := os.MkdirTemp(dir, "knot-")
	if err != nil {
		return nil, err
	}
	if err := copyFile(filepath.Join(dir, "zone"), filepath.Join(kd, "zone")); err != nil {
		return nil, err
	}
	port := freePort()
	conf := filepath.Join(kd, "knot.conf")
	if err := os.WriteFile(conf, []byte(knotConf(kd, port, workers, signed)), 0o644); err != nil {
		return nil, err
	}
	return startPeer(exec.Command("knotd", "-c", conf), kd, port, signed)
}
