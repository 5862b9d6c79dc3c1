package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// chatRenderer prints one run's stream as a conversation: the answer token by token, tool calls
// and their results as they happen, errors; it collects the interrupts the run paused at.
type chatRenderer struct {
	out         io.Writer
	runID       string
	streamed    map[string]bool // assistant messages whose tokens were printed
	shownCalls  map[string]bool
	shownTools  map[string]bool // tool messages printed
	atLineStart bool
	interrupts  []chatInterrupt
	seenInts    map[string]bool
	failed      string // the message of an error event
	tokens      int    // message chunks printed
	hints       []string
}

func newChatRenderer(out io.Writer) *chatRenderer {
	return &chatRenderer{
		out: out, streamed: map[string]bool{}, shownCalls: map[string]bool{},
		shownTools: map[string]bool{}, seenInts: map[string]bool{}, atLineStart: true,
	}
}

func (r *chatRenderer) write(s string) {
	if s == "" {
		return
	}
	fmt.Fprint(r.out, s)
	r.atLineStart = strings.HasSuffix(s, "\n")
}

// newline ends the current line if something is on it.
func (r *chatRenderer) newline() {
	if !r.atLineStart {
		r.write("\n")
	}
}

// handle renders one event. Event names of subgraphs ("updates|ns") are treated as their mode.
func (r *chatRenderer) handle(ev sseEvent) {
	mode, _, _ := strings.Cut(ev.Event, "|")
	switch mode {
	case "metadata":
		var md struct {
			RunID string `json:"run_id"`
		}
		if json.Unmarshal(ev.Data, &md) == nil && md.RunID != "" {
			r.runID = md.RunID
		}
	case "messages":
		var pair []json.RawMessage
		if json.Unmarshal(ev.Data, &pair) != nil || len(pair) == 0 {
			return
		}
		var m chatMessage
		if json.Unmarshal(pair[0], &m) != nil || m.role() != "assistant" {
			return
		}
		if t := m.text(); t != "" {
			r.write(t)
			r.streamed[m.ID] = true
			r.tokens++
		}
	case "updates":
		var upd map[string]json.RawMessage
		if json.Unmarshal(ev.Data, &upd) != nil {
			return
		}
		for node, v := range upd {
			if node == "__interrupt__" {
				r.addInterrupts(v)
				continue
			}
			r.showUpdate(v)
		}
	case "values":
		var vals map[string]json.RawMessage
		if json.Unmarshal(ev.Data, &vals) == nil {
			if v, ok := vals["__interrupt__"]; ok {
				r.addInterrupts(v)
			}
		}
	case "custom":
		// A graph's follow-up suggestions ({"hints": [...]}), shown once the answer is done.
		var c struct {
			Hints []string `json:"hints"`
		}
		if json.Unmarshal(ev.Data, &c) == nil && len(c.Hints) > 0 {
			r.hints = c.Hints
		}
	case "error":
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(ev.Data, &e)
		r.failed = firstNonEmpty(e.Message, e.Error, string(ev.Data))
		r.newline()
		r.write("error: the run failed: " + r.failed + "\n")
	}
}

// showUpdate prints what a node's update adds to the conversation: answers that were not
// streamed, the tool calls the model made, and tool results.
func (r *chatRenderer) showUpdate(raw json.RawMessage) {
	var upd struct {
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(raw, &upd) != nil || len(upd.Messages) == 0 {
		return
	}
	var msgs []chatMessage
	if json.Unmarshal(upd.Messages, &msgs) != nil {
		var one chatMessage
		if json.Unmarshal(upd.Messages, &one) != nil {
			return
		}
		msgs = []chatMessage{one}
	}
	for _, m := range msgs {
		switch m.role() {
		case "assistant":
			if !r.streamed[m.ID] && m.text() != "" {
				r.newline()
				r.write(m.text() + "\n")
				r.streamed[m.ID] = true
			}
			for _, c := range m.ToolCalls {
				if c.ID != "" && r.shownCalls[c.ID] {
					continue
				}
				r.shownCalls[c.ID] = true
				r.newline()
				r.write(fmt.Sprintf("  -> %s %s\n", c.Name, oneLine(compactJSON(c.arguments()), 200)))
			}
		case "tool":
			if m.ID != "" && r.shownTools[m.ID] {
				continue
			}
			r.shownTools[m.ID] = true
			r.newline()
			tag := "<-"
			if m.failed() {
				tag = "<- error from"
			}
			if table := listingsTable(m.structured()); table != "" && !m.failed() {
				r.write(fmt.Sprintf("  %s %s:\n%s", tag, m.Name, table))
				continue
			}
			r.write(fmt.Sprintf("  %s %s: %s\n", tag, m.Name, oneLine(m.text(), 300)))
		}
	}
}

func (r *chatRenderer) addInterrupts(raw json.RawMessage) {
	var ins []chatInterrupt
	if json.Unmarshal(raw, &ins) != nil {
		return
	}
	for _, in := range ins {
		key := in.ID
		if key == "" {
			key = string(in.Value)
		}
		if r.seenInts[key] {
			continue
		}
		r.seenInts[key] = true
		r.interrupts = append(r.interrupts, in)
	}
}

// finish ends the answer's last line and shows the follow-up suggestions.
func (r *chatRenderer) finish() {
	r.newline()
	if len(r.hints) > 0 {
		r.write("You could ask:\n")
		for i, h := range r.hints {
			r.write(fmt.Sprintf("  %d. %s\n", i+1, oneLine(h, 200)))
		}
		r.hints = nil
	}
}

// oneLine shortens s to one line of at most n runes, marking what was cut.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:n]) + "..."
}

func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

func prettyJSONText(raw []byte) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// printConversation prints a thread's messages for /history and for a resumed session.
func printConversation(out io.Writer, msgs []chatMessage) {
	if len(msgs) == 0 {
		fmt.Fprintln(out, "(no messages yet)")
		return
	}
	for _, m := range msgs {
		switch m.role() {
		case "user":
			fmt.Fprintf(out, "you: %s\n", m.text())
		case "assistant":
			if t := m.text(); t != "" {
				fmt.Fprintf(out, "assistant: %s\n", t)
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(out, "  -> %s %s\n", c.Name, oneLine(compactJSON(c.arguments()), 200))
			}
		case "tool":
			fmt.Fprintf(out, "  <- %s: %s\n", m.Name, oneLine(m.text(), 300))
		case "system":
			fmt.Fprintf(out, "system: %s\n", oneLine(m.text(), 300))
		default:
			fmt.Fprintf(out, "%s: %s\n", m.role(), m.text())
		}
	}
}
