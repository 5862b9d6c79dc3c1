package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/trellis-go/trellis/fold"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/tokens"
)

// Marker ends every text answer of the offline model, so a reader can tell no LLM wrote it.
const Marker = "[offline model]"

// Name is the provider and model name the offline model reports in message metadata.
const Name = model.OfflineProvider

// Options configures the offline model. The zero value is ready to use.
type Options struct {
	// Now is the clock used to resolve "today", "this week" and the like; nil means time.Now.
	Now func() time.Time
	// Threshold is the score a tool needs before the model calls it; 0 means 2.5 (one word of the
	// tool's name, or three words of its description).
	Threshold float64
	// ImageDirs are the directories the model may read images and their sidecars from (for
	// images given as file:// URLs, paths, or http(s) URLs matched by file name; nothing is
	// fetched). Nil means none: only what an image carries in the message is read.
	ImageDirs []string
	// Packs teach the model applications' domains: their words, intents, identifiers, references
	// and answer lines (see [Pack]). New skips entries [Pack.Validate] would refuse; read packs
	// with [ParsePack] or add them with [Extend] to hear about mistakes.
	Packs []*Pack
}

// Model is the offline model. It is safe for concurrent use and holds no state between calls.
type Model struct {
	now       func() time.Time
	threshold float64
	imageDirs []string
	packs     []*Pack
	v         *vocab
}

var (
	_ model.Model      = (*Model)(nil)
	_ model.Identified = (*Model)(nil)
)

// Identity returns the names its replies carry in their metadata: [Name] for both.
func (m *Model) Identity() (provider, name string) { return Name, Name }

// New returns an offline model. opts may be nil.
func New(opts *Options) *Model {
	m := &Model{now: time.Now, threshold: 2.5, v: base}
	if opts != nil {
		for _, p := range opts.Packs {
			if p != nil {
				m.packs = append(m.packs, p)
			}
		}
		if len(m.packs) > 0 {
			m.v = buildVocab(m.packs)
		}
		if opts.Now != nil {
			m.now = opts.Now
		}
		if opts.Threshold > 0 {
			m.threshold = opts.Threshold
		}
		m.imageDirs = slices.Clone(opts.ImageDirs)
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
	resp.Message.Metadata = Metadata(rule)
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

	// 1. After tool results: call the next step's tools of a request in steps ("look up X, then
	// convert it"), or write the answer from the results of every step.
	if last.Role == message.RoleTool {
		results := resultsSinceUser(msgs)
		if req.Schema != nil {
			return m.structured(f, req, resultsText(results)), RuleStructured
		}
		if len(req.Tools) > 0 && req.ToolChoice != model.ToolChoiceNone {
			if calls := m.nextStep(f, req, results); len(calls) > 0 {
				return m.calling(f, calls), RuleToolChain
			}
		}
		return &model.Response{Message: message.Assistant(label(fromResults(f.lang, f.v.answerFor(toolNames(results), f.lang), f.primary, results)))}, RuleToolResults
	}

	// 2. Structured output: fill the schema from the user's words.
	if req.Schema != nil {
		return m.structured(f, req, ""), RuleStructured
	}

	// 3. Tools: call the ones the user's words point to.
	if len(req.Tools) > 0 && req.ToolChoice != model.ToolChoiceNone {
		calls, ask := m.chooseTools(f, req, len(msgs))
		if len(calls) > 0 {
			return m.calling(f, calls), RuleToolCall
		}
		if ask != "" {
			return &model.Response{Message: message.Assistant(label(ask))}, RuleAsk
		}
	}

	// 4. Pictures: say what they carry; then text tasks recognised from the instructions, then
	// a plain reply.
	if len(f.images) > 0 {
		return &model.Response{Message: message.Assistant(label(f.describeImages()))}, RuleVision
	}
	switch task(req) {
	case "title":
		return &model.Response{Message: message.Assistant(f.makeTitle() + " " + Marker)}, RuleTitle
	case "summary":
		return &model.Response{Message: message.Assistant(label(f.summarize()))}, RuleSummary
	case "hints":
		return &model.Response{Message: message.Assistant(label(strings.Join(f.followUps(), "\n")))}, RuleHints
	}
	return &model.Response{Message: message.Assistant(label(m.fallback(f, req)))}, RuleFallback
}

// calling is the assistant turn that makes calls.
func (m *Model) calling(f *filler, calls []message.ToolCall) *model.Response {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = "`" + c.Name + "`"
	}
	text := label(fmt.Sprintf(f.lang.p().calling, strings.Join(names, ", ")))
	return &model.Response{Message: message.Assistant(text, calls...), FinishReason: model.FinishToolCalls}
}

func label(text string) string { return strings.TrimSpace(text) + "\n\n" + Marker }

func (m *Model) newFiller(req *model.Request) *filler {
	f := &filler{v: m.v, now: m.now(), msgs: req.Messages}
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
	f.lang = m.v.detect(f.primary)
	if lastUser >= 0 {
		for _, p := range req.Messages[lastUser].Parts {
			if p.Type != message.PartImage {
				continue
			}
			info := m.readImage(p)
			f.images = append(f.images, info)
			if len(info.Fields) > 0 {
				f.primary = strings.TrimSpace(f.primary + "\n" + info.text())
			}
		}
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
	for _, img := range f.images {
		if len(img.Fields) > 0 {
			f.data = append(f.data, img.Fields)
		}
	}
	f.data = append(f.data, dataFrom(req.Messages)...)
	f.complete = true
	f.resultsFirst = extra != ""
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
	} else {
		v = f.plausible(req.Schema.SchemaName(), root)
	}
	out, _ := json.Marshal(v)
	return &model.Response{Message: message.Assistant(string(out))}
}

// resultsSinceUser returns the tool results after the last user message, in order: those of
// every step of a chained request.
func resultsSinceUser(msgs []message.Message) []message.Message {
	i := len(msgs)
	for i > 0 && msgs[i-1].Role != message.RoleUser {
		i--
	}
	var out []message.Message
	for _, msg := range msgs[i:] {
		if msg.Role == message.RoleTool {
			out = append(out, msg)
		}
	}
	return out
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
	// A request in steps ("look up X, then convert it") starts with its first step that names a
	// tool; the later steps are called once its results are in (see nextStep).
	if !forced {
		if st := steps(f.primary); len(st) > 1 {
			for _, step := range st {
				if picks := m.pick(tools, step); len(picks) > 0 {
					sf := *f
					sf.primary = step
					return m.callsFor(&sf, picks, n, false, "")
				}
			}
		}
	}
	// Several clauses joined by "and" may each ask for a different tool: call them in parallel.
	var picks []model.ToolSpec
	if !forced {
		picks = m.clausePicks(tools, f.primary)
	}
	if len(picks) < 2 {
		t, score := m.bestTool(tools, f.primary)
		picks = nil
		if score >= m.threshold || forced {
			picks = []model.ToolSpec{t}
		}
	}
	return m.callsFor(f, picks, n, forced, "")
}

// callsFor fills the arguments of picks from f. A call missing a required argument is filled
// again with extra (earlier results) as well; when it still misses one, it becomes a question,
// unless forced.
func (m *Model) callsFor(f *filler, picks []model.ToolSpec, n int, forced bool, extra string) ([]message.ToolCall, string) {
	var calls []message.ToolCall
	var ask []string
	for i, t := range picks {
		args, missing := f.args(t)
		if len(missing) > 0 && extra != "" {
			ef := *f
			ef.primary = f.primary + "\n" + extra
			args, missing = ef.args(t)
		}
		// the defaults of the pack intent the words match
		for k, v := range f.v.intentArgs(t.Name, f.primary) {
			if _, ok := args[k]; !ok {
				args[k] = v
				missing = slices.DeleteFunc(missing, func(x string) bool { return x == k })
			}
		}
		// the arguments of the pack intent whose cues the words match
		for k, v := range f.v.cueArgs(t.Name, f.primary) {
			args[k] = v
			missing = slices.DeleteFunc(missing, func(x string) bool { return x == k })
		}
		if len(missing) > 0 && !forced {
			ask = append(ask, fmt.Sprintf(f.lang.p().need, t.Name, describeMissing(t, missing, f.lang.p().and)))
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

// pick returns the tools the clauses of one step point to, each once.
func (m *Model) pick(tools []model.ToolSpec, step string) []model.ToolSpec {
	return m.clausePicks(tools, step)
}

// clausePicks returns the tools the clauses of text point to, each once. A clause whose tool
// scores less than half the best clause's is a word joined on ("qual e melhor", an "é" written
// without its accent), not a request of its own.
func (m *Model) clausePicks(tools []model.ToolSpec, text string) []model.ToolSpec {
	var picks []model.ToolSpec
	var scores []float64
	best := 0.0
	for _, clause := range clauses(text) {
		if t, score := m.bestTool(tools, clause); score >= m.threshold && !containsTool(picks, t.Name) {
			picks = append(picks, t)
			scores = append(scores, score)
			best = max(best, score)
		}
	}
	out := picks[:0]
	for i, t := range picks {
		if scores[i] >= best/2 {
			out = append(out, t)
		}
	}
	return out
}

// nextStep returns the calls of the first step of a request in steps whose tools have not been
// called since the user's message, with arguments from the step's words and, where those lack a
// required one, from the earlier results. It returns nil when every step has run.
func (m *Model) nextStep(f *filler, req *model.Request, results []message.Message) []message.ToolCall {
	st := steps(f.primary)
	if len(st) < 2 {
		return nil
	}
	called := map[string]bool{}
	for _, r := range results {
		called[r.Name] = true
	}
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != message.RoleUser; i-- {
		for _, c := range req.Messages[i].ToolCalls {
			called[c.Name] = true
		}
	}
	for _, step := range st {
		var pending []model.ToolSpec
		for _, t := range m.pick(req.Tools, step) {
			if !called[t.Name] {
				pending = append(pending, t)
			}
		}
		if len(pending) == 0 {
			continue
		}
		sf := *f
		sf.primary = step
		calls, _ := m.callsFor(&sf, pending, len(req.Messages), false, resultsText(results))
		return calls
	}
	return nil
}

func toolNames(results []message.Message) []string {
	out := make([]string, 0, len(results))
	for _, r := range results {
		out = append(out, r.Name)
	}
	return out
}

func containsTool(ts []model.ToolSpec, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}

// clauses splits a step at the words that join independent requests ("and", "e", "y", "et",
// "und"): their tools are called in parallel.
func clauses(s string) []string {
	return reAnd.Split(s, -1)
}

// steps splits a request at the words that order it ("then", "depois", "luego", "puis", "dann"):
// each step's tools are called after the previous step's results are in.
func steps(s string) []string {
	var out []string
	for _, p := range reThen.Split(s, -1) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

var (
	reAnd  = regexp.MustCompile(`(?i)\s+(?:and also|and|e também|e tambem|e|y también|y tambien|y|et aussi|et|und auch|und)\s+|;\s+`)
	reThen = regexp.MustCompile(`(?i)(?:[,;]?\s+(?:and then|then|afterwards|after that|e depois|depois disso|depois|e então|y luego|luego|y después|y despues|después|despues|et puis|puis|et ensuite|ensuite|und dann|dann|danach|anschließend)\s+|[.;]\s+(?:then|depois|luego|después|despues|puis|ensuite|dann|danach)\b[,\s]*)`)
)

func (f *filler) args(t model.ToolSpec) (map[string]any, []string) {
	s := decodeSchema(t.Parameters)
	if s == nil {
		return map[string]any{}, nil
	}
	saved, savedTool := f.root, f.tool
	f.root, f.tool = s, t.Name
	defer func() { f.root, f.tool = saved, savedTool }()
	return f.object(s)
}

func describeMissing(t model.ToolSpec, missing []string, and string) string {
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
	return strings.Join(parts, and)
}

// bestTool scores every tool against the text and returns the best; ties go to the earlier tool.
// A pack's intents (their examples and cues) add to the score of the tools they name.
func (m *Model) bestTool(tools []model.ToolSpec, text string) (model.ToolSpec, float64) {
	user := m.v.terms(text)
	msg := cueWords(text)
	hasURL := reURL.MatchString(text)
	var best model.ToolSpec
	bestScore := -1.0
	for _, t := range tools {
		score := toolScore(t, user, hasURL) + m.v.intentBoost(t.Name, user) + m.v.cueScore(t.Name, msg)
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
	text := fold.String(strings.Join(instr, " "))
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
	p := f.lang.p()
	if f.primary == "" {
		b.WriteString("Hello. " + p.noModel)
	} else {
		fmt.Fprintf(&b, p.noModel+" "+p.youAsked, truncate(f.primary, 300))
	}
	if len(req.Tools) > 0 && req.ToolChoice != model.ToolChoiceNone {
		b.WriteString(" " + p.noTool + "\n")
		for _, t := range req.Tools {
			fmt.Fprintf(&b, "- `%s`: %s\n", t.Name, truncate(firstSentence(t.Description), 120))
		}
		b.WriteString(p.nameIt)
	} else {
		b.WriteString(" " + p.setModel)
	}
	return b.String()
}
