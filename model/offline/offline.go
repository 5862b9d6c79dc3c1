package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sort"
	"strings"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/tokens"
)

// Marker ends every text answer of the offline model, so a reader can tell no LLM wrote it.
const Marker = "[offline model]"

// Name is the provider and model name the offline model reports in message metadata.
const Name = "offline"

// Options configures the offline model. The zero value is ready to use.
type Options struct {
	// Now is the clock used to resolve "today", "this week" and the like; nil means time.Now.
	Now func() time.Time
	// Threshold is the score a tool needs before the model calls it; 0 means 2.5 (one word of the
	// tool's name, or three words of its description).
	Threshold float64
}

// Model is the offline model. It is safe for concurrent use and holds no state between calls.
type Model struct {
	now       func() time.Time
	threshold float64
}

var _ model.Model = (*Model)(nil)

// New returns an offline model. opts may be nil.
func New(opts *Options) *Model {
	m := &Model{now: time.Now, threshold: 2.5}
	if opts != nil {
		if opts.Now != nil {
			m.now = opts.Now
		}
		if opts.Threshold > 0 {
			m.threshold = opts.Threshold
		}
	}
	return m
}

// Generate answers the request by the rules in the package documentation.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	resp, err := m.generate(ctx, req)
	if err != nil || req.Schema == nil {
		return resp, err
	}
	// A repair attempt would give the same answer: the rules are deterministic.
	raw, problem := model.CheckStructured(req.Schema, resp.Message.Content)
	if problem != nil {
		return resp, &model.StructuredOutputError{Schema: req.Schema.SchemaName(), Output: resp.Message.Content, Problem: problem.Error(), Attempts: 1}
	}
	resp.Structured = raw
	return resp, nil
}

func (m *Model) generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	resp, rule := m.answer(req)
	resp.Message.Role = message.RoleAssistant
	resp.Message.Metadata = map[string]any{"provider": Name, "model": Name, "offline": true, "offline_rule": rule}
	c := tokens.Approximate()
	resp.Usage = model.Usage{InputTokens: tokens.CountRequest(c, req), OutputTokens: c.Count(resp.Message.Content)}
	for _, tc := range resp.Message.ToolCalls {
		resp.Usage.OutputTokens += c.Count(tc.Name) + c.Count(string(tc.Arguments))
	}
	if resp.FinishReason == "" {
		resp.FinishReason = model.FinishStop
		if len(resp.Message.ToolCalls) > 0 {
			resp.FinishReason = model.FinishToolCalls
		}
	}
	return resp, nil
}

// Stream yields the same answer as Generate, a word at a time.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		text := resp.Message.Content
		sent := 0
		for sent < len(text) {
			if err := ctx.Err(); err != nil {
				yield(model.Chunk{}, &model.ProviderError{Provider: Name, Model: Name, Partial: text[:sent], Err: err})
				return
			}
			n := nextWord(text[sent:])
			if !yield(model.Chunk{Text: text[sent : sent+n]}, nil) {
				return
			}
			sent += n
		}
		for i := range resp.Message.ToolCalls {
			if !yield(model.Chunk{ToolCall: &resp.Message.ToolCalls[i]}, nil) {
				return
			}
		}
		yield(model.Chunk{Usage: &resp.Usage, FinishReason: resp.FinishReason, Metadata: resp.Message.Metadata}, nil)
	}
}

// nextWord returns the length of the leading word of s with the spaces that follow it.
func nextWord(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\n') {
		i++
	}
	for i < len(s) && s[i] != ' ' && s[i] != '\n' {
		i++
	}
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return max(i, 1)
}

// answer applies the rules in order and says which one answered.
func (m *Model) answer(req *model.Request) (*model.Response, string) {
	f := m.newFiller(req)
	msgs := req.Messages
	last := msgs[len(msgs)-1]

	// 1. After tool results: write the answer from them.
	if last.Role == message.RoleTool {
		results := trailingResults(msgs)
		if req.Schema != nil {
			return m.structured(f, req, resultsText(results)), "structured"
		}
		return &model.Response{Message: message.Assistant(label(fromResults(f.primary, results)))}, "tool_results"
	}

	// 2. Structured output: fill the schema from the user's words.
	if req.Schema != nil {
		return m.structured(f, req, ""), "structured"
	}

	// 3. Tools: call the ones the user's words point to.
	if len(req.Tools) > 0 && req.ToolChoice != model.ToolChoiceNone {
		calls, ask := m.chooseTools(f, req, len(msgs))
		if len(calls) > 0 {
			names := make([]string, len(calls))
			for i, c := range calls {
				names[i] = "`" + c.Name + "`"
			}
			text := label(fmt.Sprintf("Calling %s.", strings.Join(names, ", ")))
			return &model.Response{Message: message.Assistant(text, calls...), FinishReason: model.FinishToolCalls}, "tool_call"
		}
		if ask != "" {
			return &model.Response{Message: message.Assistant(label(ask))}, "ask"
		}
	}

	// 4. Text tasks recognised from the instructions, then a plain reply.
	switch task(req) {
	case "title":
		return &model.Response{Message: message.Assistant(f.makeTitle() + " " + Marker)}, "title"
	case "summary":
		return &model.Response{Message: message.Assistant(label(f.summarize()))}, "summary"
	case "hints":
		return &model.Response{Message: message.Assistant(label(strings.Join(f.followUps(), "\n")))}, "hints"
	}
	return &model.Response{Message: message.Assistant(label(m.fallback(f, req)))}, "fallback"
}

func label(text string) string { return strings.TrimSpace(text) + "\n\n" + Marker }

func (m *Model) newFiller(req *model.Request) *filler {
	f := &filler{now: m.now(), msgs: req.Messages}
	lastUser := -1
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == message.RoleUser {
			lastUser = i
			break
		}
	}
	if lastUser >= 0 {
		f.primary = req.Messages[lastUser].Text()
	}
	var sys []string
	for i := len(req.Messages) - 1; i >= 0; i-- {
		msg := req.Messages[i]
		switch {
		case i == lastUser:
		case msg.Role == message.RoleSystem:
			sys = append(sys, msg.Text())
		default:
			f.context = append(f.context, msg.Text())
		}
	}
	f.context = append(f.context, sys...)
	f.system = strings.Join(sys, "\n\n")
	if req.Schema != nil {
		f.root = decodeSchema(req.Schema.JSON)
	}
	return f
}

// structured fills the request's schema; extra is text from tool results to draw on as well.
func (m *Model) structured(f *filler, req *model.Request, extra string) *model.Response {
	if extra != "" {
		f.context = append([]string{extra}, f.context...)
	}
	var v any
	root := f.root
	if root == nil {
		root = map[string]any{}
	}
	if typ, _ := schemaType(root); typ == "object" || typ == "" {
		obj, _ := f.object(root)
		v = obj
	} else if x, ok := f.value(req.Schema.SchemaName(), root); ok {
		v = x
	} else if x, ok := f.fallback(req.Schema.SchemaName(), root); ok {
		v = x
	}
	out, _ := json.Marshal(v)
	return &model.Response{Message: message.Assistant(string(out))}
}

// trailingResults returns the tool results at the end of the conversation.
func trailingResults(msgs []message.Message) []message.Message {
	i := len(msgs)
	for i > 0 && msgs[i-1].Role == message.RoleTool {
		i--
	}
	return msgs[i:]
}

func resultsText(results []message.Message) string {
	var b strings.Builder
	for _, r := range results {
		b.WriteString(r.Text())
		b.WriteByte('\n')
	}
	return b.String()
}

// chooseTools picks the tools the user's words point to and fills their arguments. When the best
// tool lacks a required argument, it returns a question asking for it instead.
func (m *Model) chooseTools(f *filler, req *model.Request, n int) ([]message.ToolCall, string) {
	tools := req.Tools
	if req.ToolChoice != model.ToolChoiceAuto && req.ToolChoice != model.ToolChoiceRequired {
		for _, t := range req.Tools {
			if t.Name == req.ToolChoice {
				tools = []model.ToolSpec{t}
			}
		}
	}
	forced := req.ToolChoice != model.ToolChoiceAuto
	// Several clauses joined by "and" may each ask for a different tool: call them in parallel.
	var picks []model.ToolSpec
	if !forced {
		for _, clause := range clauses(f.primary) {
			if t, score := bestTool(tools, clause); score >= m.threshold && !containsTool(picks, t.Name) {
				picks = append(picks, t)
			}
		}
	}
	if len(picks) < 2 {
		t, score := bestTool(tools, f.primary)
		picks = nil
		if score >= m.threshold || forced {
			picks = []model.ToolSpec{t}
		}
	}
	var calls []message.ToolCall
	var ask []string
	for i, t := range picks {
		args, missing := f.args(t)
		if len(missing) > 0 && !forced {
			ask = append(ask, fmt.Sprintf("To use `%s` I need %s. %s", t.Name, describeMissing(t, missing), "Please include it in your message."))
			continue
		}
		raw, _ := json.Marshal(args)
		calls = append(calls, message.ToolCall{ID: fmt.Sprintf("call_offline_%d_%d", n, i), Name: t.Name, Arguments: raw})
	}
	if len(calls) > 0 {
		return calls, ""
	}
	return nil, strings.Join(ask, "\n")
}

func containsTool(ts []model.ToolSpec, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}

func clauses(s string) []string {
	r := strings.NewReplacer(" and also ", "\x00", " and then ", "\x00", " and ", "\x00", " e também ", "\x00", " e ", "\x00", "; ", "\x00")
	return strings.Split(r.Replace(s), "\x00")
}

func (f *filler) args(t model.ToolSpec) (map[string]any, []string) {
	s := decodeSchema(t.Parameters)
	if s == nil {
		return map[string]any{}, nil
	}
	saved := f.root
	f.root = s
	defer func() { f.root = saved }()
	return f.object(s)
}

func describeMissing(t model.ToolSpec, missing []string) string {
	s := decodeSchema(t.Parameters)
	props, _ := s["properties"].(map[string]any)
	parts := make([]string, len(missing))
	for i, name := range missing {
		parts[i] = "`" + name + "`"
		if p, ok := props[name].(map[string]any); ok {
			if d, _ := p["description"].(string); d != "" {
				parts[i] += " (" + d + ")"
			} else if fm, _ := p["format"].(string); fm != "" {
				parts[i] += " (" + fm + ")"
			}
		}
	}
	return strings.Join(parts, " and ")
}

// bestTool scores every tool against the text and returns the best; ties go to the earlier tool.
func bestTool(tools []model.ToolSpec, text string) (model.ToolSpec, float64) {
	user := terms(text)
	hasURL := reURL.MatchString(text)
	var best model.ToolSpec
	bestScore := -1.0
	for _, t := range tools {
		score := toolScore(t, user, hasURL)
		if score > bestScore {
			best, bestScore = t, score
		}
	}
	return best, bestScore
}

type weighted struct {
	word string
	w    float64
}

func toolScore(t model.ToolSpec, user []string, hasURL bool) float64 {
	var profile []weighted
	for _, w := range words(t.Name) {
		if !stop[w] {
			profile = append(profile, weighted{w, 3})
		}
	}
	for _, w := range words(t.Description) {
		if !stop[w] && len(w) >= 3 {
			profile = append(profile, weighted{w, 1})
		}
	}
	s := decodeSchema(t.Parameters)
	props, _ := s["properties"].(map[string]any)
	urlParam := false
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p, _ := props[name].(map[string]any)
		if isFormat(p, "uri", "url") || anyWord(name, urlWords) {
			urlParam = true
		}
		for _, e := range asSlice(p["enum"]) {
			if str, ok := e.(string); ok {
				for _, w := range words(str) {
					profile = append(profile, weighted{w, 2})
				}
			}
		}
		if items, ok := p["items"].(map[string]any); ok {
			for _, e := range asSlice(items["enum"]) {
				if str, ok := e.(string); ok {
					for _, w := range words(str) {
						profile = append(profile, weighted{w, 2})
					}
				}
			}
		}
	}
	score := 0.0
	for _, u := range user {
		best := 0.0
		for _, p := range profile {
			best = max(best, p.w*similar(u, p.word))
		}
		score += best
	}
	if hasURL && urlParam {
		score += 4
	}
	return score
}

// task recognises utility requests (a title, a summary, follow-up hints) from the user's last
// message or a short system prompt.
func task(req *model.Request) string {
	var instr []string
	for i := len(req.Messages) - 1; i >= 0; i-- {
		msg := req.Messages[i]
		if msg.Role == message.RoleSystem && len(msg.Content) < 600 {
			instr = append(instr, msg.Text())
		}
		if msg.Role == message.RoleUser && len(instr) == 0 {
			instr = append(instr, msg.Text())
		}
	}
	text := fold(strings.Join(instr, " "))
	switch {
	case strings.Contains(text, "follow-up") || strings.Contains(text, "follow up") || strings.Contains(text, "hints") || strings.Contains(text, "suggested questions"):
		return "hints"
	case strings.Contains(text, "title") || strings.Contains(text, "titulo"):
		return "title"
	case strings.Contains(text, "summar") || strings.Contains(text, "resum") || strings.Contains(text, "condense"):
		return "summary"
	}
	return ""
}

func (m *Model) fallback(f *filler, req *model.Request) string {
	var b strings.Builder
	if f.primary == "" {
		b.WriteString("Hello. No language model is configured, so I answer by fixed rules.")
	} else {
		fmt.Fprintf(&b, "No language model is configured, so I answer by fixed rules. You asked: %q.", truncate(f.primary, 300))
	}
	if len(req.Tools) > 0 && req.ToolChoice != model.ToolChoiceNone {
		b.WriteString(" I did not find a tool that matches your words. I can:\n")
		for _, t := range req.Tools {
			fmt.Fprintf(&b, "- `%s`: %s\n", t.Name, truncate(firstSentence(t.Description), 120))
		}
		b.WriteString("Name what you want in those words (quote names and give dates, numbers or links).")
	} else {
		b.WriteString(" Set TRELLIS_MODEL to a provider (for example openai:gpt-4o) for free-form answers.")
	}
	return b.String()
}
