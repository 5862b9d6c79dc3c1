// Package golden is what the golden-file tests of wire formats share (the server's SSE and
// WebSocket streams, an application's own streams): a minimal txtar archive of named sections,
// a normaliser that turns generated IDs and timestamps into stable placeholders, and Check,
// which compares sections with a file or rewrites it under the test binary's -update flag.
// golang.org/x/tools/txtar is not a dependency of the module, and this is all the tests need.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Update is the -update flag of a test binary that imports the package: with it, Check rewrites
// the golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/ with what the tests read")

// Section is one named part of an archive: one stream read by a test.
type Section struct {
	Name string
	Body string
}

// Archive is a txtar archive: a comment, then sections each headed "-- name --".
type Archive struct {
	Comment  string
	Sections []Section
}

// Format writes the archive.
func (a Archive) Format() []byte {
	var buf bytes.Buffer
	buf.WriteString(a.Comment)
	if a.Comment != "" && !strings.HasSuffix(a.Comment, "\n") {
		buf.WriteByte('\n')
	}
	for _, s := range a.Sections {
		fmt.Fprintf(&buf, "-- %s --\n", s.Name)
		buf.WriteString(s.Body)
		if s.Body != "" && !strings.HasSuffix(s.Body, "\n") {
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes()
}

// Parse reads what Format wrote.
func Parse(data []byte) Archive {
	var a Archive
	var cur *Section
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.Body = body.String()
			a.Sections = append(a.Sections, *cur)
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) >= 6 {
			flush()
			cur = &Section{Name: strings.TrimSpace(t[3 : len(t)-3])}
			continue
		}
		if cur == nil {
			a.Comment += line
		} else {
			body.WriteString(line)
		}
	}
	flush()
	return a
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	// tokenRE catches the other generated IDs: prefixed words with a random tail (tool calls and
	// the like).
	tokenRE = regexp.MustCompile(`\b(call|toolu|msg|run|chatcmpl)_[0-9A-Za-z]{6,}\b`)
	// hexRE catches message IDs (32 hex digits), task IDs (16, with a clock in them) and
	// checkpoint IDs (16, a dash and 8 random ones).
	hexRE = regexp.MustCompile(`\b[0-9a-f]{16}(-[0-9a-f]{8}|[0-9a-f]{16})?\b`)
)

// Normaliser replaces generated IDs by <id1>, <id2>, ... in order of first appearance (the same
// ID keeps its placeholder across calls of one Normaliser) and timestamps by <time>. The zero
// value is ready to use.
type Normaliser struct {
	ids map[string]string
}

// Apply normalises s.
func (n *Normaliser) Apply(s string) string {
	if n.ids == nil {
		n.ids = map[string]string{}
	}
	repl := func(m string) string {
		if p, ok := n.ids[m]; ok {
			return p
		}
		p := fmt.Sprintf("<id%d>", len(n.ids)+1)
		n.ids[m] = p
		return p
	}
	s = timeRE.ReplaceAllString(s, "<time>")
	s = uuidRE.ReplaceAllStringFunc(s, repl)
	s = tokenRE.ReplaceAllStringFunc(s, repl)
	return hexRE.ReplaceAllStringFunc(s, repl)
}

// Check compares sections with the archive at path (testdata/golden/<file> by convention), or
// rewrites it under -update. Each section that differs, is missing or is no longer produced is
// an error naming it; regenerate names the command that rewrites the file.
func Check(t testing.TB, path, comment, regenerate string, sections []Section) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, Archive{Comment: comment, Sections: sections}.Format(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s to write it)", err, regenerate)
	}
	want := Parse(data)
	if want.Comment != comment {
		t.Errorf("%s: its comment differs (run %s)", path, regenerate)
	}
	wantBy := map[string]string{}
	for _, s := range want.Sections {
		wantBy[s.Name] = s.Body
	}
	for _, s := range sections {
		w, ok := wantBy[s.Name]
		if !ok {
			t.Errorf("%s: no section %q (run %s to add it)", path, s.Name, regenerate)
			continue
		}
		if w != s.Body {
			t.Errorf("%s: section %q differs (run %s if the change is intended)\n--- got\n%s--- want\n%s", path, s.Name, regenerate, s.Body, w)
		}
		delete(wantBy, s.Name)
	}
	for name := range wantBy {
		t.Errorf("%s: section %q is no longer produced (run %s to drop it)", path, name, regenerate)
	}
}
