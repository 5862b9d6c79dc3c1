package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

// ErrNoConversation means a helper was given no user or assistant text to work from.
var ErrNoConversation = errors.New("conversation: no user or assistant text to work from")

const summaryPrompt = `Condense the conversation you are given into a running summary that lets the assistant continue it without the transcript. Keep names, numbers, dates, decisions, the user's preferences and open questions. Use at most 150 words of short bullet points, no preamble.`

// SummarizeOptions change how [Summarize] asks for a summary. Nil options, and every zero
// field, are the defaults.
type SummarizeOptions struct {
	// Prompt replaces the default instruction (a running summary of at most 150 words of short
	// bullets): an application's own compression prompt, which says what to keep. Empty means
	// the default.
	Prompt string
}

// Summarize returns a running summary of a conversation, written by m (a fast model is enough).
// previous is the summary of what came before msgs, or ""; it is folded into the new summary, so
// an application can keep one summary per session and update it after each exchange:
//
//	sum, err := conversation.Summarize(ctx, fast, session.Summary, newMessages, nil)
//
// Tool calls and results are shown to m as text, so no tools need declaring. The offline model
// answers with one bullet per recent turn, labelled as its own.
func Summarize(ctx context.Context, m model.Model, previous string, msgs []message.Message, o *SummarizeOptions) (string, error) {
	prompt := summaryPrompt
	if o != nil && strings.TrimSpace(o.Prompt) != "" {
		prompt = o.Prompt
	}
	if m == nil {
		return "", errors.New("conversation: Summarize needs a model")
	}
	var in []message.Message
	if strings.TrimSpace(previous) != "" {
		in = append(in, message.Message{Role: message.RoleSystem, Content: previous, Metadata: map[string]any{MetaSummary: 0}})
	}
	in = append(in, msgs...)
	if len(transcript(in, 2000)) == 0 {
		return "", ErrNoConversation
	}
	s, err := summarizeLabelled(ctx, m, prompt, in)
	if err != nil {
		return "", fmt.Errorf("conversation: summarising the conversation: %w", err)
	}
	return s, nil
}

func summarizeLabelled(ctx context.Context, m model.Model, prompt string, msgs []message.Message) (string, error) {
	turns := transcript(msgs, 2000)
	req := &model.Request{Messages: append(append([]message.Message{message.System(prompt)}, turns...),
		message.User("Summarize the conversation above as described."))}
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return "", err
	}
	text := resp.Message.Text()
	isOffline := offline.IsOffline(resp.Message.Metadata)
	if isOffline {
		text = offline.StripMarker(text)
	}
	s := cleanRecap(text)
	if isOffline {
		s += "\n\n" + offline.Marker // the label a person reads
	}
	return s, nil
}

// HintCount is how many follow-up questions [Hints] returns.
const HintCount = 3

const hintsPrompt = `Suggest three follow-up questions the user could ask next, each short, specific to this conversation, and answerable by the assistant. Write them as the user would.`

var hintsSchema = &model.Schema{Name: "follow_ups", Description: "three follow-up questions",
	JSON: json.RawMessage(`{"type":"object","properties":{"hints":{"type":"array","items":{"type":"string"},"minItems":3,"maxItems":3,"description":"follow-up questions the user might ask next"}},"required":["hints"]}`)}

// Hints returns three follow-up questions the user might ask next, written by m with structured
// output. Only the last four user and assistant turns are shown, without tool calls and results
// (they are long and add little to a suggestion). The offline model suggests questions about the
// conversation's main subject (a quoted or capitalised name, or its most frequent word).
func Hints(ctx context.Context, m model.Model, msgs []message.Message) ([]string, error) {
	if m == nil {
		return nil, errors.New("conversation: Hints needs a model")
	}
	conv := textTurns(msgs, 4)
	if len(conv) == 0 {
		return nil, ErrNoConversation
	}
	req := &model.Request{Messages: append(append([]message.Message{message.System(hintsPrompt)}, conv...),
		message.User("Give three follow-up questions for this conversation.")), Schema: hintsSchema}
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("conversation: suggesting follow-up questions: %w", err)
	}
	var out struct {
		Hints []string `json:"hints"`
	}
	if err := json.Unmarshal(resp.Structured, &out); err != nil {
		return nil, fmt.Errorf("conversation: suggesting follow-up questions: reply %s: %w", resp.Structured, err)
	}
	var hints []string
	seen := map[string]bool{}
	for _, h := range out.Hints {
		h = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(h), "-*•0123456789.) "))
		if h == "" || seen[strings.ToLower(h)] {
			continue
		}
		seen[strings.ToLower(h)] = true
		hints = append(hints, h)
	}
	if len(hints) > HintCount {
		hints = hints[:HintCount]
	}
	if len(hints) == 0 {
		return nil, errors.New("conversation: suggesting follow-up questions: the model gave none")
	}
	return hints, nil
}

// TitleMaxRunes bounds the titles [Title] returns (the offline label aside).
const TitleMaxRunes = 60

const titlePrompt = `Write a title of at most six words for this conversation, naming its subject. Reply with the title only: no quotes, no final period.`

// Title returns a short title for a session, from its first exchange, written by m. The title is
// one line of at most [TitleMaxRunes] characters, without surrounding quotes, a "Title:" prefix
// or a final period. The offline model shortens the first user message to its subject and keeps
// its label after the title.
func Title(ctx context.Context, m model.Model, msgs []message.Message) (string, error) {
	if m == nil {
		return "", errors.New("conversation: Title needs a model")
	}
	conv := textTurns(msgs, 0)
	if len(conv) == 0 {
		return "", ErrNoConversation
	}
	// The first user message and the answer to it say what the session is about.
	first := 0
	for first < len(conv) && conv[first].Role != message.RoleUser {
		first++
	}
	if first == len(conv) {
		first = 0
	}
	conv = conv[first:min(len(conv), first+2)]
	req := &model.Request{Messages: append(append([]message.Message{message.System(titlePrompt)}, conv...),
		message.User("Write the title for this conversation."))}
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return "", fmt.Errorf("conversation: writing a title: %w", err)
	}
	label := offline.IsOffline(resp.Message.Metadata)
	t := cleanTitle(offline.Unlabelled(resp.Message))
	if t == "" {
		return "", errors.New("conversation: writing a title: the model's reply was empty")
	}
	if label {
		t += " " + offline.Marker
	}
	return t, nil
}

func cleanTitle(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.Trim(strings.TrimLeft(s, "# "), "* ")
	if lower := strings.ToLower(s); strings.HasPrefix(lower, "title:") {
		s = strings.TrimSpace(s[len("title:"):])
	}
	for _, q := range []string{`"`, "'", "“”", "*"} {
		open, close := q[:len(q)/2], q[len(q)/2:]
		if len(q) == 1 {
			open, close = q, q
		}
		if strings.HasPrefix(s, open) && strings.HasSuffix(s, close) && len(s) > len(open)+len(close) {
			s = strings.TrimSpace(s[len(open) : len(s)-len(close)])
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimRight(s, ".")
	r := []rune(s)
	if len(r) > TitleMaxRunes {
		cut := TitleMaxRunes
		for cut > TitleMaxRunes/2 && !unicode.IsSpace(r[cut]) {
			cut--
		}
		s = strings.TrimRight(string(r[:cut]), " ,;:-") + "…"
	}
	return s
}

// textTurns returns the user and assistant turns that carry text, without tool calls, tool
// results or system messages; the last n of them when n > 0.
func textTurns(msgs []message.Message, n int) []message.Message {
	var out []message.Message
	for _, m := range msgs {
		if m.Role != message.RoleUser && m.Role != message.RoleAssistant {
			continue
		}
		text := strings.TrimSpace(offline.Unlabelled(m))
		if text == "" {
			continue
		}
		out = append(out, message.Message{Role: m.Role, Content: text})
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
