package xfr

import (
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var log = clog.NewWithPlugin("hostname")

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return promauto.NewCounterVec(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname", Name: name, Help: help}, labels)
}

var (
	xfrOut     = counterVec("transfers_total", "Zone transfers served to secondaries, by kind (axfr, also an IXFR's fallback; ixfr: the difference; current: an IXFR of a zone the secondary has).", "kind")
	notifies   = counterVec("notifies_total", "NOTIFYs sent to secondaries for changed zones, by result (sent, failed).", "result")
	xfrRefused = counterVec("transfers_refused_total", "Zone transfers refused, by reason (no_key: the zone is signed and this node cannot open its key; key: a store TSIG key may not transfer the zone).", "reason")
)

func init() {
	// Every kind of transfer is exported from the start, at 0: a chart or
	// an alert needs no first occurrence.
	for _, k := range []string{"axfr", "ixfr", "current"} {
		xfrOut.WithLabelValues(k)
	}
	for _, r := range []string{"no_key", "key"} {
		xfrRefused.WithLabelValues(r)
	}
	for _, r := range []string{"sent", "failed"} {
		notifies.WithLabelValues(r)
	}
}

// RefusedByKey counts a transfer refused because the store TSIG key that
// signed it may not transfer the zone (the plugin's key gate refuses it).
func RefusedByKey() { xfrRefused.WithLabelValues("key").Inc() }
