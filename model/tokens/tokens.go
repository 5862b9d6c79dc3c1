// Package tokens counts tokens offline, for budgets and compaction.
//
// OpenAI models are counted exactly with their BPE encodings (o200k_base for the GPT-4o, GPT-4.1,
// GPT-5 and o-series families, cl100k_base for GPT-4 and GPT-3.5). The encodings ship inside the
// module (through tiktoken-go-loader), so nothing is downloaded at run time; each is parsed once,
// on first use, which takes a few hundred milliseconds. Every other model (Claude, Llama, the
// offline model) gets [Approximate], a cheap counter calibrated to stay within about a quarter of
// the real count on English and Portuguese prose.
//
//	c := tokens.ForModel("gpt-4o")
//	n := tokens.CountRequest(c, req) // messages, tools and schema
package tokens

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// Counter counts the tokens of a text. Implementations are safe for concurrent use.
type Counter interface {
	Count(text string) int
}

// Overheads used by CountMessages, following OpenAI's published accounting for chat models.
const (
	PerMessage  = 3   // role and separators around each message
	PerReply    = 3   // the primer of the assistant's reply
	ImageTokens = 765 // one image at high detail, 1024x1024 (sizes are not known here)
)

func init() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) }

type bpe struct {
	name string
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
}

var encodings = map[string]*bpe{
	"o200k_base":  {name: "o200k_base"},
	"cl100k_base": {name: "cl100k_base"},
	"p50k_base":   {name: "p50k_base"},
	"r50k_base":   {name: "r50k_base"},
}

func (b *bpe) Count(text string) int {
	b.once.Do(func() { b.enc, b.err = tiktoken.GetEncoding(b.name) })
	if b.err != nil {
		return Approximate().Count(text)
	}
	return len(b.enc.EncodeOrdinary(text))
}

// Encoding returns an exact counter for a BPE encoding: "o200k_base", "cl100k_base", "p50k_base"
// or "r50k_base".
func Encoding(name string) (Counter, error) {
	b, ok := encodings[name]
	if !ok {
		return nil, fmt.Errorf("tokens: unknown encoding %q (known: o200k_base, cl100k_base, p50k_base, r50k_base)", name)
	}
	b.once.Do(func() { b.enc, b.err = tiktoken.GetEncoding(b.name) })
	if b.err != nil {
		return nil, fmt.Errorf("tokens: loading %s: %w", name, b.err)
	}
	return b, nil
}

// ForModel returns the best offline counter for a model name, with or without a provider prefix
// ("gpt-4o", "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5", "llama3.1").
func ForModel(name string) Counter {
	if _, rest, ok := strings.Cut(name, ":"); ok {
		name = rest
	}
	name, _, _ = strings.Cut(name, "@")
	n := strings.ToLower(name)
	switch {
	case strings.HasPrefix(n, "gpt-4o"), strings.HasPrefix(n, "gpt-4.1"), strings.HasPrefix(n, "gpt-4.5"),
		strings.HasPrefix(n, "gpt-5"), strings.HasPrefix(n, "o1"), strings.HasPrefix(n, "o3"), strings.HasPrefix(n, "o4"),
		strings.HasPrefix(n, "chatgpt-4o"), strings.HasPrefix(n, "gpt-oss"):
		return encodings["o200k_base"]
	case strings.HasPrefix(n, "gpt-4"), strings.HasPrefix(n, "gpt-3.5"), strings.HasPrefix(n, "text-embedding"):
		return encodings["cl100k_base"]
	}
	return Approximate()
}

type approx struct{}

// Approximate returns a counter that needs no data: about one token per short word, one more for
// every eight further letters of a long word, one per punctuation mark, and one per character of
// scripts written without spaces.
func Approximate() Counter { return approx{} }

func (approx) Count(text string) int {
	n, run := 0, 0
	flush := func() {
		if run > 0 {
			n += 1 + (run-1)/8
			run = 0
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r):
			flush()
			n++
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			run++
		case unicode.IsSpace(r):
			flush()
		default:
			flush()
			n++
		}
	}
	flush()
	return n
}

// CountMessages counts a conversation as a chat model sees it: each message's text, its tool
// calls (name and arguments), images at ImageTokens each, PerMessage per message and PerReply once.
func CountMessages(c Counter, msgs []message.Message) int {
	if len(msgs) == 0 {
		return 0
	}
	n := PerReply
	for _, m := range msgs {
		n += PerMessage + c.Count(string(m.Role)) + c.Count(m.Content)
		if m.Name != "" {
			n += 1 + c.Count(m.Name)
		}
		for _, p := range m.Parts {
			switch p.Type {
			case message.PartText:
				n += c.Count(p.Text)
			case message.PartImage:
				n += ImageTokens
			}
		}
		for _, tc := range m.ToolCalls {
			n += PerMessage + c.Count(tc.Name) + c.Count(string(tc.Arguments))
		}
	}
	return n
}

// CountTools counts tool descriptions as they are sent to a model.
func CountTools(c Counter, tools []model.ToolSpec) int {
	n := 0
	for _, t := range tools {
		n += PerMessage + c.Count(t.Name) + c.Count(t.Description) + c.Count(compact(t.Parameters))
	}
	return n
}

// CountRequest counts everything a request sends: messages, tools and the output schema.
func CountRequest(c Counter, req *model.Request) int {
	if req == nil {
		return 0
	}
	n := CountMessages(c, req.Messages) + CountTools(c, req.Tools)
	if req.Schema != nil {
		n += c.Count(compact(req.Schema.JSON))
	}
	return n
}

func compact(raw json.RawMessage) string {
	var b strings.Builder
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	out, _ := json.Marshal(v)
	b.Write(out)
	return b.String()
}
