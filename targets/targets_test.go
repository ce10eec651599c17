package targets

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// silent is a loopback UDP resolver that reads questions and never answers.
func silent(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return pc.LocalAddr().String()
}

// resolverOf is a loopback UDP resolver that answers with answer.
func resolverOf(t *testing.T, answer func(*dns.Msg) *dns.Msg) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		w.WriteMsg(answer(r))
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// answering is a loopback resolver that answers every A question with
// 198.51.100.7 and every AAAA question with nothing.
func answering(t *testing.T) string {
	return resolverOf(t, func(r *dns.Msg) *dns.Msg {
		m := new(dns.Msg)
		m.SetReply(r)
		if q := r.Question[0]; q.Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
				A: net.IPv4(198, 51, 100, 7)})
		}
		return m
	})
}

// A resolution gives up when its context ends, cancelled or past its
// deadline, long before the resolver's own timeout.
func TestResolveEndsWithContext(t *testing.T) {
	tests := []struct {
		name    string
		server  func(*testing.T) string
		ctx     func() (context.Context, context.CancelFunc)
		wantErr error
		within  time.Duration
	}{
		{"answers", answering, func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, nil, time.Second},
		{"cancelled", silent, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, ErrUnreachable, time.Second},
		{"deadline", silent, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		}, ErrUnreachable, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &Resolver{Servers: []string{tc.server(t)}, Timeout: 10 * time.Second}
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			a, err := r.Resolve(ctx, "app.example.net")
			if took := time.Since(start); took > tc.within {
				t.Errorf("Resolve took %v, want under %v", took, tc.within)
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Resolve: %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && !slices.Equal(a.Addrs, []netip.Addr{netip.MustParseAddr("198.51.100.7")}) {
				t.Errorf("Resolve: %v", a.Addrs)
			}
		})
	}
}
