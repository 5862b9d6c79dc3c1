package orchestrator

import (
	"context"
	"strings"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server/appkit"
)

// PortugueseReminder is added for the one retry of a reply that was not in pt-PT.
const PortugueseReminder = "Responde apenas em português de Portugal (pt-PT), seja qual for a língua da mensagem ou dos dados. Não mostres nomes de ferramentas, argumentos, IDs nem erros internos."

// FallbackReply is the answer when a model cannot write pt-PT.
const FallbackReply = "Desculpa, não consegui responder como devia. Podes repetir o pedido por outras palavras?"

// guardedTurn calls a provider's model and streams its reply to the user only as it is fit to
// read: sanitised a sentence at a time (Sanitize), and only once its first words read as
// Portuguese. A reply in another language is asked again once with PortugueseReminder; if
// still not pt-PT, the user reads the tools' results (Reply) or FallbackReply.
func (o *Orchestrator) guardedTurn(ctx context.Context, m model.Model, req *model.Request, s State) (message.Message, error) {
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
	var pending strings.Builder // text not yet shown
	decided, portuguese, hasCalls := false, false, false
	shown := ""
	flush := func(final bool) {
		text := pending.String()
		if !decided && (final || len(strings.Fields(text)) >= 8) {
			decided, portuguese = true, Portuguese(text)
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
	// Not pt-PT: ask once more, then fall back to the tools' own texts.
	retry := *req
	retry.Messages = append(append([]message.Message(nil), req.Messages...), message.System(PortugueseReminder))
	retry.Tools = nil
	if r2, err := m.Generate(ctx, &retry); err == nil && Portuguese(r2.Message.Text()) && strings.TrimSpace(r2.Message.Text()) != "" {
		out.Content = Sanitize(r2.Message.Text())
	} else if text := Reply(s.Messages); text != "" {
		out.Content = text
	} else {
		out.Content = FallbackReply
	}
	emit(out.Content)
	return out, nil
}
