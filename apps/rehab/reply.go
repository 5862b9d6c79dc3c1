package rehab

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/trellis-go/trellis/apps/rehab/nlu"
	"github.com/trellis-go/trellis/message"
)

// userFacing marks a tool's refusal as written for the user (pt-PT, with what to do), as
// opposed to an internal error, which the user never reads.
var userFacing = json.RawMessage(`{"user_facing":true}`)

// InternalErrorReply is what the user reads when something failed on our side
// (prompts/answers.json's internal_error).
var InternalErrorReply = answer("internal_error")

// Reply is the answer to the user's last message written from the results of the tools called
// since: their pt-PT texts, the profile's silent updates left out when anything else answered,
// internal errors explained without their detail; then Sanitize.
func Reply(msgs []message.Message) string {
	user := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == message.RoleUser {
			user = i
			break
		}
	}
	var main, profile []string
	internal := false
	for _, m := range msgs[user+1:] {
		if m.Role != message.RoleTool {
			continue
		}
		text := strings.TrimSpace(m.Text())
		if m.IsError && !isUserFacing(m) {
			internal = true
			continue
		}
		if text == "" {
			continue
		}
		if m.Name == "update_user_profile" && !m.IsError {
			profile = append(profile, text)
			continue
		}
		main = append(main, text)
	}
	parts := main
	if len(parts) == 0 {
		parts = profile
	}
	if internal && len(parts) == 0 {
		parts = []string{InternalErrorReply}
	}
	return Sanitize(strings.Join(parts, "\n\n"))
}

func isUserFacing(m message.Message) bool {
	raw, ok := m.Metadata["structured"].(json.RawMessage)
	if !ok {
		if b, err := json.Marshal(m.Metadata["structured"]); err == nil {
			raw = b
		}
	}
	return strings.Contains(string(raw), `"user_facing":true`)
}

var (
	toolNameRE = regexp.MustCompile(`\b(?:` + strings.Join(ToolNames, "|") + `|manage_todos)\b\s*(?:\(\))?:?`)
	argNameRE  = regexp.MustCompile(`\b(?:property_ids?|todo_id|start_line|num_lines|user_id|conversation_id|tool_call_id|idealista_id)\b\s*[:=]?`)
	uuidRE     = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b:?`)
	todoIDRE   = regexp.MustCompile(`\s?\[[0-9a-f]{8}\]`)
	scoreRE    = regexp.MustCompile(`(?i)\s*\(?\b(?:` + nlu.Prefixes(said.ScoreWords) + `)\s*:?\s*[0-9]+(?:[.,][0-9]+)?\)?`)
	pathRE     = regexp.MustCompile(`\b(?:portfolio/[^\s/]+/(analise|resumo|impostos)|portfolio/index|user/(?:profile|fiscal|budget|renovation|preferences|goals)|memoria/(?:decisoes|rejeitados|questoes)|notas/[\w-]+|session/resumo_(?:anterior|atual))\b(?:\s*\(\d+/\d+ linhas\))?:?`)
	internalRE = regexp.MustCompile(`(?i)\b(?:rehab|listing|httpclient|sql|pq|sqlite|postgres|json|context deadline|connection refused|panic|nil pointer|goroutine|EOF|tool call)\b[^\n]*`)
	spacesRE   = regexp.MustCompile(`[ \t]{2,}`)
)

// pathWords are how a reply names a property's part of the knowledge base (pack.Words.KBParts).
var pathWords = said.KBParts

// Sanitize removes from a reply what the user must never read: tool and argument names,
// internal IDs, relevance scores, knowledge-base paths and internal error text (a line with an
// internal error becomes the pt-PT explanation).
func Sanitize(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if internalRE.MatchString(line) && !strings.Contains(line, "idealista.pt") {
			line = InternalErrorReply
		}
		line = pathRE.ReplaceAllStringFunc(line, func(m string) string {
			if sub := pathRE.FindStringSubmatch(m); sub[1] != "" {
				return pathWords[sub[1]]
			}
			return ""
		})
		line = toolNameRE.ReplaceAllString(line, "")
		line = argNameRE.ReplaceAllString(line, "")
		line = uuidRE.ReplaceAllString(line, "")
		line = todoIDRE.ReplaceAllString(line, "")
		line = scoreRE.ReplaceAllString(line, "")
		line = spacesRE.ReplaceAllString(line, " ")
		line = strings.TrimRight(line, " ")
		if strings.TrimSpace(line) == "-" || strings.TrimSpace(line) == ":" {
			continue
		}
		if line == InternalErrorReply && len(out) > 0 && out[len(out)-1] == InternalErrorReply {
			continue
		}
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// Portuguese reports whether a text reads as Portuguese: its Portuguese function words are at
// least as many as those of English, Spanish or French.
func Portuguese(text string) bool { return InLanguage(text, "pt") }

// InLanguage reports whether text reads as lang ("pt", "en", "es" or "fr"): no other of those
// languages has more of its function words, and at least two.
func InLanguage(text, lang string) bool {
	counts := map[string]int{}
	for _, w := range nlu.Words(text) {
		for l, words := range functionWords {
			if words[w] {
				counts[l]++
			}
		}
	}
	mine := counts[lang]
	for l, n := range counts {
		if l != lang && n > mine && n >= 2 {
			return false
		}
	}
	return true
}

// ReplyLanguages are the languages a user may choose for the replies in their profile
// (preferences.idioma_respostas), with what the model is told and the fallback it cannot miss
// (prompts/languages.json). Without a choice the replies are in pt-PT.
var ReplyLanguages = mustLanguages(languagesJSON)

// ReplyTongue is what a reply language tells the model: the instruction added to every turn
// (none for pt-PT, the prompt's own), the reminder for the one retry of a reply in another
// language, and the fallback shown when the model still cannot write it.
type ReplyTongue struct {
	Instruction string `json:"instruction"`
	Reminder    string `json:"reminder"`
	Fallback    string `json:"fallback"`
}

//go:embed prompts/languages.json
var languagesJSON []byte

// parseLanguages reads prompts/languages.json: pt-PT and any other language, each with a
// reminder and a fallback, and an instruction for every language but pt-PT.
func parseLanguages(data []byte) (map[string]ReplyTongue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var langs map[string]ReplyTongue
	if err := dec.Decode(&langs); err != nil {
		return nil, fmt.Errorf("rehab prompts/languages.json: %w", err)
	}
	if _, ok := langs["pt"]; !ok {
		return nil, fmt.Errorf(`rehab prompts/languages.json: "pt" is missing: the replies' default language needs its reminder and fallback`)
	}
	for code, t := range langs {
		switch {
		case t.Reminder == "" || t.Fallback == "":
			return nil, fmt.Errorf("rehab prompts/languages.json: %q needs a reminder and a fallback", code)
		case code != "pt" && t.Instruction == "":
			return nil, fmt.Errorf("rehab prompts/languages.json: %q needs an instruction telling the model to reply in it", code)
		}
	}
	return langs, nil
}

func mustLanguages(data []byte) map[string]ReplyTongue {
	langs, err := parseLanguages(data)
	if err != nil {
		panic(err)
	}
	return langs
}

// ReplyLanguage is the reply language a profile's preferences choose ("pt" when none or an
// unknown one).
func ReplyLanguage(preferences map[string]any) string {
	if l, ok := preferences["idioma_respostas"].(string); ok {
		l = strings.ToLower(strings.TrimSpace(l))
		if _, known := ReplyLanguages[l]; known {
			return l
		}
	}
	return "pt"
}

func set(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

// functionWords are the pack's function words of each language (pack.Words.FunctionWords).
var functionWords = func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for lang, words := range said.FunctionWords {
		m[lang] = set(words...)
	}
	return m
}()
