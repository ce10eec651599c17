package profile

import "testing"

func TestQuestions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p                                                            Profile
		idle, teams, both, named, gates, retires, servesP1, servesP2 bool
	}{
		{P1, true, false, false, false, true, true, true, false},
		{P2, false, true, true, true, false, false, false, true},
	} {
		got := []bool{tc.p.IdleExpiry(), tc.p.Teams(), tc.p.BothFamilies(), tc.p.NamedPlans(), tc.p.PlanGates(),
			tc.p.RetiresLabels(), tc.p.Serves(P1), tc.p.Serves(P2)}
		want := []bool{tc.idle, tc.teams, tc.both, tc.named, tc.gates, tc.retires, tc.servesP1, tc.servesP2}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("profile %s: answer %d is %v, want %v", tc.p, i, got[i], want[i])
			}
		}
		if !tc.p.Serves(Both) {
			t.Errorf("profile %s does not serve what both profiles have", tc.p)
		}
	}
	for _, s := range []string{"1", "2"} {
		if p, err := Parse(s); err != nil || p.String() != s {
			t.Errorf("Parse(%q) = %v, %v", s, p, err)
		}
	}
	for _, s := range []string{"", "0", "3", "one"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}
