package document_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trellis-go/trellis/document"
	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
)

func TestMarkdownSections(t *testing.T) {
	src := "intro line\n\n# Guide\n\nWelcome.\n\n## Install\n\nRun it.\n\n```sh\n# not a heading\n```\n\nSetext\n------\n\nUnder setext.\n\n### Deep ###\ndeep text\n"
	d, err := document.Load(document.KindMarkdown, "g.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Guide" {
		t.Fatalf("title %q", d.Title)
	}
	want := []document.Section{
		{Headings: nil, Text: "intro line"},
		{Headings: []string{"Guide"}, Text: "Welcome."},
		{Headings: []string{"Guide", "Install"}, Text: "Run it.\n\n```sh\n# not a heading\n```"},
		{Headings: []string{"Guide", "Setext"}, Text: "Under setext."},
		{Headings: []string{"Guide", "Setext", "Deep"}, Text: "deep text"},
	}
	if !reflect.DeepEqual(d.Sections, want) {
		t.Fatalf("sections:\n%#v\nwant\n%#v", d.Sections, want)
	}
}

func TestHTML(t *testing.T) {
	src := `<html><head><title>Acme &amp; Co</title><style>p{color:red}</style></head><body>
<script>var x = "<h1>no</h1>";</script><!-- hidden -->
<h1>Pricing</h1><p>Plans start at &euro;10&nbsp;per month.</p>
<h2>Enterprise <em>tier</em></h2><ul><li>SSO</li><li>Audit log</li></ul></body></html>`
	d, err := document.Load(document.KindHTML, "p.html", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Acme & Co" {
		t.Fatalf("title %q", d.Title)
	}
	if len(d.Sections) != 2 || d.Sections[0].Text != "Plans start at €10 per month." ||
		!reflect.DeepEqual(d.Sections[1].Headings, []string{"Pricing", "Enterprise tier"}) || d.Sections[1].Text != "SSO\n\nAudit log" {
		t.Fatalf("sections %#v", d.Sections)
	}
	if strings.Contains(d.Text(), "var x") || strings.Contains(d.Text(), "color") || strings.Contains(d.Text(), "hidden") {
		t.Fatalf("script, style or comment leaked: %q", d.Text())
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := document.LoadFile(filepath.Join(dir, "x.pdf")); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("pdf: %v", err)
	}
	if _, err := document.LoadFile(filepath.Join(dir, "missing.md")); err == nil {
		t.Fatal("missing file loaded")
	}
	if _, err := document.Load(document.KindText, "bin.txt", []byte("a\x00b")); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Fatalf("binary: %v", err)
	}
}

func TestSplitSizesOverlapHeadings(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString("word")
		b.WriteString(strings.Repeat("x", i%3))
		if i%15 == 14 {
			b.WriteString(".\n\n")
		} else {
			b.WriteString(" ")
		}
	}
	d := &document.Document{Source: "s.md", Title: "T", Metadata: map[string]any{"team": "ops"},
		Sections: []document.Section{{Headings: []string{"Ops", "Runbook"}, Text: b.String()}, {Text: "tail"}}}
	opts := &document.ChunkOptions{Size: 50, Overlap: 10}
	cs, err := document.Split(d, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < 5 {
		t.Fatalf("%d chunks for 200 words at 50 tokens", len(cs))
	}
	tok := document.WordTokenizer{}
	for i, c := range cs[:len(cs)-1] {
		if n := len(tok.Tokens(c.Text)); n > 50 || n != c.Tokens {
			t.Fatalf("chunk %d has %d tokens (reported %d), limit 50", i, n, c.Tokens)
		}
		if !strings.HasPrefix(c.Text, "Ops > Runbook\n\n") {
			t.Fatalf("chunk %d lost its heading: %q", i, c.Text[:30])
		}
		if c.Metadata["team"] != "ops" || c.Metadata["source"] != "s.md" || c.Metadata["heading"] != "Runbook" || c.Index != i {
			t.Fatalf("chunk %d metadata %v", i, c.Metadata)
		}
	}
	// Neighbours overlap: the next chunk starts inside the previous one.
	for i := 0; i+2 < len(cs); i++ {
		next := cs[i+1].Body
		first := strings.Fields(next)[0]
		if !strings.Contains(cs[i].Body, first) {
			t.Fatalf("chunk %d does not overlap chunk %d", i+1, i)
		}
	}
	last := cs[len(cs)-1]
	if last.Text != "tail" || last.Headings != nil {
		t.Fatalf("last chunk %#v", last)
	}
	for _, bad := range []document.ChunkOptions{{Size: 4}, {Size: 50, Overlap: 25}, {Size: 50, Overlap: -1}} {
		if _, err := document.Split(d, &bad); err == nil {
			t.Fatalf("options %+v accepted", bad)
		}
	}
}

// countingStore counts puts.
type countingStore struct {
	store.Store
	puts atomic.Int64
}

func (c *countingStore) Put(ctx context.Context, req store.PutRequest) error {
	c.puts.Add(1)
	return c.Store.Put(ctx, req)
}

func setup(t *testing.T) (*countingStore, string) {
	t.Helper()
	e := embed.NewLocal(&embed.LocalOptions{Dims: 64})
	m, err := memstore.New(&memstore.Options{Config: store.Config{Index: &store.IndexConfig{Embedder: e, Dims: 64}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("handbook.md", "# Handbook\n\n## Holidays\n\nEmployees get 25 days of paid holiday a year.\n\n## Expenses\n\nSubmit receipts within 30 days.\n")
	write("sub/pricing.html", "<h1>Pricing</h1><p>The premium plan costs 40 euros a month.</p>")
	write("notes.txt", "Quarterly revenue grew in the north region.")
	write("image.png", "\x89PNG")
	write(".git/config.md", "# should be skipped")
	return &countingStore{Store: m}, dir
}

func TestIngestAndReingest(t *testing.T) {
	s, dir := setup(t)
	ctx := context.Background()
	ns := []string{"kb", "acme"}
	var bar bytes.Buffer
	sum, err := document.Ingest(ctx, s, []string{dir}, document.IngestOptions{Namespace: ns, Metadata: map[string]any{"tenant": "acme"}, Progress: document.ProgressBar(&bar)})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files != 3 || sum.Chunks != 4 || sum.Unchanged != 0 || len(sum.Failed) != 0 {
		t.Fatalf("first run: %+v", sum)
	}
	if !strings.Contains(bar.String(), "3/3 files") || !strings.HasSuffix(bar.String(), "\n") {
		t.Fatalf("progress bar: %q", bar.String())
	}
	res, err := s.Search(ctx, store.SearchRequest{NamespacePrefix: ns, Query: "how many holiday days", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || !strings.Contains(res[0].Value["text"].(string), "25 days") || res[0].Value["tenant"] != "acme" || res[0].Value["heading"] != "Holidays" {
		t.Fatalf("search after ingest: %+v", res)
	}
	res, err = s.Search(ctx, store.SearchRequest{NamespacePrefix: ns, Filter: map[string]any{"kind": "html"}})
	if err != nil || len(res) != 1 {
		t.Fatalf("filter by kind: %v %v", res, err)
	}

	// Unchanged: nothing is written.
	before := s.puts.Load()
	sum, err = document.Ingest(ctx, s, []string{dir}, document.IngestOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Unchanged != 3 || sum.Files != 0 || s.puts.Load() != before {
		t.Fatalf("re-ingest of unchanged files: %+v, %d puts", sum, s.puts.Load()-before)
	}

	// A file that shrank replaces its chunks and removes the stale one.
	if err := os.WriteFile(filepath.Join(dir, "handbook.md"), []byte("# Handbook\n\nHolidays are now 27 days.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err = document.Ingest(ctx, s, []string{dir}, document.IngestOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files != 1 || sum.Chunks != 1 || sum.Removed != 1 || sum.Unchanged != 2 {
		t.Fatalf("after change: %+v", sum)
	}
	all, err := s.Search(ctx, store.SearchRequest{NamespacePrefix: ns, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("%d chunks stored after the change, want 3 (no duplicates, no stale)", len(all))
	}
	for _, it := range all {
		if strings.Contains(it.Value["text"].(string), "25 days") {
			t.Fatal("stale chunk survived")
		}
	}
}

func TestIngestBadInput(t *testing.T) {
	s, dir := setup(t)
	ctx := context.Background()
	sum, err := document.Ingest(ctx, s, []string{filepath.Join(dir, "notes.txt"), filepath.Join(dir, "nope.md"), filepath.Join(dir, "image.png")}, document.IngestOptions{Namespace: []string{"kb"}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files != 1 || len(sum.Failed) != 2 || !strings.Contains(sum.String(), "nope.md") || !strings.Contains(sum.String(), "unsupported") {
		t.Fatalf("summary: %s", sum)
	}
	if _, err := document.Ingest(ctx, s, []string{dir}, document.IngestOptions{}); err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Fatalf("no namespace: %v", err)
	}
	if _, err := document.Ingest(ctx, s, nil, document.IngestOptions{Namespace: []string{"kb"}}); err == nil {
		t.Fatal("no paths accepted")
	}
	// A store that refuses writes stops the run with its error.
	ro := &failingStore{Store: s}
	_, err = document.Ingest(ctx, ro, []string{dir}, document.IngestOptions{Namespace: []string{"kb2"}})
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("store failure: %v", err)
	}
}

type failingStore struct{ store.Store }

func (failingStore) Put(context.Context, store.PutRequest) error { return store.ErrReadOnly }
