package chain

import (
	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// made counts the signatures made for transfers (not found in the cache).
var made = promauto.NewCounter(prometheus.CounterOpts{
	Namespace: plugin.Namespace,
	Subsystem: "hostname",
	Name:      "transfer_signatures_total",
	Help:      "Counter of RRSIGs made for zone transfers of signed zones (signatures found again are not counted).",
})
