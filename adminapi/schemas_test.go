package adminapi

import (
	"slices"
	"testing"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/records"
)

// The record schemas take their types and fields from records, the one
// home of record types: a type or field added there shows here or fails.
func TestRecordSchemas(t *testing.T) {
	t.Parallel()
	s := (&Server{}).schemas()
	in := s["RecordInput"]["properties"].(map[string]any)
	for _, typ := range records.Types {
		for _, f := range records.Fields(typ) {
			if _, ok := in[f]; !ok {
				t.Errorf("RecordInput has no property %s (a field of %s)", f, typ)
			}
		}
	}
	for name, sch := range map[string]schema{"RecordInput": s["RecordInput"], "Record": s["Record"]} {
		typ := sch["properties"].(map[string]any)["type"].(schema)
		if got := typ["enum"].([]string); !slices.Equal(got, records.Types) {
			t.Errorf("%s.type enum = %v, want records.Types %v", name, got, records.Types)
		}
	}
}

// The Error schema enumerates exactly the codes the service answers with.
func TestErrorCodes(t *testing.T) {
	t.Parallel()
	code := (&Server{}).schemas()["Error"]["properties"].(map[string]any)["code"].(schema)
	if got := code["enum"].([]string); !slices.Equal(got, apierror.Codes) {
		t.Errorf("Error.code enum %v, want apierror.Codes %v", got, apierror.Codes)
	}
}
