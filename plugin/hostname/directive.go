package hostname

import "slices"

// Directives returns list with "hostname" inserted just before "file" (or
// at the end if list has no file), the place this plugin takes in the
// chain: after the plugins that observe or rewrite a query, before the
// plugins that answer from other sources.
func Directives(list []string) []string {
	out := slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == "hostname" })
	i := slices.Index(out, "file")
	if i < 0 {
		return append(out, "hostname")
	}
	return slices.Insert(out, i, "hostname")
}
