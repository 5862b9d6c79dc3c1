package tokens_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/tokens"
)

func TestEncodingExactCounts(t *testing.T) {
	// Reference counts published for these encodings.
	cases := []struct {
		enc, text string
		want      int
	}{
		{"cl100k_base", "hello world", 2},
		{"o200k_base", "hello world", 2},
		{"cl100k_base", "tiktoken is great!", 6},
		{"cl100k_base", "", 0},
	}
	for _, c := range cases {
		enc, err := tokens.Encoding(c.enc)
		if err != nil {
			t.Fatal(err)
		}
		if got := enc.Count(c.text); got != c.want {
			t.Errorf("%s.Count(%q) = %d, want %d", c.enc, c.text, got, c.want)
		}
	}
}

func TestUnknownEncoding(t *testing.T) {
	_, err := tokens.Encoding("p100k")
	if err == nil || !strings.HasPrefix(err.Error(), "tokens: unknown encoding") {
		t.Fatalf("err = %v", err)
	}
}

func TestForModel(t *testing.T) {
	o200, _ := tokens.Encoding("o200k_base")
	cl100, _ := tokens.Encoding("cl100k_base")
	for name, want := range map[string]tokens.Counter{
		"gpt-4o": o200, "openai:gpt-4o-mini": o200, "o3-mini": o200,
		"gpt-4": cl100, "gpt-3.5-turbo": cl100,
		"anthropic:claude-sonnet-4-5": tokens.Approximate(), "openai-compatible:llama3.1@http://x": tokens.Approximate(),
	} {
		if got := tokens.ForModel(name); got != want {
			t.Errorf("ForModel(%q) = %T, want %T", name, got, want)
		}
	}
}

func TestApproximateIsCloseToBPE(t *testing.T) {
	text := strings.Repeat("The research supervisor decomposes the approved plan into parallel tasks, "+
		"dispatches task agents, and reviews their findings before writing a structured summary. "+
		"O agente analisa o imóvel em Alfama e estima os custos de renovação por divisão. ", 20)
	enc, _ := tokens.Encoding("o200k_base")
	exact, est := enc.Count(text), tokens.Approximate().Count(text)
	ratio := float64(est) / float64(exact)
	if ratio < 0.75 || ratio > 1.25 {
		t.Fatalf("approximate %d vs exact %d: ratio %.2f outside [0.75, 1.25]", est, exact, ratio)
	}
	if tokens.Approximate().Count("日本語のテキスト") != 8 {
		t.Errorf("CJK characters should count one each")
	}
}

func TestCountMessagesAndRequest(t *testing.T) {
	c := tokens.Approximate()
	msgs := []message.Message{message.System("be brief"), message.User("hello there")}
	base := tokens.CountMessages(c, msgs)
	if base != tokens.PerReply+2*tokens.PerMessage+c.Count("system")+c.Count("user")+2+2 {
		t.Errorf("CountMessages = %d", base)
	}
	withImage := append(msgs, message.Message{Role: message.RoleUser, Parts: []message.Part{{Type: message.PartImage, ImageURL: "https://x/y.png"}}})
	if got := tokens.CountMessages(c, withImage); got < base+tokens.ImageTokens {
		t.Errorf("image not counted: %d", got)
	}
	req := &model.Request{Messages: msgs, Tools: []model.ToolSpec{{Name: "search", Description: "search the web", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	if got := tokens.CountRequest(c, req); got <= base {
		t.Errorf("CountRequest %d should exceed messages alone %d", got, base)
	}
	if tokens.CountMessages(c, nil) != 0 || tokens.CountRequest(c, nil) != 0 {
		t.Error("empty input should count 0")
	}
}

func BenchmarkCountO200k(b *testing.B) {
	enc, _ := tokens.Encoding("o200k_base")
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		enc.Count(text)
	}
}

func BenchmarkCountApproximate(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tokens.Approximate().Count(text)
	}
}
