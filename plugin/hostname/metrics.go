package hostname

import (
	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	answersTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "hostname",
		Name:      "answers_total",
		Help:      "Answers given by the hostname plugin, by rcode.",
	}, []string{"rcode"})

	signaturesTotal = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "hostname",
		Name:      "signatures_total",
		Help:      "RRSIGs made (answers from the signature cache make none).",
	})

	indexSize = promauto.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "hostname",
		Name:      "index_hostnames",
		Help:      "Hostnames in the in-memory index of this node.",
	}, func() float64 { return float64(currentIndexSize()) })
)
