// Package coreinternals reads what the hostname plugin needs of CoreDNS
// that CoreDNS does not export, all of it here.
package coreinternals

import (
	"reflect"
	"unsafe"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
)

// What is read: a server's blocks by zone key and the opcodes it accepts
// (fast_udp answers beside the server and must route and accept as it
// does), the tsig plugin's require option (fast_udp need not see every
// query when nothing is required), and the writer inside CoreDNS's
// per-plugin wrapper (an answer is sent as bytes only where nothing
// between the server and this plugin needs the message). Each reads
// by reflection and answers "cannot tell" on any surprise, which turns
// fast_udp off (the README says when) or sends the message as a message;
// internals_test.go fails on a CoreDNS whose internals moved.

// ServerBlocks are srv's blocks by zone key (the first config of each: the
// block the server gives a key's names to); false when they cannot be read.
func ServerBlocks(srv *dnsserver.Server) (map[string]*dnsserver.Config, bool) {
	v := reflect.ValueOf(srv).Elem().FieldByName("zones")
	if !v.IsValid() || v.Kind() != reflect.Map || v.Type().Key().Kind() != reflect.String {
		return nil, false
	}
	blocks := map[string]*dnsserver.Config{}
	for it := v.MapRange(); it.Next(); {
		cs := it.Value()
		if cs.Kind() != reflect.Slice || cs.Len() == 0 || cs.Index(0).Kind() != reflect.Pointer ||
			cs.Index(0).Type().Elem() != reflect.TypeOf(dnsserver.Config{}) {
			return nil, false
		}
		blocks[it.Key().String()] = (*dnsserver.Config)(unsafe.Pointer(cs.Index(0).Pointer()))
	}
	return blocks, true
}

// ServerOpcodes are the opcodes beyond QUERY and NOTIFY that srv accepts
// (those its blocks allowed, UPDATE for dynamic_update), read by
// reflection; false when they cannot be read.
func ServerOpcodes(srv *dnsserver.Server) (map[int]bool, bool) {
	v := reflect.ValueOf(srv).Elem().FieldByName("allowedOpcodes")
	if !v.IsValid() || v.Kind() != reflect.Map || v.Type().Key().Kind() != reflect.Int {
		return nil, false
	}
	ops := map[int]bool{}
	for _, k := range v.MapKeys() {
		ops[int(k.Int())] = true
	}
	return ops, true
}

// TSIGRequires reports whether a tsig plugin requires a signature on any
// query or opcode (its require option): then it refuses unsigned queries.
// Any surprise counts as requiring.
func TSIGRequires(ph plugin.Handler) bool {
	v := reflect.ValueOf(ph)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return true
	}
	for _, f := range []string{"allTypes", "allOpcodes"} {
		if b := v.FieldByName(f); !b.IsValid() || b.Kind() != reflect.Bool || b.Bool() {
			return true
		}
	}
	for _, f := range []string{"types", "opcodes"} {
		if m := v.FieldByName(f); !m.IsValid() || m.Kind() != reflect.Map || m.Len() > 0 {
			return true
		}
	}
	return false
}

// UnwrapPluginWriter is the writer inside CoreDNS's per-plugin wrapper (an
// unexported type, read by reflection: its one field is the writer it
// wraps), false for any other writer.
func UnwrapPluginWriter(w dns.ResponseWriter) (dns.ResponseWriter, bool) {
	t := reflect.TypeOf(w)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil, false
	}
	if e := t.Elem(); e.Name() != "pluginWriter" || e.PkgPath() != "github.com/coredns/coredns/plugin" ||
		e.NumField() == 0 || e.Field(0).Name != "ResponseWriter" {
		return nil, false
	}
	inner, ok := reflect.ValueOf(w).Elem().Field(0).Interface().(dns.ResponseWriter)
	return inner, ok && inner != nil
}
