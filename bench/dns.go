package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
)

var qpsLine = regexp.MustCompile(`Queries per second:\s+([0-9.]+)`)

// dnsperf sends the query file to port for seconds, with the DO bit when
// do is set, after one untimed pass through it: the steady state is what
// counts (signatures made and cached), not the first sight of a name.
func dnsperf(port int, queries string, seconds int, do bool) (float64, error) {
	args := []string{"-s", "127.0.0.1", "-p", strconv.Itoa(port), "-d", queries, "-c", "4", "-q", "200"}
	if do {
		args = append(args, "-D")
	}
	if out, err := exec.Command("dnsperf", append(args, "-n", "1")...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("dnsperf: %v\n%s", err, out)
	}
	out, err := exec.Command("dnsperf", append(args, "-l", strconv.Itoa(seconds))...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("dnsperf: %v\n%s", err, out)
	}
	m := qpsLine.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("dnsperf printed no rate:\n%s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}
