package answer

import (
	"slices"
	"sync"

	"github.com/coredns/coredns/plugin"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The kinds of zone an answer is given from besides the index's
// (index.KindPool, index.KindTeam): outside is a name in no served zone.
const (
	KindOutside = "outside"
	KindCatalog = "catalog"
)

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return promauto.NewCounterVec(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname", Name: name, Help: help}, labels)
}

var (
	answersTotal = counterVec("answers_total",
		"Answers given by the hostname plugin, by rcode, query type and kind of zone (pool, team, outside).", "rcode", "type", "kind")
	rrlVec = counterVec("rrl_responses_total", "Answers over UDP held back by response_rate_limit, by action (dropped; slipped: sent truncated and empty).", "action")
)

// rrlVec's counters by verdict, made once: they are counted on the answer
// path.
var (
	rrlDropped = rrlVec.WithLabelValues("dropped")
	rrlSlipped = rrlVec.WithLabelValues("slipped")
)

// answerTypes are the query types the answers metric names; every other
// type is "other", so that random types cannot grow the number of series
// without bound.
var answerTypes = [...]uint16{dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeCAA, dns.TypeMX, dns.TypeSRV, dns.TypeTLSA,
	dns.TypeSSHFP, dns.TypeHTTPS, dns.TypeSVCB, dns.TypeNS, dns.TypeSOA, dns.TypeDNSKEY, dns.TypeDS, dns.TypeNSEC,
	dns.TypeCNAME, dns.TypeANY, dns.TypePTR}

var (
	answerKinds = [...]string{index.KindPool, index.KindTeam, KindOutside, KindCatalog}
	typeIndex   = map[uint16]int{}
)

func init() {
	for i, t := range answerTypes {
		typeIndex[t] = i
	}
}

// answerCells hold the counter of each label set, made on first use, so
// that counting an answer is an index, not the hashing of three label
// values (rcodes past 15 take the slow path).
var answerCells [len(answerKinds)][16][len(answerTypes) + 1]struct {
	once sync.Once
	c    prometheus.Counter
}

// Count counts one answer.
func Count(rcode int, qtype uint16, kind string) {
	ti, ok := typeIndex[qtype]
	if !ok {
		ti = len(answerTypes)
	}
	ki := slices.Index(answerKinds[:], kind)
	if ki < 0 || rcode < 0 || rcode >= 16 {
		answersTotal.WithLabelValues(dns.RcodeToString[rcode], typeLabel(qtype), kind).Inc()
		return
	}
	cell := &answerCells[ki][rcode][ti]
	cell.once.Do(func() { cell.c = answersTotal.WithLabelValues(dns.RcodeToString[rcode], typeLabel(qtype), kind) })
	cell.c.Inc()
}

// typeLabel names qtype for the answers metric.
func typeLabel(qtype uint16) string {
	if _, ok := typeIndex[qtype]; ok {
		return dns.TypeToString[qtype]
	}
	return "other"
}
