package analyst

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

// The sentences the analyst writes itself on the offline path (its plan's questions, the task
// briefs, the findings' and the report's sentences) are data, prompts/offline/sentences.md: each
// "## name" section a text/template over the values Go gives it. Go keeps the mechanics: which
// sentence, when, and the bullets and numbering around it.
//
//go:embed prompts/offline/sentences.md
var sentencesFile string

// sentenceFuncs are the functions the sentences may call: last reports whether i is the last
// index of a list (for "A, B and C").
var sentenceFuncs = template.FuncMap{"last": func(i int, list []string) bool { return i == len(list)-1 }}

// parseSentences reads a sentences file: an introduction, then "## name" sections, each a
// text/template. A section without a name or text, a name given twice or a template that does
// not parse is an error naming it.
func parseSentences(text string) (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	parts := strings.Split("\n"+text, "\n## ")
	for _, part := range parts[1:] {
		name, body, _ := strings.Cut(part, "\n")
		name, body = strings.TrimSpace(name), strings.Trim(body, "\n")
		if name == "" || strings.TrimSpace(body) == "" {
			return nil, fmt.Errorf("analyst: sentences.md: section %q needs a name and a text", name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("analyst: sentences.md: %q is given twice", name)
		}
		t, err := template.New(name).Funcs(sentenceFuncs).Option("missingkey=error").Parse(body)
		if err != nil {
			return nil, fmt.Errorf("analyst: sentences.md: %w", err)
		}
		out[name] = t
	}
	return out, nil
}

// offlineSentences are the parsed sentences, by name; an embedded file that does not parse stops the
// program at start-up (TestSentencesRender renders each).
var offlineSentences = func() map[string]*template.Template {
	s, err := parseSentences(sentencesFile)
	if err != nil {
		panic(err)
	}
	return s
}()

// sentence renders the sentence name with data (the values it names, or nil).
func sentence(name string, data map[string]any) string {
	t, ok := offlineSentences[name]
	if !ok {
		panic("analyst: no sentence " + name + " in prompts/offline/sentences.md")
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		panic(fmt.Sprintf("analyst: prompts/offline/sentences.md: %v", err))
	}
	return b.String()
}

// readBack is a pattern that reads back what the sentence name wrote: the sentence rendered
// with field as a placeholder, its text quoted (any spacing between words), the placeholder a
// capture group and the text after it optional (a question written without its "?").
func readBack(name, field string) *regexp.Regexp {
	const hole = "\x00"
	before, after, ok := strings.Cut(sentence(name, map[string]any{field: hole}), hole)
	if !ok {
		panic("analyst: sentence " + name + " does not use ." + field)
	}
	pattern := func(s string) string {
		ws := strings.Fields(s)
		for i, w := range ws {
			ws[i] = regexp.QuoteMeta(w)
		}
		q := strings.Join(ws, `\s+`)
		if strings.HasPrefix(s, " ") && q != "" {
			q = `\s+` + q
		}
		if strings.HasSuffix(s, " ") && q != "" {
			q += `\s+`
		}
		return q
	}
	return regexp.MustCompile(`(?i)^` + pattern(before) + `(.+?)(?:` + pattern(after) + `)?$`)
}
