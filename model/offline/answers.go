package offline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/trellis-go/trellis/fold"
	"github.com/trellis-go/trellis/message"
)

// maxRows caps the rows of a table written from a tool result.
const maxRows = 20

// fromResults writes an answer from tool results: a Markdown table for rows, a list for a record,
// the text itself otherwise.
// opening, when not empty, is a pack's line for these results (it may hold one %q).
func fromResults(l lang, opening, question string, results []message.Message) string {
	var b strings.Builder
	switch {
	case opening != "" && strings.Contains(opening, "%q"):
		fmt.Fprintf(&b, opening+"\n\n", truncate(question, 160))
	case opening != "":
		b.WriteString(opening + "\n\n")
	case question != "":
		fmt.Fprintf(&b, l.p().found+"\n\n", truncate(question, 160))
	}
	for _, r := range results {
		if len(results) > 1 || r.IsError {
			name := r.Name
			if name == "" {
				name = "tool"
			}
			fmt.Fprintf(&b, "**%s**", name)
			if r.IsError {
				b.WriteString(l.p().reportedError)
			}
			b.WriteString(":\n\n")
		}
		b.WriteString(render(r.Text()))
		b.WriteString("\n\n")
	}
	return b.String()
}

// render turns one result into Markdown.
func render(text string) string {
	v, err := decodeOrdered([]byte(strings.TrimSpace(text)))
	if err != nil {
		return truncate(text, 2000)
	}
	switch x := v.(type) {
	case nil:
		return "No result."
	case []any:
		if len(x) == 0 {
			return "No rows."
		}
		if rows := objects(x); rows != nil {
			return table(rows)
		}
		var b strings.Builder
		for _, e := range x {
			b.WriteString("- " + cell(e) + "\n")
		}
		return strings.TrimSpace(b.String())
	case *object:
		var b strings.Builder
		// the first list of records becomes the table; the other fields are listed above it
		tableKey := ""
		for _, k := range x.keys {
			if arr, ok := x.vals[k].([]any); ok && objects(arr) != nil && tableKey == "" {
				tableKey = k
			}
		}
		for _, k := range x.keys {
			if k == tableKey {
				continue
			}
			fmt.Fprintf(&b, "- **%s**: %s\n", k, cell(x.vals[k]))
		}
		if tableKey != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(table(objects(x.vals[tableKey].([]any))))
		} else if arr, ok := x.vals[firstArrayKey(x)].([]any); ok && len(arr) == 0 && len(x.keys) == 1 {
			return "No rows."
		}
		return strings.TrimSpace(b.String())
	default:
		return cell(x)
	}
}

func firstArrayKey(o *object) string {
	for _, k := range o.keys {
		if _, ok := o.vals[k].([]any); ok {
			return k
		}
	}
	return ""
}

func objects(arr []any) []*object {
	if len(arr) == 0 {
		return nil
	}
	out := make([]*object, 0, len(arr))
	for _, e := range arr {
		o, ok := e.(*object)
		if !ok {
			return nil
		}
		out = append(out, o)
	}
	return out
}

func table(rows []*object) string {
	var cols []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, k := range r.keys {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	var b strings.Builder
	b.WriteString("| " + strings.Join(escapeAll(cols), " | ") + " |\n|")
	for range cols {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for i, r := range rows {
		if i == maxRows {
			fmt.Fprintf(&b, "\n… and %d more rows.", len(rows)-maxRows)
			break
		}
		b.WriteString("|")
		for _, c := range cols {
			v, ok := r.vals[c]
			s := ""
			if ok {
				s = cell(v)
			}
			b.WriteString(" " + escape(s) + " |")
		}
		b.WriteString("\n")
	}
	return strings.TrimSpace(b.String())
}

func escapeAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = escape(x)
	}
	return out
}

func escape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// cell renders a value on one line.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return truncate(x, 300)
	case json.Number:
		return x.String()
	case bool:
		return fmt.Sprint(x)
	case *object:
		parts := make([]string, 0, len(x.keys))
		for _, k := range x.keys {
			parts = append(parts, k+": "+cell(x.vals[k]))
		}
		return truncate(strings.Join(parts, ", "), 300)
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, cell(e))
		}
		return truncate(strings.Join(parts, ", "), 300)
	}
	return fmt.Sprint(v)
}

// object is a JSON object that remembers its key order, so table columns follow the tool's order.
type object struct {
	keys []string
	vals map[string]any
}

func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := dec.Token()
			return o, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// conversation returns the turns a summary, title or hints should draw on: every user and
// assistant turn except an instruction that asks for the summary itself.
func (f *filler) conversation() []message.Message {
	var out []message.Message
	for _, m := range f.msgs {
		if m.Role == message.RoleUser || m.Role == message.RoleAssistant || m.Role == message.RoleTool {
			out = append(out, m)
		}
	}
	if n := len(out); n > 0 && out[n-1].Role == message.RoleUser && isInstruction(out[n-1].Text()) {
		if n > 1 {
			return out[:n-1]
		}
		// a single message holding both the instruction and the transcript
		text := out[0].Text()
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			return []message.Message{message.User(strings.TrimSpace(text[i+1:]))}
		}
	}
	return out
}

func isInstruction(s string) bool {
	t := fold.String(s)
	for _, k := range []string{"summar", "resum", "title", "titulo", "follow-up", "follow up", "hints", "condense"} {
		if strings.Contains(t, k) {
			return true
		}
	}
	return false
}

// summarize lists the first sentence of each recent turn.
func (f *filler) summarize() string {
	conv := f.conversation()
	if len(conv) == 0 {
		return "Nothing has been discussed yet."
	}
	const keep = 12
	var b strings.Builder
	b.WriteString("Summary of the conversation so far:\n")
	if len(conv) > keep {
		fmt.Fprintf(&b, "- (%d earlier turns omitted)\n", len(conv)-keep)
		conv = conv[len(conv)-keep:]
	}
	for _, m := range conv {
		who := "User"
		switch m.Role {
		case message.RoleAssistant:
			who = "Assistant"
			if len(m.ToolCalls) > 0 && strings.TrimSpace(Unlabelled(m)) == "" || strings.HasPrefix(m.Content, "Calling `") {
				names := make([]string, len(m.ToolCalls))
				for i, c := range m.ToolCalls {
					names[i] = c.Name
				}
				fmt.Fprintf(&b, "- Assistant called %s.\n", strings.Join(names, ", "))
				continue
			}
		case message.RoleTool:
			who = "Tool " + m.Name
		}
		// The label is dropped from every quoted turn, whoever wrote it: a summary is the offline
		// model's own text and carries one label, at its end. Nothing is decided by it.
		text := StripMarker(m.Text())
		if text == "" {
			continue
		}
		fmt.Fprintf(&b, "- %s: %s\n", who, truncate(firstSentence(text), 160))
	}
	return strings.TrimSpace(b.String())
}

var leading = setOf("what whats which who how can could would will please show tell give find list me is are the a an i we do does did make get let lets quero qual quais como mostra mostre diz pode podes")

// makeTitle shortens the first user turn to at most seven words.
func (f *filler) makeTitle() string {
	src := f.primary
	for _, m := range f.conversation() {
		if m.Role == message.RoleUser {
			src = m.Text()
			break
		}
	}
	fields := strings.Fields(reURL.ReplaceAllString(firstSentence(src), ""))
	for len(fields) > 1 && leading[fold.String(strings.Trim(fields[0], ",.?!:"))] {
		fields = fields[1:]
	}
	if len(fields) > 7 {
		fields = fields[:7]
	}
	t := strings.TrimRight(strings.Join(fields, " "), " ?!.,:;")
	if t == "" {
		return "New conversation"
	}
	r := []rune(t)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// followUps returns three follow-up questions about the conversation's main subject.
func (f *filler) followUps() []string {
	topic := f.topic()
	l := f.conversationLang()
	out := make([]string, len(l.p().followUps))
	for i, tmpl := range l.p().followUps {
		out[i] = fmt.Sprintf(tmpl, topic)
	}
	return out
}

// conversationLang is the language of the conversation's user turns (not of an instruction the
// caller added), for text written about the conversation.
func (f *filler) conversationLang() lang {
	var b strings.Builder
	for _, m := range f.conversation() {
		if m.Role == message.RoleUser {
			b.WriteString(m.Text())
			b.WriteString(" ")
		}
	}
	if b.Len() == 0 {
		return f.lang
	}
	return f.v.detect(b.String())
}

// topic names what the conversation is about: a quoted or capitalised name in the user's latest
// turns, else their most frequent content word.
func (f *filler) topic() string {
	conv := f.conversation()
	for i := len(conv) - 1; i >= 0; i-- {
		if conv[i].Role != message.RoleUser {
			continue
		}
		t := conv[i].Text()
		if q := quoted(t); len(q) > 0 {
			return q[0]
		}
		if p := capitalPhrases(t); len(p) > 0 {
			return p[0]
		}
	}
	counts := map[string]int{}
	best, bestN := "", 0
	for _, m := range conv {
		if m.Role != message.RoleUser {
			continue
		}
		for _, w := range words(m.Text()) {
			if stop[w] || len(w) < 4 || hasDigit(w) {
				continue
			}
			counts[w]++
			if counts[w] > bestN {
				best, bestN = w, counts[w]
			}
		}
	}
	if best == "" {
		return "this"
	}
	return "the " + best
}
