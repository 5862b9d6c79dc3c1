package analyst_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst/corpus"
)

// The corpus's facts are data: the company, its facts, competitors and projects are read from
// the documents' headers.
func TestDomainReadFromTheCorpus(t *testing.T) {
	t.Parallel()
	d, err := corpus.Load()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := corpus.Documents()
	if err != nil {
		t.Fatal(err)
	}
	// Every competitor note with an about: gives a competitor, every project: a project.
	for _, doc := range docs {
		if doc.Type == "competitor_note" && doc.About != "" && !contains(d.Competitors, doc.About) {
			t.Errorf("%s is about %q, which is not among the competitors %v", doc.ID, doc.About, d.Competitors)
		}
		if doc.Project != "" && !contains(d.Projects, doc.Project) {
			t.Errorf("%s belongs to project %q, which is not among %v", doc.ID, doc.Project, d.Projects)
		}
		if c := doc.Fields["company"]; c != "" && (c != d.Company || d.FactSource != doc.Title) {
			t.Errorf("the company is %q from %q; %s says %q", d.Company, d.FactSource, doc.ID, c)
		}
	}
	if d.Company == "" || len(d.Competitors) < 2 || len(d.Projects) < 2 || len(d.Facts) == 0 || len(d.Assumptions) == 0 {
		t.Fatalf("the domain is incomplete: %+v", d)
	}
	if len(d.Vocabulary.Themes) == 0 || len(d.Vocabulary.Synonyms) == 0 || len(d.Vocabulary.TimeFrames) == 0 {
		t.Fatalf("the vocabulary is incomplete: %+v", d.Vocabulary)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// No Go code of the app outside its tests names the corpus's company, competitors or projects:
// they are data, read from the corpus.
func TestNoCorpusNamesInGoCode(t *testing.T) {
	t.Parallel()
	d, err := corpus.Load()
	if err != nil {
		t.Fatal(err)
	}
	var alts []string
	for _, n := range d.Names() {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	re := regexp.MustCompile(`(?i)\b(` + strings.Join(alts, "|") + `)\b`)
	files := 0
	err = filepath.WalkDir(".", func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		files++
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			if m := re.FindString(sc.Text()); m != "" {
				t.Errorf("%s:%d names %q from the corpus: %s", path, n, m, strings.TrimSpace(sc.Text()))
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("only %d Go files checked", files)
	}
}
