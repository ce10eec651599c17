package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docFiles are the project's documents: the README, docs/ and the
// plugin's README.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no documents in docs/: %v", err)
	}
	return append([]string{"../README.md", "../plugin/hostname/README.md"}, files...)
}

var (
	mdLink    = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	mdFence   = regexp.MustCompile("(?ms)^(```|~~~).*?^(```|~~~)")
)

// slug is a heading's anchor as GitHub makes it.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(strings.ReplaceAll(h, "`", "")))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Every link between the documents works: the file it names exists, and
// the heading its #anchor names is in it.
func TestDocumentLinks(t *testing.T) {
	t.Parallel()
	anchors := map[string]map[string]bool{} // clean path -> anchors
	read := func(path string) (string, bool) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", false
		}
		text := string(b)
		if anchors[path] == nil && strings.HasSuffix(path, ".md") {
			anchors[path] = map[string]bool{}
			for _, m := range mdHeading.FindAllStringSubmatch(mdFence.ReplaceAllString(text, ""), -1) {
				anchors[path][slug(m[1])] = true
			}
		}
		return text, true
	}
	links := 0
	for _, doc := range docFiles(t) {
		text, ok := read(doc)
		if !ok {
			t.Fatalf("%s is missing", doc)
		}
		for _, m := range mdLink.FindAllStringSubmatch(mdFence.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "/") {
				continue // outside the repository, or a server route
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			file := doc
			if path != "" {
				file = filepath.Clean(filepath.Join(filepath.Dir(doc), path))
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s links to %s: no such file", doc, target)
				continue
			}
			if anchor == "" {
				continue
			}
			if _, ok := read(file); !ok || !anchors[file][anchor] {
				t.Errorf("%s links to %s: no heading #%s in %s", doc, target, anchor, file)
			}
		}
	}
	if links < 20 {
		t.Errorf("only %d links between the documents found: the pattern no longer matches", links)
	}
}
