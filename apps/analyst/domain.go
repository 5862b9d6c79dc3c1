package analyst

import (
	"strings"
	"sync"

	"github.com/trellis-go/trellis/apps/analyst/corpus"
)

// loadDomain reads what the corpus says about the firm (its name, facts, competitors, projects,
// assumptions and vocabulary) once; the Go code names none of it.
var loadDomain = sync.OnceValues(corpus.Load)

// domain is the corpus's domain; New has loaded it (and failed on an error), so later calls
// only read the cached value. Nil when the corpus does not load.
func domain() *corpus.Domain {
	d, err := loadDomain()
	if err != nil {
		return nil
	}
	return d
}

// namedIn returns the names of names that text mentions (as whole words, any case), in the
// order of names.
func namedIn(text string, names []string) []string {
	words := " " + strings.Join(strings.FieldsFunc(strings.ToLower(text), notWordRune), " ") + " "
	var out []string
	for _, n := range names {
		w := " " + strings.Join(strings.FieldsFunc(strings.ToLower(n), notWordRune), " ") + " "
		if strings.TrimSpace(w) != "" && strings.Contains(words, w) {
			out = append(out, n)
		}
	}
	return out
}

func notWordRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r > 127)
}
