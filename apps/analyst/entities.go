package analyst

import (
	"slices"
	"strings"
)

// entities are what a request or question names, from the corpus's lists: its competitors,
// projects and themes. The offline writer fills its templates' slots with them, never with the
// user's sentence.
type entities struct {
	Competitors []string
	Projects    []string
	Theme       string // the first theme named
}

// entitiesOf finds the corpus's competitors, projects and themes that text names.
func entitiesOf(text string) entities {
	d := domain()
	if d == nil {
		return entities{}
	}
	e := entities{Competitors: namedIn(text, d.Competitors), Projects: namedIn(text, d.Projects)}
	for _, t := range d.Vocabulary.Themes {
		if len(namedIn(text, t.Words)) > 0 {
			e.Theme = t.Name
			break
		}
	}
	return e
}

// names are the competitors and projects the entities name.
func (e entities) names() []string {
	return append(slices.Clone(e.Competitors), e.Projects...)
}

// subject is a noun phrase for what the entities name ("<competitor> in <theme>", "Project
// <name>", "<theme>"), or "" when they name nothing.
func (e entities) subject() string {
	var names []string
	names = append(names, e.Competitors...)
	for _, p := range e.Projects {
		names = append(names, sentence("subject_project", map[string]any{"Name": p}))
	}
	switch {
	case len(names) > 0 && e.Theme != "":
		return sentence("subject_in", map[string]any{"Names": joinAnd(names), "Theme": e.Theme})
	case len(names) > 0:
		return joinAnd(names)
	}
	return e.Theme
}

// aboutRe reads the subject of a question the analyst wrote ("What do we know about X?"): the
// pattern is built from the sentence that writes it (question_about).
var aboutRe = readBack("question_about", "Subject")

// subjectOf is a short noun phrase for what a sub-question asks about: the subject of a question
// written from a direction, or the entities it names; "" when neither.
func subjectOf(q string) string {
	if m := aboutRe.FindStringSubmatch(strings.TrimSpace(q)); m != nil {
		return m[1]
	}
	return entitiesOf(q).subject()
}

// subjectOrQuote is subjectOf(q), or q in quotes when it names no subject.
func subjectOrQuote(q string) string {
	if s := subjectOf(q); s != "" {
		return s
	}
	return "\"" + strings.TrimSpace(q) + "\""
}

// joinAnd joins names as the sentences' list does: "A", "A and B", "A, B and C".
func joinAnd(names []string) string {
	return sentence("list", map[string]any{"Names": names})
}
