package analyst

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/trellis-go/trellis/apps/analyst/pack"
)

// What a user's message says about the user rather than asks: an introduction ("Hi, I'm Priya,
// head of strategy") and standing notes ("keep in mind that I only care about B2B"). The cues
// are the pack's words (words.json's introductions and remember_cues); the name is read by its
// capitals, the note kept as the user wrote it.

// greetingLeadRe is a run of the pack's greeting words opening a sentence ("Hi,", "Hello there,").
var greetingLeadRe = regexp.MustCompile(`(?i)^(?:` + pack.Alternation(words.Greetings) + `[\s,!.]*)+`)

// introRe is an introduction: the pack's cue, then the name (capitalised words).
var introRe = regexp.MustCompile(`^(?i:` + pack.Alternation(words.Introductions) + `)\s+(\p{Lu}[\pL'’-]*(?:\s+\p{Lu}[\pL'’-]*)*)`)

// rememberRe is a standing note: the pack's cue, then the note.
var rememberRe = regexp.MustCompile(`(?i)^(?:please\s+)?` + pack.Alternation(words.RememberCues) + `[\s,:]+(.+)$`)

// messageSentences splits a message into sentences (a sentence keeps its end mark).
var messageSentences = regexp.MustCompile(`(?:[^.!?\n]|[.!?][^\s.!?])+[.!?]*`)

// statements reads a user's message: the name an introduction gives, the standing notes, and
// the rest (the request), each sentence as written; a greeting opening a sentence is not part of
// it.
type statements struct {
	Name  string
	Notes []string
	Rest  string
}

func statementsIn(text string) statements {
	var st statements
	var rest []string
	for _, sent := range messageSentences.FindAllString(text, -1) {
		sent = strings.TrimSpace(sent)
		body := strings.TrimSpace(greetingLeadRe.ReplaceAllString(sent, ""))
		if body == "" {
			continue
		}
		if strings.HasSuffix(body, "?") {
			rest = append(rest, body)
			continue
		}
		if m := introRe.FindStringSubmatch(body); m != nil && st.Name == "" {
			st.Name = m[1]
			continue
		}
		if m := rememberRe.FindStringSubmatch(body); m != nil {
			note := strings.TrimSpace(strings.TrimRight(m[1], ".! "))
			if note != "" {
				r := []rune(note)
				r[0] = unicode.ToUpper(r[0])
				st.Notes = append(st.Notes, string(r))
				continue
			}
		}
		rest = append(rest, body)
	}
	st.Rest = strings.Join(rest, " ")
	return st
}

// standingSubject is the subject of a standing note in the preferences.
const standingSubject = "standing note"

// standingNotes are the standing notes in the user's preferences.
func (m Mem) standingNotes() []string {
	var out []string
	for _, f := range m[NSPreferences].Facts {
		if f.Subject == standingSubject {
			out = append(out, f.Text)
		}
	}
	return out
}
