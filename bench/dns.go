package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	qpsLine  = regexp.MustCompile(`Queries per second:\s+([0-9.]+)`)
	doneLine = regexp.MustCompile(`Queries completed:\s+([0-9]+)`)
)

// perf is one dnsperf run against a server: the rate, and the server's
// own CPU time per answer. The rate depends on what else the machine is
// doing (dnsperf shares it); the CPU an answer costs the server hardly
// does, which makes it the figure to compare builds and servers by.
type perf struct {
	qps float64
	cpu time.Duration // server CPU (user + system) per answered query
}

// dnsperf sends the query file to s for seconds, with the DO bit when do
// is set, after one untimed pass through it: the steady state is what
// counts (signatures made and cached), not the first sight of a name.
func dnsperf(s *server, queries string, seconds int, do bool) (perf, error) {
	args := []string{"-s", "127.0.0.1", "-p", strconv.Itoa(s.dns), "-d", queries, "-c", "4", "-q", "200"}
	if do {
		args = append(args, "-D")
	}
	if out, err := exec.Command("dnsperf", append(args, "-n", "1")...).CombinedOutput(); err != nil {
		return perf{}, fmt.Errorf("dnsperf: %v\n%s", err, out)
	}
	before := s.cpu()
	out, err := exec.Command("dnsperf", append(args, "-l", strconv.Itoa(seconds))...).CombinedOutput()
	spent := s.cpu() - before
	if err != nil {
		return perf{}, fmt.Errorf("dnsperf: %v\n%s", err, out)
	}
	m, done := qpsLine.FindSubmatch(out), doneLine.FindSubmatch(out)
	if m == nil || done == nil {
		return perf{}, fmt.Errorf("dnsperf printed no rate:\n%s", out)
	}
	var p perf
	p.qps, err = strconv.ParseFloat(string(m[1]), 64)
	if n, _ := strconv.Atoi(string(done[1])); n > 0 {
		p.cpu = spent / time.Duration(n)
	}
	return p, err
}

// cpu is the CPU time (user and system, all threads) the server's process
// has used so far, from /proc/PID/stat.
func (s *server) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}
