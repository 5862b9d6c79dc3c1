package conversation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/tokens"
)

// MetaSummary is the metadata key that marks a message written by compaction; its value is the
// number of messages the summary replaced.
const MetaSummary = "trellis_summary_of"

// MetaTurns is the metadata key of a summary that replaced model turns of the current request;
// the ReAct agent counts them against its turn limit.
const MetaTurns = "trellis_summary_turns"

// RecapPrefix opens the text of every summary message compaction writes.
const RecapPrefix = "Recap of the earlier conversation:\n"

// CompactOptions configure compaction. Model is required; every other zero value is a documented
// default.
type CompactOptions struct {
	// Model writes the summaries. A cheap, fast model is enough (model.RoleFast).
	Model model.Model
	// Counter counts tokens; nil means tokens.Approximate(). Use tokens.ForModel(name) for the
	// model whose window is being protected.
	Counter tokens.Counter
	// MaxTokens is the budget: a conversation (or, for the model wrapper and the ReAct agent, a
	// whole request with its tools) counted above it is compacted. Zero means 12000.
	MaxTokens int
	// KeepTurns is how many of the latest turns stay verbatim; a turn starts at a user message.
	// When the conversation holds no more turns than that but its latest turn holds more than
	// KeepTurns model replies (a long run of tool calls), the boundary falls inside that turn:
	// its question and its latest KeepTurns replies (each with its tool results) stay. Zero
	// means 3.
	KeepTurns int
	// Prompt is the summariser's instruction; empty means a default that asks to keep names,
	// numbers, dates, decisions, open questions and what tools returned.
	Prompt string
	// MaxChars cuts the text of each older message shown to the summariser; zero means 2000.
	MaxChars int
}

func (o *CompactOptions) defaults() (CompactOptions, error) {
	if o == nil || o.Model == nil {
		return CompactOptions{}, errors.New("conversation: compaction needs CompactOptions.Model, the model that writes summaries")
	}
	c := *o
	if c.Counter == nil {
		c.Counter = tokens.Approximate()
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = 12000
	}
	if c.KeepTurns <= 0 {
		c.KeepTurns = 3
	}
	if c.MaxChars <= 0 {
		c.MaxChars = 2000
	}
	if c.Prompt == "" {
		c.Prompt = defaultCompactPrompt
	}
	return c, nil
}

const defaultCompactPrompt = `Condense the conversation you are given into a short recap for the assistant that continues it. Keep names, numbers, dates, decisions, the user's preferences, open questions and what each tool returned. Write short bullet points, no preamble.`

// OverBudget reports whether msgs count more tokens than the budget of o.
func OverBudget(msgs []message.Message, o *CompactOptions) bool {
	c, err := o.defaults()
	if err != nil {
		return false
	}
	return tokens.CountMessages(c.Counter, msgs) > c.MaxTokens
}

// ReplacedTurns returns the model turns of the current request that m, a summary written by
// compaction, replaced (its [MetaTurns]); 0 for any other message. The ReAct agent counts them
// against its turn limit.
func ReplacedTurns(m message.Message) int {
	switch v := m.Metadata[MetaTurns].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// Compact replaces the older part of a conversation with one summary message written by
// o.Model, and returns the new conversation: the leading system messages, the summary (a system
// message whose text starts with [RecapPrefix] and whose metadata holds [MetaSummary]), the
// latest user message, and the latest turns verbatim. A tool call is never separated from its
// result: the boundary always falls between whole exchanges. Earlier summaries are folded into
// the new one. When nothing is old enough to summarise, msgs is returned as it is.
//
// Compact always compacts; see [CompactIfNeeded] to compact only over the budget. msgs is not
// modified.
func Compact(ctx context.Context, msgs []message.Message, o *CompactOptions) ([]message.Message, error) {
	c, err := NewCompactor(o)
	if err != nil {
		return nil, err
	}
	out, _, err := c.Compact(ctx, msgs)
	return out, err
}

// CompactIfNeeded compacts msgs when they count more tokens than o.MaxTokens, and reports
// whether it did.
func CompactIfNeeded(ctx context.Context, msgs []message.Message, o *CompactOptions) ([]message.Message, bool, error) {
	c, err := NewCompactor(o)
	if err != nil {
		return nil, false, err
	}
	if tokens.CountMessages(c.o.Counter, msgs) <= c.o.MaxTokens {
		return msgs, false, nil
	}
	return c.Compact(ctx, msgs)
}

// A Compactor compacts conversations with one set of [CompactOptions], checked once. The ReAct
// agent (react.Options.Compaction) and [CompactingModel] use one; so can an application's own
// agent loop: check [Compactor.Over] before a model call, [Compactor.Compact] when it is over,
// and [Compactor.Recover] after a call that failed for the size of its context. It is safe for
// concurrent use.
type Compactor struct {
	o     CompactOptions
	cache *summaryCache // nil: no cache
}

// NewCompactor checks o and fills in its defaults. o.Model is required.
func NewCompactor(o *CompactOptions) (*Compactor, error) {
	c, err := o.defaults()
	if err != nil {
		return nil, err
	}
	return &Compactor{o: c}, nil
}

// Over reports whether req (its messages, tools and schema) counts more tokens than MaxTokens.
func (c *Compactor) Over(req *model.Request) bool {
	return tokens.CountRequest(c.o.Counter, req) > c.o.MaxTokens
}

// Compact is [Compact] with the compactor's options; changed reports whether anything was
// summarised (when nothing is old enough, msgs is returned as it is).
func (c *Compactor) Compact(ctx context.Context, msgs []message.Message) (out []message.Message, changed bool, err error) {
	return compact(ctx, msgs, c.o, c.cache)
}

// Recover compacts msgs after a model call failed with err because its context was too long
// (model.ErrContextWindowExceeded), whatever their size, and returns them to retry the call
// with. compacted says whether msgs were already compacted for this call. When compaction fails
// or leaves nothing to remove, Recover returns an error that wraps err and says why, for the
// caller to return instead of retrying.
func (c *Compactor) Recover(ctx context.Context, msgs []message.Message, err error, compacted bool) ([]message.Message, error) {
	out, ok, cerr := c.Compact(ctx, msgs)
	if cerr != nil || !ok {
		return nil, windowError(err, compacted, cerr)
	}
	return out, nil
}

// split finds the compaction boundary: head (leading system prompts, kept), older (summarised),
// current (the latest user message when the boundary falls inside its turn, kept after the
// summary) and kept (verbatim). ok is false when there is nothing to summarise.
func split(msgs []message.Message, keep int) (head, older []message.Message, current *message.Message, kept []message.Message, ok bool) {
	h := 0
	for h < len(msgs) && msgs[h].Role == message.RoleSystem && msgs[h].Metadata[MetaSummary] == nil {
		h++
	}
	head, body := msgs[:h], msgs[h:]
	// A boundary at i is clean when every call before i has its result before i and body[i]
	// is not itself a result.
	pending := map[string]bool{}
	var userStarts, exchStarts []int
	lastUser := -1
	for i, m := range body {
		if m.Role != message.RoleTool && len(pending) == 0 {
			switch m.Role {
			case message.RoleUser:
				userStarts = append(userStarts, i)
				exchStarts = append(exchStarts, i)
			case message.RoleAssistant:
				exchStarts = append(exchStarts, i)
			}
		}
		switch m.Role {
		case message.RoleUser:
			lastUser = i
		case message.RoleAssistant:
			for _, tc := range m.ToolCalls {
				pending[tc.ID] = true
			}
		case message.RoleTool:
			delete(pending, m.ToolCallID)
		}
	}
	cut := 0
	if len(userStarts) > keep {
		cut = userStarts[len(userStarts)-keep]
	} else if len(exchStarts) > keep && (len(userStarts) == 0 || exchStarts[len(exchStarts)-keep-1] > userStarts[len(userStarts)-1]) {
		// The latest turn alone holds more than keep model replies: cut inside it.
		cut = exchStarts[len(exchStarts)-keep]
	}
	if cut <= 0 {
		return nil, nil, nil, nil, false
	}
	older = body[:cut]
	kept = body[cut:]
	if lastUser >= 0 && lastUser < cut {
		current = &body[lastUser]
		if lastUser == cut-1 && cut == 1 {
			// Only the question itself lies before the boundary: nothing to summarise.
			return nil, nil, nil, nil, false
		}
	}
	return head, older, current, kept, true
}

// compact does the work; cache, when not nil, remembers summaries by the messages they replace.
func compact(ctx context.Context, msgs []message.Message, o CompactOptions, cache *summaryCache) ([]message.Message, bool, error) {
	msgs = RepairHistory(msgs)
	head, older, current, kept, ok := split(msgs, o.KeepTurns)
	if !ok {
		return msgs, false, nil
	}
	key := ""
	var recap string
	if cache != nil {
		key = cacheKey(older)
		recap = cache.get(key)
	}
	if recap == "" {
		var err error
		recap, err = summarize(ctx, o.Model, o.Prompt, older, o.MaxChars)
		if err != nil {
			return nil, false, fmt.Errorf("conversation: compacting %d messages: %w", len(older), err)
		}
		if cache != nil {
			cache.put(key, recap)
		}
	}
	replaced := len(older)
	turns := 0
	if current != nil {
		replaced-- // the current question stays
		i := len(older) - 1
		for ; i >= 0 && &older[i] != current; i-- {
			if older[i].Role == message.RoleAssistant {
				turns++
			}
		}
		// A summary made earlier in this same request sits just before its question.
		if i > 0 {
			turns += ReplacedTurns(older[i-1])
		}
	}
	summary := message.System(RecapPrefix + recap)
	summary.ID = message.NewID()
	summary.Metadata = map[string]any{MetaSummary: replaced}
	if turns > 0 {
		summary.Metadata[MetaTurns] = turns
	}
	out := make([]message.Message, 0, len(head)+2+len(kept))
	out = append(out, head...)
	out = append(out, summary)
	if current != nil {
		out = append(out, *current)
	}
	out = append(out, kept...)
	return out, true, nil
}

// summarize asks m for a recap of msgs, shown as plain user and assistant turns (tool calls and
// results folded into the assistant's turn, so no provider needs the tools declared).
func summarize(ctx context.Context, m model.Model, prompt string, msgs []message.Message, maxChars int) (string, error) {
	turns := transcript(msgs, maxChars)
	if len(turns) == 0 {
		return "", errors.New("conversation: nothing to summarise")
	}
	req := &model.Request{Messages: append(append([]message.Message{message.System(prompt)}, turns...),
		message.User("Summarize the conversation above as the recap described."))}
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return "", err
	}
	return cleanRecap(offline.Unlabelled(resp.Message)), nil
}

// transcript turns a conversation into alternating plain-text turns.
func transcript(msgs []message.Message, maxChars int) []message.Message {
	var out []message.Message
	add := func(role message.Role, text string) {
		if text = strings.TrimSpace(text); text == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content += "\n" + text
			return
		}
		out = append(out, message.Message{Role: role, Content: text})
	}
	for _, m := range msgs {
		text := cut(strings.TrimSpace(offline.Unlabelled(m)), maxChars)
		switch m.Role {
		case message.RoleSystem:
			if m.Metadata[MetaSummary] != nil {
				add(message.RoleUser, strings.TrimPrefix(text, strings.TrimSpace(RecapPrefix)))
			} else {
				add(message.RoleUser, "(Instruction given earlier: "+text+")")
			}
		case message.RoleUser:
			for _, p := range m.Parts {
				if p.Type == message.PartImage {
					text += " [image]"
				}
			}
			add(message.RoleUser, text)
		case message.RoleAssistant:
			var b strings.Builder
			b.WriteString(text)
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, "\n[called %s %s]", tc.Name, cut(string(tc.Arguments), 300))
			}
			add(message.RoleAssistant, b.String())
		case message.RoleTool:
			verb := "returned"
			if m.IsError {
				verb = "failed"
			}
			add(message.RoleAssistant, fmt.Sprintf("[%s %s: %s]", m.Name, verb, text))
		}
	}
	if len(out) > 0 && out[0].Role != message.RoleUser {
		out = append([]message.Message{message.User("(The conversation continues from here.)")}, out...)
	}
	return out
}

// cleanRecap drops a heading line from a summary.
func cleanRecap(s string) string {
	s = strings.TrimSpace(s)
	if first, rest, ok := strings.Cut(s, "\n"); ok && strings.HasSuffix(strings.TrimSpace(first), ":") && strings.Contains(strings.ToLower(first), "summar") {
		s = strings.TrimSpace(rest)
	}
	return s
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !isRuneStart(s[i]) {
		i--
	}
	return s[:i] + " …"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// summaryCache remembers recent summaries, so a model wrapper that compacts every request of a
// long run pays for each summary once.
type summaryCache struct {
	mu sync.Mutex
	m  map[string]string
}

const summaryCacheSize = 256

func (c *summaryCache) get(k string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *summaryCache) put(k, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= summaryCacheSize {
		c.m = map[string]string{}
	}
	c.m[k] = v
}

func cacheKey(msgs []message.Message) string {
	h := sha256.New()
	for _, m := range msgs {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00", m.ID, m.Role, m.Text(), len(m.ToolCalls))
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(h, "%s\x00%s\x00", tc.ID, tc.Arguments)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CompactingModel wraps m so that every request is compacted before it is sent when it counts
// more than o.MaxTokens (messages, tools and schema together), and so that a call failing with
// model.ErrContextWindowExceeded is compacted and retried once. Summaries are cached by the
// messages they replace, so a growing conversation is not summarised again on every call. The
// caller's request is never modified.
//
// The wrapper changes only what is sent; to shrink a stored conversation, compact the state (the
// ReAct agent does so with react.Options.Compaction).
func CompactingModel(m model.Model, o *CompactOptions) (model.Model, error) {
	if m == nil {
		return nil, errors.New("conversation: CompactingModel needs the model to wrap")
	}
	c, err := NewCompactor(o)
	if err != nil {
		return nil, err
	}
	c.cache = &summaryCache{}
	return &compactingModel{inner: m, c: c}, nil
}

type compactingModel struct {
	inner model.Model
	c     *Compactor
}

// Identity is the wrapped model's.
func (m *compactingModel) Identity() (provider, name string) { return model.IdentityOf(m.inner) }

// prepare compacts req when it is over budget. ok reports whether anything changed.
func (m *compactingModel) prepare(ctx context.Context, req *model.Request) (*model.Request, bool, error) {
	if !m.c.Over(req) {
		return req, false, nil
	}
	msgs, ok, err := m.c.Compact(ctx, req.Messages)
	if err != nil || !ok {
		return req, false, err
	}
	return withMessages(req, msgs), true, nil
}

// withMessages returns a copy of req with msgs.
func withMessages(req *model.Request, msgs []message.Message) *model.Request {
	c := *req
	c.Messages = msgs
	return &c
}

func (m *compactingModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if req == nil {
		return m.inner.Generate(ctx, req)
	}
	r, compacted, err := m.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := m.inner.Generate(ctx, r)
	if errors.Is(err, model.ErrContextWindowExceeded) {
		msgs, rerr := m.c.Recover(ctx, r.Messages, err, compacted)
		if rerr != nil {
			return resp, rerr
		}
		return m.inner.Generate(ctx, withMessages(r, msgs))
	}
	return resp, err
}

func (m *compactingModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if req == nil {
			for c, err := range m.inner.Stream(ctx, req) {
				if !yield(c, err) {
					return
				}
			}
			return
		}
		r, compacted, err := m.prepare(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		for attempt := 0; ; attempt++ {
			sent := false
			var failed error
			for c, err := range m.inner.Stream(ctx, r) {
				if err != nil {
					failed = err
					break
				}
				sent = true
				if !yield(c, nil) {
					return
				}
			}
			if failed == nil {
				return
			}
			// Retry only when nothing reached the caller yet: a window error comes before any text.
			if attempt > 0 || sent || !errors.Is(failed, model.ErrContextWindowExceeded) {
				yield(model.Chunk{}, failed)
				return
			}
			msgs, rerr := m.c.Recover(ctx, r.Messages, failed, compacted)
			if rerr != nil {
				yield(model.Chunk{}, rerr)
				return
			}
			r = withMessages(r, msgs)
		}
	}
}

// windowError explains a context-window failure that compaction could not fix.
func windowError(err error, compacted bool, cerr error) error {
	if cerr != nil {
		return fmt.Errorf("%w (compacting to retry failed too: %v)", err, cerr)
	}
	if compacted {
		return fmt.Errorf("%w (the conversation was already compacted to its latest turns; lower CompactOptions.KeepTurns or shorten the tools' results)", err)
	}
	return fmt.Errorf("%w (nothing older than the latest turns was left to compact; lower CompactOptions.KeepTurns or shorten the tools' results)", err)
}
