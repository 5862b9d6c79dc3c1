package rehab

import (
	"context"
	"strings"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server/appkit"
)

// PortugueseReminder is added for the one retry of a reply that was not in pt-PT
// (prompts/languages.json).
var PortugueseReminder = ReplyLanguages["pt"].Reminder

// FallbackReply is the answer when a model cannot write pt-PT (prompts/languages.json).
var FallbackReply = ReplyLanguages["pt"].Fallback

// guardedTurn calls a provider's model and streams its reply to the user only as it is fit to
// read: sanitised a sentence at a time (Sanitize), and only once its first words read as the
// reply language (pt-PT unless the profile chose another, State.ReplyLanguage). A reply in
// another language is asked again once with the language's reminder; if still not in it, the
// user reads the tools' results (Reply) or the language's fallback.
func (o *Orchestrator) guardedTurn(ctx context.Context, m model.Model, req *model.Request, s State) (message.Message, error) {
	lang := s.ReplyLanguage
	if _, ok := ReplyLanguages[lang]; !ok {
		lang = "pt"
	}
	tongue := ReplyLanguages[lang]
	if tongue.Instruction != "" {
		r := *req
		r.Messages = append(append([]message.Message(nil), req.Messages...), message.System(tongue.Instruction))
		req = &r
	}
	info, inNode := graph.InfoFrom(ctx)
	id := message.NewID()
	md := map[string]any{"node": info.Node}
	if provider, name := model.IdentityOf(m); provider != "" {
		md["provider"], md["model"] = provider, name
	}
	emit := func(text string) {
		if !inNode {
			return
		}
		appkit.EmitText(ctx, id, text, md)
	}
	var pending strings.Builder                          // text not yet shown
	decided, portuguese, hasCalls := false, false, false // portuguese: in the reply language
	shown := ""
	flush := func(final bool) {
		text := pending.String()
		if !decided && (final || len(strings.Fields(text)) >= 8) {
			decided, portuguese = true, InLanguage(text, lang)
		}
		if !decided || !portuguese || hasCalls {
			return
		}
		cut := len(text)
		if !final {
			cut = strings.LastIndexAny(text, ".!?\n")
			if cut < 0 {
				return
			}
			cut++
		}
		seg := Sanitize(text[:cut])
		if seg != "" {
			if shown != "" && !strings.HasPrefix(text, "\n") {
				seg = " " + seg
			}
			emit(seg)
			shown += seg
		}
		rest := text[cut:]
		pending.Reset()
		pending.WriteString(rest)
	}
	stream := func(yield func(model.Chunk, error) bool) {
		for ch, err := range m.Stream(ctx, req) {
			if err == nil {
				if ch.ToolCall != nil {
					hasCalls = true
				}
				if ch.Text != "" {
					pending.WriteString(ch.Text)
					flush(false)
				}
			}
			if !yield(ch, err) {
				return
			}
		}
	}
	resp, err := model.Collect(stream)
	if err != nil {
		return message.Message{}, err
	}
	out := resp.Message
	out.ID = id
	if len(out.ToolCalls) > 0 {
		out.Content = "" // what a model says before calling tools is not for the user
		return out, nil
	}
	flush(true)
	if portuguese {
		out.Content = Sanitize(out.Content)
		return out, nil
	}
	// Not in the reply language: ask once more, then fall back to the tools' own texts.
	retry := *req
	retry.Messages = append(append([]message.Message(nil), req.Messages...), message.System(tongue.Reminder))
	retry.Tools = nil
	if r2, err := m.Generate(ctx, &retry); err == nil && InLanguage(r2.Message.Text(), lang) && strings.TrimSpace(r2.Message.Text()) != "" {
		out.Content = Sanitize(r2.Message.Text())
	} else if text := Reply(s.Messages); text != "" && lang == "pt" {
		out.Content = text // the tools' own texts are pt-PT
	} else {
		out.Content = tongue.Fallback
	}
	emit(out.Content)
	return out, nil
}
