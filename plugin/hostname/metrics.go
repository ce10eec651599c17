package hostname

import (
	"github.com/coredns/coredns/plugin"
	"github.com/hostmint/hostmint/app"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Every metric is documented in README.md (Metrics); deploy/grafana charts them.

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return promauto.NewCounterVec(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname", Name: name, Help: help}, labels)
}

func gaugeFunc(name, help string, f func() float64) prometheus.GaugeFunc {
	return promauto.NewGaugeFunc(prometheus.GaugeOpts{Namespace: plugin.Namespace, Subsystem: "hostname", Name: name, Help: help}, f)
}

var (
	tsigRefused = counterVec("tsig_refused_total", "Signed messages answered NOTAUTH, by reason (key: unknown, revoked, expired, another algorithm or a closed team's; time: outside the window, at most 300 s; signature: a bad MAC).", "reason")
	updates     = counterVec("updates_total", "DNS UPDATE messages answered (dynamic_update), by rcode (NOERROR: applied; REFUSED: a rule or the key's reach refused it; NOTAUTH: a TSIG or zone error; YXDOMAIN, NXRRSET, ...: a prerequisite failed).", "rcode")
	_           = gaugeFunc("index_hostnames", "Hostnames in the in-memory index of this node.",
		func() float64 { return float64(app.IndexSize()) })
)

func init() {
	// Every reason of a TSIG refusal is exported from the start, at 0:
	// a chart or an alert needs no first occurrence.
	for _, r := range []string{"key", "time", "signature"} {
		tsigRefused.WithLabelValues(r)
	}
}

// countUpdate counts one UPDATE message answered.
func countUpdate(rcode int) { updates.WithLabelValues(dns.RcodeToString[rcode]).Inc() }
