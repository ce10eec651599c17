package main

import (
	"fmt"
	"log"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/miekg/dns"

	"github.com/hostmint/hostmint/storage"
)

// updateRun is what DNS UPDATE (RFC 2136, TSIG-signed) costs: mints (an A
// record at a new label) and repoints (the A set deleted and another A
// added in one message).
type updateRun struct{ create, repoint latencies }

// updateClient sends one account's UPDATEs, signed with its own TSIG key,
// over one TCP connection: as the API's clients keep theirs alive, so that
// both measure the call and not the handshake.
type updateClient struct {
	key  string // the TSIG key's name as signed: key_name + "."
	dns  *dns.Client
	conn net.Conn
}

// updateBench runs clients callers on s, each with its own account and
// TSIG key, that first mint ops/clients hostnames each and then repoint
// each of them once, all at once, as apiBench does through the API.
func updateBench(s *server, clients, ops int) (run updateRun, err error) {
	tok, err := s.adminToken()
	if err != nil {
		return run, err
	}
	admin := newClient(s, tok)
	cs := make([]*updateClient, clients)
	for i := range cs {
		if cs[i], err = newUpdateClient(s, admin, fmt.Sprintf("bench-update-%d", i)); err != nil {
			return run, err
		}
	}
	// Connect only once every key is made: each new key reloads the
	// server (its create answer waits for that), and a connection made
	// before a reload may be closed by it.
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.dns))
	for _, u := range cs {
		if u.conn, err = net.Dial("tcp", addr); err != nil {
			return run, err
		}
		defer u.conn.Close()
	}
	return mintAndRepoint(cs, ops/clients, "up")
}

// mintAndRepoint times the clients cs minting per hostnames each by UPDATE
// (an A at a new label <prefix><client>-<i>), all at once, and then
// repointing each of them once (the A set deleted and another added in one
// message).
func mintAndRepoint(cs []*updateClient, per int, prefix string) (run updateRun, err error) {
	a := func(c, i, round int) dns.RR {
		return &dns.A{Hdr: dns.RR_Header{Name: fmt.Sprintf("%s%02d-%05d.%s.", prefix, c, i, zone), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
			A: net.ParseIP(publicAddr(c, i, round))}
	}
	run.create, err = parallel(len(cs), per, func(c, i int) error {
		m := new(dns.Msg)
		m.SetUpdate(zone + ".")
		m.Insert([]dns.RR{a(c, i, 2)})
		return cs[c].send(m)
	})
	if err != nil {
		return run, err
	}
	run.repoint, err = parallel(len(cs), per, func(c, i int) error {
		m := new(dns.Msg)
		m.SetUpdate(zone + ".")
		m.RemoveRRset([]dns.RR{a(c, i, 2)})
		m.Insert([]dns.RR{a(c, i, 3)})
		return cs[c].send(m)
	})
	return run, err
}

// newUpdateClient makes an account (as newAccount does) and a TSIG key of
// its own through the admin API.
func newUpdateClient(s *server, admin *apiClient, name string) (*updateClient, error) {
	id, _, err := newAccountID(s, admin, name)
	if err != nil {
		return nil, err
	}
	return newTSIGClient(admin, id)
}

// newTSIGClient makes a TSIG key for the account id through the admin API,
// and a client that signs with it.
func newTSIGClient(admin *apiClient, id string) (*updateClient, error) {
	var k struct {
		KeyName string `json:"key_name"`
		Secret  string
	}
	if err := admin.call("POST", "/api/admin/accounts/"+id+"/tsig-keys", map[string]any{}, 201, &k); err != nil {
		return nil, err
	}
	key := k.KeyName + "."
	return &updateClient{key: key, dns: &dns.Client{Net: "tcp", Timeout: 10 * time.Second, TsigSecret: map[string]string{key: k.Secret}}}, nil
}

// send signs m and wants NOERROR, with an answer signed by the same key.
// Each message gets a dns.Conn of its own over the connection: a dns.Conn
// keeps the last MAC and signs the next request over it (as the messages
// of one zone transfer are), which the server rightly refuses.
func (u *updateClient) send(m *dns.Msg) error {
	m.SetTsig(u.key, dns.HmacSHA256, 300, time.Now().Unix())
	r, _, err := u.dns.ExchangeWithConn(m, &dns.Conn{Conn: u.conn})
	if err != nil {
		return fmt.Errorf("UPDATE %s: %w", m.Ns[len(m.Ns)-1].Header().Name, err)
	}
	if r.Rcode != dns.RcodeSuccess {
		return fmt.Errorf("UPDATE %s: %s", m.Ns[len(m.Ns)-1].Header().Name, dns.RcodeToString[r.Rcode])
	}
	return nil
}

// measureUpdateSQLite: DNS UPDATE on SQLite, on a store of its own seeded
// with the same names (measureDNS's has been signed by then, and the
// PostgreSQL figures are of an unsigned zone).
func measureUpdateSQLite(r *result, bin, dir string, clients, ops int) error {
	db := filepath.Join(dir, "update.db")
	if err := seed(storage.SQLite, db, r.names); err != nil {
		return err
	}
	s, err := start(bin, dir, func(d, a int, dir string) string { return hostnameCorefile(d, a, dir, "sqlite", db) })
	if err != nil {
		return err
	}
	defer s.stop()
	if r.updateSQLite, err = updateBench(s, clients, ops); err != nil {
		return err
	}
	log.Printf("%d names: DNS UPDATE on SQLite done", r.names)
	return nil
}
