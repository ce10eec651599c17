package targets

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNameRefused is a target, or a CNAME its answer leads through, that
// the operator's policy does not let a hostname follow.
var ErrNameRefused = errors.New("targets: a name this service does not follow")

// SpecialUse are the suffixes no target may be under unless the operator
// allows them: the special-use and private-use names through which a
// caller could read what the operator's resolvers see of internal networks
// (split horizon). test and example stay open: documentation and tests use
// them, and no network depends on them.
var SpecialUse = []string{
	"internal", "local", "localhost", "home.arpa", "invalid", "onion", "alt",
	"lan", "home", "corp", "intranet", "private",
}

// Names decides which names a target may follow: never a single label;
// never one under a Deny suffix; with Allow set, only those under an Allow
// suffix (an explicit allow lifts SpecialUse); without it, any name not
// under SpecialUse. Suffixes are lowercase, without dots at either end.
type Names struct {
	Allow, Deny []string
}

// Check refuses name (lowercase, no trailing dot) if the policy does.
func (p *Names) Check(name string) error {
	name = strings.TrimSuffix(name, ".")
	if !strings.Contains(name, ".") {
		return fmt.Errorf("%w: %q is a single label", ErrNameRefused, name)
	}
	var allow, deny []string
	if p != nil {
		allow, deny = p.Allow, p.Deny
	}
	if s := under(name, deny); s != "" {
		return fmt.Errorf("%w: %q is under .%s (target_names deny)", ErrNameRefused, name, s)
	}
	if len(allow) > 0 {
		if under(name, allow) == "" {
			return fmt.Errorf("%w: %q is under none of the allowed suffixes (target_names allow)", ErrNameRefused, name)
		}
		return nil
	}
	if s := under(name, SpecialUse); s != "" {
		return fmt.Errorf("%w: %q is under .%s, a special-use name", ErrNameRefused, name, s)
	}
	return nil
}

// under is the first of suffixes that name is, or is under ("" for none).
func under(name string, suffixes []string) string {
	for _, s := range suffixes {
		if name == s || strings.HasSuffix(name, "."+s) {
			return s
		}
	}
	return ""
}
