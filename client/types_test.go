package client

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/adminapi"
)

// Every field of the client's types is a property of the schema the
// server documents for that body: a field renamed or dropped on one side
// fails here.
func TestTypesMatchSchemas(t *testing.T) {
	schemas := adminapi.Schemas()
	for name, v := range map[string]any{
		"Account": Account{}, "AccountInput": AccountInput{}, "AccountList": AccountList{}, "Closed": Closed{},
		"Key": Key{}, "KeyInput": KeyInput{}, "KeyList": KeyList{}, "Scope": Scope{},
		"TSIGKey": TSIGKey{}, "TSIGKeyInput": TSIGKeyInput{}, "TSIGKeyList": TSIGKeyList{},
		"Domain": Domain{}, "DomainInput": DomainInput{}, "DomainList": DomainList{},
		"OwnedHostname": Hostname{}, "OwnedHostnameList": HostnameList{},
		"AuditEntry": AuditEntry{}, "AuditList": AuditList{},
	} {
		s, ok := schemas[name]
		if !ok {
			t.Errorf("no schema %s", name)
			continue
		}
		props := s["properties"].(map[string]any)
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			if _, ok := props[tag]; !ok {
				t.Errorf("%s.%s (%q) is not a property of schema %s", typ.Name(), typ.Field(i).Name, tag, name)
			}
		}
	}
}
