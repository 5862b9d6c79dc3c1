// Package pack is rehab's domain pack for the offline model: the words its users write for
// properties, portfolios, renovations, taxes and tasks (in Portuguese first, and in English,
// Spanish, French and German), the words after which they write a property's ID, the Portuguese
// typology "T2" read as two bedrooms, the words that name a profile section, a memory note or a
// task's number (Reader), and from its text files: the facts of a buyer's profile said in passing
// (facts.txt), whose phrases are also the pack's cues of update_user_profile; the pt-BR spellings
// and abbreviations (spellings.txt), which are also its synonyms; the places known by name
// (places.txt), which are also its exact words; the words of rehab's own readers (words.json,
// read as Words with offline.ParseWords). Package nlu reads those files' words from here,
// so that each word is written once. The server gives the pack to the offline model of every role
// rehab uses (server.App.Pack).
package pack

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/fold"
	"github.com/trellis-go/trellis/model/offline"
)

var (
	//go:embed pack.json
	data []byte
	//go:embed facts.txt
	factsTxt []byte
	//go:embed spellings.txt
	spellingsTxt []byte
	//go:embed places.txt
	placesTxt []byte
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
var Facts = must(ParseFacts(factsTxt))

// Spellings map a word written another way (a pt-BR spelling, an abbreviation, a common slip),
// folded, to the words the cues use for it: spellings.txt.
var Spellings = must(parseSpellings(spellingsTxt))

// Place is a place the app knows by name, as it shows it ("Campo de Ourique").
type Place struct {
	Name string
	// City is true for a city (every listing names one); false for a neighbourhood, which tells
	// properties apart.
	City bool
}

// Places are the places of places.txt, in its order.
var Places = must(parsePlaces(placesTxt))

// Neighbourhoods are the names of the Places that are not cities.
func Neighbourhoods() []string {
	var out []string
	for _, p := range Places {
		if !p.City {
			out = append(out, p.Name)
		}
	}
	return out
}

// Pack is rehab's pack: pack.json, with Spellings among its synonyms, Places among its exact
// words, and the cues of Facts pointing to update_user_profile.
var Pack = withFacts(withWords(offline.MustParsePack(data), Spellings, Places), Facts)

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
	err := eachLine(b, func(n int, f []string) error {
		if len(f) < 5 {
			return fmt.Errorf("facts line %d: want <section> <field> <value> <confidence> <cue>, got %q", n, strings.Join(f, " "))
		}
		c, err := strconv.ParseFloat(f[3], 64)
		if err != nil || c <= 0 || c > 1 {
			return fmt.Errorf("facts line %d: confidence %q: want a number in (0, 1]", n, f[3])
		}
		out = append(out, Fact{Section: f[0], Field: f[1], Value: f[2], Confidence: c, Cue: strings.Join(f[4:], " ")})
		return nil
	})
	return out, err
}

func parseSpellings(b []byte) (map[string]string, error) {
	out := map[string]string{}
	err := eachLine(b, func(n int, f []string) error {
		if len(f) < 2 {
			return fmt.Errorf("spellings.txt line %d: want <written> <as>, got %q", n, strings.Join(f, " "))
		}
		out[fold.String(f[0])] = fold.String(strings.Join(f[1:], " "))
		return nil
	})
	return out, err
}

func parsePlaces(b []byte) ([]Place, error) {
	var out []Place
	err := eachLine(b, func(n int, f []string) error {
		if len(f) < 2 || f[0] != "city" && f[0] != "neighbourhood" {
			return fmt.Errorf("places.txt line %d: want city <name> or neighbourhood <name>, got %q", n, strings.Join(f, " "))
		}
		out = append(out, Place{Name: strings.Join(f[1:], " "), City: f[0] == "city"})
		return nil
	})
	return out, err
}

// eachLine calls each with the fields of every line of b but blank lines and '#' comments.
func eachLine(b []byte, each func(n int, fields []string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := each(n, strings.Fields(line)); err != nil {
			return err
		}
	}
	return sc.Err()
}

// must is v, or a panic: the files are part of the binary, and the package's tests catch a
// mistake in them.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// withWords is p with the spellings among its synonyms and the places' words among its exact
// words.
func withWords(p *offline.Pack, spellings map[string]string, places []Place) *offline.Pack {
	if p.Synonyms == nil {
		p.Synonyms = map[string][]string{}
	}
	for w, as := range spellings {
		if !slices.Contains(p.Synonyms[w], as) {
			p.Synonyms[w] = append(p.Synonyms[w], as)
		}
	}
	for _, pl := range places {
		p.Exact = append(p.Exact, pl.Name)
	}
	return p
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
