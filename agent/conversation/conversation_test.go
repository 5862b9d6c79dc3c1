package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
)

func projectChat() []message.Message {
	call := message.ToolCall{ID: "c1", Name: "get_project_health", Arguments: json.RawMessage(`{"project":"Nazareth Solar"}`)}
	return []message.Message{
		message.User(`What is the health status of "Nazareth Solar"?`),
		message.Assistant("", call),
		message.ToolResult("c1", call.Name, `{"health":"green"}`),
		offlineAnswer("It is green. All milestones are on track. " + offline.Marker),
	}
}

// offlineAnswer is an answer as the offline model writes it: labelled in its metadata.
func offlineAnswer(text string) message.Message {
	m := message.Assistant(text)
	m.Metadata = map[string]any{"provider": offline.Name, offline.MetaOffline: true}
	return m
}

func TestOfflineConversationHelpers(t *testing.T) {
	ctx := context.Background()
	m := offline.New(nil)
	msgs := projectChat()

	title, err := conversation.Title(ctx, m, msgs)
	if err != nil || title != `Health status of "Nazareth Solar" `+offline.Marker {
		t.Errorf("title = %q, %v", title, err)
	}
	hints, err := conversation.Hints(ctx, m, msgs)
	if err != nil || len(hints) != 3 {
		t.Fatalf("hints = %q, %v", hints, err)
	}
	for _, h := range hints {
		if !strings.Contains(h, "Nazareth Solar") || !strings.HasSuffix(h, "?") {
			t.Errorf("hint %q is not a question about Nazareth Solar", h)
		}
	}
	sum, err := conversation.Summarize(ctx, m, "", msgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- User: What is the health status", "get_project_health", "It is green.", offline.Marker} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.HasPrefix(sum, "Summary of") {
		t.Errorf("summary keeps its heading:\n%s", sum)
	}
	// Deterministic: the same input gives the same output.
	again, _ := conversation.Summarize(ctx, m, "", msgs, nil)
	hints2, _ := conversation.Hints(ctx, m, msgs)
	if again != sum || strings.Join(hints2, "|") != strings.Join(hints, "|") {
		t.Error("offline helpers are not deterministic")
	}
}

func TestSummarizeFoldsPreviousSummary(t *testing.T) {
	m := scripted.New(scripted.Text("- Nazareth Solar is green.\n- The user now asks about budgets."))
	sum, err := conversation.Summarize(context.Background(), m, "- The user manages Nazareth Solar.", []message.Message{message.User("And its budget?"), message.Assistant("$1.2M of $1.5M spent.")}, nil)
	if err != nil || sum != "- Nazareth Solar is green.\n- The user now asks about budgets." {
		t.Fatalf("sum = %q, %v", sum, err)
	}
	req := m.Requests()[0]
	if roles(req.Messages) != "suau" || req.Messages[1].Content != "- The user manages Nazareth Solar.\nAnd its budget?" {
		t.Errorf("summariser input (%s): %+v", roles(req.Messages), req.Messages)
	}
}

func TestHintsUseRecentTextTurnsAndClean(t *testing.T) {
	m := scripted.New(scripted.Text(`{"hints":["1. What about SP15?","- what about SP15?","Which vendor is cheapest?"]}`))
	var msgs []message.Message
	for i := range 5 {
		msgs = append(msgs, message.User("question "+string(rune('a'+i))), message.Assistant("answer"))
	}
	msgs = append(msgs, projectChat()...)
	hints, err := conversation.Hints(context.Background(), m, msgs)
	if err != nil || strings.Join(hints, "|") != "What about SP15?|Which vendor is cheapest?" {
		t.Fatalf("hints = %q, %v", hints, err)
	}
	req := m.Requests()[0]
	// system, the last four text turns, the instruction; no tool messages.
	if len(req.Messages) != 6 || req.Schema == nil {
		t.Fatalf("request (%s)", roles(req.Messages))
	}
	for _, msg := range req.Messages {
		if msg.Role == message.RoleTool || len(msg.ToolCalls) > 0 || strings.Contains(msg.Content, offline.Marker) {
			t.Errorf("hints request carries %+v", msg)
		}
	}
}

func TestHintsBadReplies(t *testing.T) {
	// Two replies that miss the schema: a structured-output error.
	m := scripted.New(scripted.Text(`{"hints":["only one"]}`), scripted.Text(`{"hints":[]}`))
	if _, err := conversation.Hints(context.Background(), m, projectChat()); !errors.Is(err, model.ErrStructuredOutput) {
		t.Errorf("err = %v", err)
	}
	m = scripted.New(scripted.Text(`{"hints":["  ","-","1."]}`))
	if _, err := conversation.Hints(context.Background(), m, projectChat()); err == nil || !strings.Contains(err.Error(), "gave none") {
		t.Errorf("err = %v", err)
	}
	if _, err := conversation.Hints(context.Background(), scripted.New(), []message.Message{message.System("only a prompt")}); !errors.Is(err, conversation.ErrNoConversation) {
		t.Errorf("empty conversation: %v", err)
	}
	if _, err := conversation.Hints(context.Background(), nil, projectChat()); err == nil {
		t.Error("nil model accepted")
	}
}

func TestTitleCleaning(t *testing.T) {
	cases := map[string]string{
		`"Nazareth Solar health"`:              "Nazareth Solar health",
		"Title: Day-ahead prices for NP15.":    "Day-ahead prices for NP15",
		"**Budget review**\nextra explanation": "Budget review",
		"“Quoted title”":                       "Quoted title",
		strings.Repeat("word ", 30):            "word word word word word word word word word word word word…",
	}
	for reply, want := range cases {
		m := scripted.New(scripted.Text(reply))
		got, err := conversation.Title(context.Background(), m, projectChat())
		if err != nil || got != want {
			t.Errorf("reply %q: title %q, %v; want %q", reply, got, err, want)
		}
		if msgs := m.Requests()[0].Messages; roles(msgs) != "suau" {
			t.Errorf("title request roles = %s", roles(msgs))
		}
	}
	if _, err := conversation.Title(context.Background(), scripted.New(scripted.Text("  ")), projectChat()); err == nil {
		t.Error("empty title accepted")
	}
	if _, err := conversation.Title(context.Background(), scripted.New(), nil); !errors.Is(err, conversation.ErrNoConversation) {
		t.Errorf("no conversation: %v", err)
	}
	if _, err := conversation.Summarize(context.Background(), scripted.New(), "", nil, nil); !errors.Is(err, conversation.ErrNoConversation) {
		t.Errorf("summary of nothing: %v", err)
	}
}

// TestOfflineLabelComesFromMetadata: a title is labelled as the offline model's when the reply's
// metadata says so, whatever its text, and not when only the text looks like it.
func TestOfflineLabelComesFromMetadata(t *testing.T) {
	ctx := context.Background()
	labelled := &model.Response{Message: offlineAnswer("Budget review")}
	got, err := conversation.Title(ctx, scripted.New(scripted.Respond(labelled)), projectChat())
	if err != nil || got != "Budget review "+offline.Marker {
		t.Errorf("title from an offline-labelled reply = %q, %v", got, err)
	}
	got, err = conversation.Title(ctx, scripted.New(scripted.Text("Budget review")), projectChat())
	if err != nil || got != "Budget review" {
		t.Errorf("title from a provider = %q, %v", got, err)
	}
}

// TestHintsInTheConversationsLanguage: the offline model's follow-up questions follow the
// language of the user's turns, not of the instruction.
func TestHintsInTheConversationsLanguage(t *testing.T) {
	msgs := []message.Message{
		message.User("Quero remodelar a cozinha do apartamento em Alfama"),
		offlineAnswer("A remodelação custa entre 15 e 25 mil euros. " + offline.Marker),
	}
	hints, err := conversation.Hints(context.Background(), offline.New(nil), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(hints) != 3 || !strings.HasPrefix(hints[0], "Pode dizer-me mais sobre") {
		t.Fatalf("hints = %q, want Portuguese questions", hints)
	}
}

func TestSummarizeWithAnApplicationsPrompt(t *testing.T) {
	m := scripted.New(scripted.Text("- Prefers Ascend curves for CAISO."))
	prompt := "Summarize in 3-5 bullets, keeping filters."
	sum, err := conversation.Summarize(context.Background(), m, "", []message.Message{message.User("Ascend for CAISO, please"), message.Assistant("Noted.")},
		&conversation.SummarizeOptions{Prompt: prompt})
	if err != nil || sum != "- Prefers Ascend curves for CAISO." {
		t.Fatalf("sum = %q, %v", sum, err)
	}
	if got := m.Requests()[0].Messages[0]; got.Role != message.RoleSystem || got.Content != prompt {
		t.Fatalf("the summariser was instructed with %+v, want the application's prompt", got)
	}
}

// TestOfflineSummaryLabelComesFromMetadata: a summary is labelled as the offline model's when
// the reply's metadata says so, even without the label in its text; a provider's reply that
// happens to contain the label's text is kept as written and not relabelled.
func TestOfflineSummaryLabelComesFromMetadata(t *testing.T) {
	ctx := context.Background()
	got, err := conversation.Summarize(ctx, scripted.New(scripted.Respond(&model.Response{Message: offlineAnswer("- The budget was reviewed.")})), "", projectChat(), nil)
	if err != nil || got != "- The budget was reviewed.\n\n"+offline.Marker {
		t.Errorf("summary from an offline reply without the label in its text = %q, %v", got, err)
	}
	provider := message.Assistant("- The log line said " + offline.Marker + " twice.")
	provider.Metadata = map[string]any{"provider": "openai"}
	got, err = conversation.Summarize(ctx, scripted.New(scripted.Respond(&model.Response{Message: provider})), "", projectChat(), nil)
	if err != nil || got != "- The log line said "+offline.Marker+" twice." {
		t.Errorf("summary from a provider whose text contains the label = %q, %v", got, err)
	}
}
