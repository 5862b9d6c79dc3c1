package analyst

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"unicode"
	"unicode/utf8"
)

// The sentences the analyst writes itself are data: on the offline path (its plan's questions,
// the task briefs, the findings' and the report's sentences) prompts/offline/sentences.md, and
// whatever its model (the gates' replies and texts, the memory notes, the report's headings)
// prompts/messages/messages.md: each "## name" section a text/template over the values Go gives
// it. Go keeps the mechanics: which sentence, when, and the Markdown around it.
//
//go:embed prompts/offline/sentences.md
var sentencesFile string

//go:embed prompts/messages/messages.md
var messagesFile string

// sentenceFuncs are the functions the sentences may call: last reports whether i is the last
// index of a list (for "A, B and C"); capital writes a word with a capital first letter (a
// sentence's first word).
var sentenceFuncs = template.FuncMap{
	"last": func(i int, list []string) bool { return i == len(list)-1 },
	"capital": func(s string) string {
		if s == "" {
			return s
		}
		r, n := utf8.DecodeRuneInString(s)
		return string(unicode.ToUpper(r)) + s[n:]
	},
}

// parseSentences reads a sentences file (file names it in errors): an introduction, then "## name"
// sections, each a text/template. A section without a name or text, a name given twice or a
// template that does not parse is an error naming it.
func parseSentences(file, text string) (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	parts := strings.Split("\n"+text, "\n## ")
	for _, part := range parts[1:] {
		name, body, _ := strings.Cut(part, "\n")
		name, body = strings.TrimSpace(name), strings.Trim(body, "\n")
		if name == "" || strings.TrimSpace(body) == "" {
			return nil, fmt.Errorf("analyst: %s: section %q needs a name and a text", file, name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("analyst: %s: %q is given twice", file, name)
		}
		t, err := template.New(name).Funcs(sentenceFuncs).Option("missingkey=error").Parse(body)
		if err != nil {
			return nil, fmt.Errorf("analyst: %s: %w", file, err)
		}
		out[name] = t
	}
	return out, nil
}

// mergeSentences reads the sentences files (name, text, name, text...) into one set: a name two
// files give is an error naming both.
func mergeSentences(files ...string) (map[string]*template.Template, error) {
	out, from := map[string]*template.Template{}, map[string]string{}
	for i := 0; i+1 < len(files); i += 2 {
		ts, err := parseSentences(files[i], files[i+1])
		if err != nil {
			return nil, err
		}
		for name, t := range ts {
			if f, dup := from[name]; dup {
				return nil, fmt.Errorf("analyst: sentence %q is given in both %s and %s", name, f, files[i])
			}
			out[name], from[name] = t, files[i]
		}
	}
	return out, nil
}

// offlineSentences are the parsed sentences of both files, by name; an embedded file that does not
// parse stops the program at start-up, and TestSentencesRender checks that every name the code
// uses is given.
var offlineSentences = func() map[string]*template.Template {
	s, err := mergeSentences("prompts/offline/sentences.md", sentencesFile, "prompts/messages/messages.md", messagesFile)
	if err != nil {
		panic(err)
	}
	return s
}()

// sentence renders the sentence name with data (the values it names, or nil).
func sentence(name string, data map[string]any) string {
	t, ok := offlineSentences[name]
	if !ok {
		panic("analyst: no sentence " + name + " in prompts/offline/sentences.md or prompts/messages/messages.md")
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		panic(fmt.Sprintf("analyst: sentence %s: %v", name, err))
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

// projectBare is a project's name without the word the sentences write before it ("Project"
// in subject_project), whether or not the name holds it.
func projectBare(name string) string {
	prefix, _, _ := strings.Cut(sentence("subject_project", map[string]any{"Name": "\x00"}), "\x00")
	return strings.TrimPrefix(name, prefix)
}

// projectNamed is a project's name as the sentences write it (subject_project, "Project X").
func projectNamed(name string) string {
	return sentence("subject_project", map[string]any{"Name": projectBare(name)})
}
