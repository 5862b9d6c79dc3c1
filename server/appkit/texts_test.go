package appkit_test

import (
	"strings"
	"testing"

	"github.com/trellis-go/trellis/server/appkit"
)

func TestTextsSay(t *testing.T) {
	texts, err := appkit.ParseTexts("answers.json", []byte(`{
		"saved": {"pt": "Guardado: {property} ({price}).", "en": "Saved: {property} ({price})."},
		"empty": {"pt": "Vazio.", "en": "Empty."}}`), "pt", []string{"saved", "empty"})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts.Say("pt", "saved", "property", "T2 Alfama", "price", "250 000 €"); got != "Guardado: T2 Alfama (250 000 €)." {
		t.Errorf("pt: %q", got)
	}
	if got := texts.Say("en", "empty"); got != "Empty." {
		t.Errorf("en: %q", got)
	}
	if got := texts.Say("fr", "empty"); got != "Vazio." {
		t.Errorf("a language the file lacks should give the default one, got %q", got)
	}
	if got := texts.Say("pt", "nowhere"); got != "{nowhere}" {
		t.Errorf("an unknown name should show itself, got %q", got)
	}
	if got := strings.Join(texts.Languages(), ","); got != "en,pt" || !texts.Has("en") || texts.Has("fr") {
		t.Errorf("languages %q", got)
	}
}

func TestParseTextsErrors(t *testing.T) {
	for _, c := range []struct {
		data, want string
	}{
		{`{"a": {"pt": "x"}}`, `"b" is missing`},
		{`{"a": {"pt": "x"}, "b": {"pt": "y"}, "c": {"pt": "z"}}`, `"c" is not a text the app writes`},
		{`{"a": {"pt": "x"}, "b": {"pt": "y", "en": "y"}}`, `"a" has no text in "en"`},
		{`{"a": {"en": "x"}, "b": {"en": "y"}}`, `no text is in "pt"`},
		{`{"a": {"pt": " "}, "b": {"pt": "y"}}`, `"a" has no text in "pt"`},
		{`{"a": {"pt": "{n} x", "en": "{m} x"}, "b": {"pt": "y", "en": "y"}}`, `"a" in "en" has the placeholders [{m}]`},
		{`{"a": ["x"]}`, `answers.json: json`},
	} {
		_, err := appkit.ParseTexts("answers.json", []byte(c.data), "pt", []string{"a", "b"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.data, err, c.want)
		}
	}
}

func TestFill(t *testing.T) {
	if got := appkit.Fill("{a} and {b}, {a}", "a", "{b}", "b", "2"); got != "{b} and 2, {b}" {
		t.Errorf("got %q", got)
	}
}
