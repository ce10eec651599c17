package xfr

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/miekg/dns"
)

// A thousand zones changed at once are told to a secondary in one round,
// notifyParallel NOTIFYs in flight (a secondary on loopback answering).
func BenchmarkNotifyRound(b *testing.B) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	defer srv.Shutdown()
	c := new(dns.Client)
	n := &notifier{send: func(zone string) error {
		m := new(dns.Msg)
		m.SetNotify(zone)
		_, _, err := c.Exchange(m, pc.LocalAddr().String())
		return err
	}}
	zones := map[string]bool{}
	for i := range 1000 {
		zones[fmt.Sprintf("t%04d.example.net.", i)] = true
	}
	for b.Loop() {
		n.round(context.Background(), zones)
	}
}
