package dashboard

import (
	"slices"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/records"
)

// The record forms are records' types, in its order, each with exactly
// its fields (params.* members making up SVCB's params): records is the
// one home of record types.
func TestRecordFormsFollowRecords(t *testing.T) {
	var types []string
	for _, rt := range recordTypes {
		types = append(types, rt.Type)
		var fields []string
		for _, f := range rt.Fields {
			name, _, _ := strings.Cut(f.Name, ".")
			if !slices.Contains(fields, name) {
				fields = append(fields, name)
			}
		}
		want := records.Fields(rt.Type)
		slices.Sort(fields)
		slices.Sort(want)
		if !slices.Equal(fields, want) {
			t.Errorf("the %s form has fields %v, records has %v", rt.Type, fields, want)
		}
	}
	if !slices.Equal(types, records.Types) {
		t.Errorf("record forms %v, records.Types %v", types, records.Types)
	}
}
