// Package pack is rehab's domain pack for the offline model: the words its users write for
// properties, portfolios, renovations, taxes and tasks (in Portuguese first, and in English,
// Spanish, French and German), the words after which they write a property's ID, the Portuguese
// typology "T2" read as two bedrooms, and the facts of a buyer's profile said in passing
// (facts.txt), whose phrases are also the pack's cues of update_user_profile. The server gives it
// to the offline model of every role rehab uses (server.App.Pack).
package pack

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/model/offline"
)

var (
	//go:embed pack.json
	data []byte
	//go:embed facts.txt
	factsTxt []byte
)

// Fact is a fact of a buyer's profile and a phrase that states it: a line of facts.txt.
type Fact struct {
	// Section and Field are where the fact goes in the profile ("fiscal", "primeira_habitacao").
	Section, Field string
	// Value is "true", "false", a word, or a reader of the message ("@age", "@amount", "@count",
	// "@zones", "@typology", "@skills"; see facts.txt).
	Value string
	// Confidence is how sure a mention in passing makes the app, in (0, 1].
	Confidence float64
	// Cue is the phrase, written like the pack's cues (lower case, no accents, "*" for any ending).
	Cue string
}

// Facts are the profile facts of facts.txt, in its order.
var Facts = mustFacts(factsTxt)

// Pack is rehab's pack: pack.json, with the cues of Facts pointing to update_user_profile.
var Pack = withFacts(offline.MustParsePack(data), Facts)

// Reader reads the values the pack's words give arguments, and its entities, beside the model:
// the profile section a message names, the knowledge entry or memory note it points to, the
// number of a task. In "read_context.path", a value without a slash ("impostos") is an entry of
// the property the message is about (portfolio/<id>/impostos).
var Reader = mustReader(Pack)

func mustReader(p *offline.Pack) *offline.ValueReader {
	r, err := offline.NewValueReader(p)
	if err != nil {
		panic(err) // Pack was validated above: this cannot happen
	}
	return r
}

// ParseFacts reads facts in facts.txt's format: one "<section> <field> <value> <confidence>
// <cue>" a line; blank lines and lines starting with '#' are skipped.
func ParseFacts(b []byte) ([]Fact, error) {
	var out []Fact
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 {
			return nil, fmt.Errorf("facts line %d: want <section> <field> <value> <confidence> <cue>, got %q", n, line)
		}
		c, err := strconv.ParseFloat(f[3], 64)
		if err != nil || c <= 0 || c > 1 {
			return nil, fmt.Errorf("facts line %d: confidence %q: want a number in (0, 1]", n, f[3])
		}
		out = append(out, Fact{Section: f[0], Field: f[1], Value: f[2], Confidence: c, Cue: strings.Join(f[4:], " ")})
	}
	return out, sc.Err()
}

func mustFacts(b []byte) []Fact {
	fs, err := ParseFacts(b)
	if err != nil {
		// facts.txt is part of the binary: a mistake in it is caught by the package's tests.
		panic(err)
	}
	return fs
}

// withFacts is p with an intent of update_user_profile (weight 3) whose cues are the facts'
// phrases, each once, ahead of p's own intents.
func withFacts(p *offline.Pack, facts []Fact) *offline.Pack {
	in := offline.Intent{Tool: "update_user_profile", Weight: 3}
	for _, f := range facts {
		if !slices.Contains(in.Cues, f.Cue) {
			in.Cues = append(in.Cues, f.Cue)
		}
	}
	p.Intents = append([]offline.Intent{in}, p.Intents...)
	if err := p.Validate(); err != nil {
		panic(err)
	}
	return p
}
