package offline_test

import (
	"strings"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

// A made-up bookshop: its users name genres and formats in their own words.
var shopTools = []model.ToolSpec{
	spec("find_books", "Find books.",
		`{"type":"object","properties":{"genre":{"type":"string","enum":["crime","poetry","travel"]},"format":{"type":"string"}},"required":["genre"]}`),
	spec("hold_books", "Hold books for a number of weeks.",
		`{"type":"object","properties":{"genre":{"type":"string"},"weeks":{"type":"integer"},"gift":{"type":"boolean"}}}`),
}

const shopPack = `{
  "name": "shop",
  "entities": [{"arg": "shelf", "pattern": "(?i)\\bshelf\\s+([A-Z]\\d{1,2})\\b"}],
  "synonyms": {"livros": ["books"]},
  "intents": [{"tool": "find_books", "cues": ["find", "procura*"]}, {"tool": "hold_books", "cues": ["hold", "guarda*"]}],
  "values": {
    "genre": {"crime": ["detective*", "whodunit", "policia*"], "poetry": ["poem*", "poesia", "verse*", "!prose"], "sonnets": ["sonnet*"]},
    "find_books.format": {"audio": ["audiobook*", "to listen to"], "print": ["paperback*", "hardcover*"]},
    "hold_books.weeks": {"2": ["fortnight", "quinzena"], "soon": ["asap"]},
    "hold_books.gift": {"true": ["gift wrap*", "for a present"]}
  }
}`

func shop(t *testing.T) *offline.Model {
	t.Helper()
	p, err := offline.ParsePack([]byte(shopPack))
	if err != nil {
		t.Fatal(err)
	}
	return offline.New(&offline.Options{Packs: []*offline.Pack{p}})
}

// TestPackValues: the words a pack gives an argument's values fill it, with typos, missing
// accents and the pack's synonyms forgiven; the earliest phrase wins, a "!" phrase rules its
// value out, "tool.argument" keys hold for that tool only, values are converted to the
// argument's type and a value outside its enum is not taken.
func TestPackValues(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"find me some detective stories", `find_books{"genre":"crime"}`},
		{"find a detectvie novel", `find_books{"genre":"crime"}`},                     // typo
		{"procura livros de poesía", `find_books{"genre":"poetry"}`},                  // accent
		{"procura um romance policial", `find_books{"genre":"crime"}`},                // "*" ending
		{"find poems and detective novels", `find_books{"genre":"poetry"}`},           // earliest
		{"find detective poems", `find_books{"genre":"crime"}`},                       // earliest
		{"find crime as an audiobok", `find_books{"format":"audio","genre":"crime"}`}, // enum named, typo in a format word
		{"find poems in prose", `find_books{"genre":"crime"}`},                        // "!prose" rules poetry out, no genre: the enum's first value
		{"find sonnets", `find_books{"genre":"crime"}`},                               // "sonnets" is outside the enum: not taken
		{"hold poems for a fortnight", `hold_books{"genre":"poetry","weeks":2}`},      // integer, genre unscoped
		{"hold poems asap", `hold_books{"genre":"poetry"}`},                           // "soon" is not an integer
		{"hold poems, gift wrapped", `hold_books{"genre":"poetry","gift":true}`},      // boolean
		{"hold paperbacks", `hold_books{}`},                                           // format is find_books' only
	} {
		if got := calls(ask(t, shop(t), shopTools, message.User(c.text))); got != c.want {
			t.Errorf("%q called %s, want %s", c.text, got, c.want)
		}
	}
}

// TestValueReader reads the same values beside the model.
func TestValueReader(t *testing.T) {
	p, err := offline.ParsePack([]byte(shopPack))
	if err != nil {
		t.Fatal(err)
	}
	r, err := offline.NewValueReader(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, arg, text, want string }{
		{"find_books", "format", "an audiobok please", "audio"},
		{"find_books", "format", "in HARDCOVER", "print"},
		{"", "genre", "um policial", "crime"},
		{"", "format", "an audiobook", ""}, // scoped to find_books
		{"find_books", "genre", "poems in prose", ""},
		{"hold_books", "weeks", "for a quinzena", "2"},
	} {
		got, ok := r.Value(c.tool, c.arg, c.text)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("Value(%q, %q, %q) = %q, %v; want %q", c.tool, c.arg, c.text, got, ok, c.want)
		}
	}
	if v, ok := r.Entity("shelf", "it is on shelf B12"); !ok || v != "B12" {
		t.Errorf("Entity(shelf) = %q, %v; want B12", v, ok)
	}
	if v, ok := r.Entity("shelf", "no shelf named"); ok {
		t.Errorf("Entity(shelf) of a text without one = %q", v)
	}
	var nilReader *offline.ValueReader
	if v, ok := nilReader.Value("find_books", "genre", "poems"); ok || v != "" {
		t.Errorf("nil reader: %q, %v", v, ok)
	}
	if _, err := offline.NewValueReader(&offline.Pack{Name: "bad", Values: map[string]map[string][]string{"genre": {"": {"x"}}}}); err == nil {
		t.Error("NewValueReader took an invalid pack")
	}
}

// Bad Values are refused with an error that names the pack and the entry.
func TestPackValuesInvalid(t *testing.T) {
	for _, c := range []struct{ values, want string }{
		{`{"": {"a": ["b"]}}`, `key ""`},
		{`{"a.b.c": {"a": ["b"]}}`, `key "a.b.c"`},
		{`{".genre": {"a": ["b"]}}`, `key ".genre"`},
		{`{"find.": {"a": ["b"]}}`, `key "find."`},
		{`{"genre": {}}`, `values of "genre": none given`},
		{`{"genre": {" ": ["b"]}}`, `values of "genre": an empty value`},
		{`{"genre": {"crime": []}}`, `value "crime" has no phrase`},
		{`{"genre": {"crime": ["!prose"]}}`, `value "crime" has no phrase that means it`},
		{`{"genre": {"crime": ["detective", "!"]}}`, `phrase "!" has no words`},
		{`{"genre": {"crime": ["..."]}}`, `phrase "..." has no words`},
		{`{"genre": {"crime": "detective"}}`, `reading a pack`},
	} {
		_, err := offline.ParsePack([]byte(`{"name": "shop", "values": ` + c.values + `}`))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "shop") && c.want != "reading a pack" {
			t.Errorf("values %s: error %v, want one saying %q", c.values, err, c.want)
		}
	}
}
