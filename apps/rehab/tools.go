package rehab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/apps/rehab/nlu"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/apps/rehab/taxes"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/appkit"
	kv "github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/tool"
)

// ToolNames are the specification's eleven tools, then those of its future list.
var ToolNames = []string{"read_context", "write_context", "remove_context", "manage_todos", "update_user_profile",
	"save_to_portfolio", "remove_from_portfolio", "switch_active_property", "search_portfolio",
	"trigger_property_analysis", "recalculate_costs", "calculate_taxes", "compare_properties"}

// call is what a tool body gets: the run, the state the tool node saw, and helpers.
type call struct {
	*run
	st    State
	turn  int
	audit store.Audit
}

// begun is a tool's body run with its call begun: the run, the state the tool node saw, and the
// audit of the user's message (with the arguments' confidence when they give one).
func begun[A any](o *Orchestrator, body func(context.Context, *call, A) (*tool.Result, error)) func(context.Context, A) (*tool.Result, error) {
	return func(ctx context.Context, a A) (*tool.Result, error) {
		conf := 0.0
		if x, ok := any(a).(confident); ok {
			conf = x.confidence()
		}
		c, err := o.begin(ctx, conf)
		if err != nil {
			return nil, err
		}
		return body(ctx, c, a)
	}
}

// confident arguments say how sure the model is that the user meant them (0 when not said).
type confident interface{ confidence() float64 }

func (o *Orchestrator) begin(ctx context.Context, confidence float64) (*call, error) {
	r, err := o.run(ctx)
	if err != nil {
		return nil, err
	}
	st, _ := tool.StateFrom[State](ctx)
	conv := st.ConversationID
	if conv == "" {
		conv = r.conv
	}
	if confidence == 0 {
		confidence = 1
	}
	return &call{run: r, st: st, turn: st.Turn, audit: store.Audit{ConversationID: conv, Trigger: appkit.LastUser(st.Messages), Confidence: confidence}}, nil
}

func ok(content string, upd tool.Update) (*tool.Result, error) {
	if len(upd) == 0 {
		return &tool.Result{Content: content}, nil
	}
	return &tool.Result{Content: content, Command: upd}, nil
}

// refuse is a tool's answer when it cannot do what was asked: pt-PT, for the user, saying what
// to do instead.
func refuse(content string) (*tool.Result, error) {
	return &tool.Result{Content: content, IsError: true, Structured: userFacing}, nil
}

func actionEvent(kind, summary string) map[string]any {
	return map[string]any{"type": "action", "action_type": kind, "summary": summary}
}

func newTodoID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Tools returns the orchestrator's tools.
func (o *Orchestrator) Tools() ([]tool.Tool, error) {
	var out []tool.Tool
	var defErr error
	add := func(t tool.Tool, err error) {
		if err != nil {
			defErr = errors.Join(defErr, err)
			return
		}
		out = append(out, t)
	}
	add(tool.New("read_context", "Load content from the knowledge base (working memory). Supports partial reads via start_line/num_lines.", begun(o, o.readContext)))
	add(tool.New("write_context", "Store derived information, notes, or sub-agent results in the knowledge base. Paths memoria/decisoes, memoria/rejeitados and memoria/questoes are kept across sessions.", begun(o, o.writeContext)))
	add(tool.New("remove_context", "Remove irrelevant entries from the knowledge base.", begun(o, o.removeContext)))
	add(tool.New("manage_todos", "Add, complete, or list tasks for multi-step requests.", begun(o, o.manageTodos)))
	add(tool.New("update_user_profile", "Update a profile section (fiscal, budget, renovation, preferences, goals) from what the user said; persists and regenerates the summaries.", begun(o, o.updateProfile)))
	add(tool.New("save_to_portfolio", "Add a property to the user's portfolio (carteira) by its Idealista URL or ID.", begun(o, o.saveToPortfolio)))
	add(tool.New("remove_from_portfolio", "Archive a portfolio item (soft delete). Requires the user's explicit confirmation, which the tool asks for.", begun(o, o.removeFromPortfolio)))
	add(tool.New("switch_active_property", "Change the focused property and load its analysis.", begun(o, o.switchActive)))
	add(tool.New("search_portfolio", "Resolve natural language references to portfolio property IDs (\"o de Alfama\", \"o mais barato\") by meaning.", begun(o, o.searchPortfolio)))
	add(tool.New("trigger_property_analysis", "Run the full renovation pipeline (scrape, classify, estimate) for an Idealista URL.", begun(o, o.triggerAnalysis)))
	add(tool.New("recalculate_costs", "Recalculate renovation costs using cached room features and updated preferences (no new scraping).", begun(o, o.recalculateCosts)))
	add(tool.New("calculate_taxes", "Calculate the purchase taxes (impostos: IMT and Imposto do Selo) for a property and the user's fiscal profile.", begun(o, o.calculateTaxes)))
	add(tool.New("compare_properties", "Compare (compara) 2-3 portfolio properties side by side in a table.", begun(o, o.compareProperties)))
	return out, defErr
}

type readArgs struct {
	Path      string `json:"path" jsonschema:"the entry's path, e.g. user/budget or portfolio/<id>/analise"`
	StartLine int    `json:"start_line,omitempty" jsonschema:"first line to load (1-based) for a partial read"`
	NumLines  int    `json:"num_lines,omitempty" jsonschema:"how many lines to load"`
}

func (o *Orchestrator) readContext(ctx context.Context, c *call, a readArgs) (*tool.Result, error) {
	k := c.st.Knowledge.Clone()
	text, err := kb.Read(k, a.Path, a.StartLine, a.NumLines, c.env.KB(), c.turn)
	if err != nil {
		return refuse(answer("read_unknown"))
	}
	e := k[a.Path]
	head := ""
	if e.LinesLoaded < e.TotalLines {
		head = answer("read_part", "loaded", strconv.Itoa(e.LinesLoaded), "total", strconv.Itoa(e.TotalLines)) + "\n"
	}
	return ok(head+text, tool.Update{"knowledge": kb.KB{a.Path: e}})
}

type writeArgs struct {
	Path    string `json:"path" jsonschema:"where to store it, e.g. notas/visita or memoria/decisoes"`
	Content string `json:"content" jsonschema:"the text to store"`
	Summary string `json:"summary,omitempty" jsonschema:"one line shown in the index; the first line of content when empty"`
}

func (o *Orchestrator) writeContext(ctx context.Context, c *call, a writeArgs) (*tool.Result, error) {
	path := strings.Trim(strings.TrimSpace(a.Path), "/")
	if path == "" || strings.Contains(path, "..") {
		return refuse(answer("note_where"))
	}
	if path == "user/profile" || path == "portfolio/index" {
		return refuse(answer("note_kept_by_me"))
	}
	sum := a.Summary
	if sum == "" {
		sum = firstLine(a.Content, 80)
	}
	upd := kb.KB{}
	if strings.HasPrefix(path, "memoria/") {
		lines := splitLines(a.Content)
		var edit func(m *store.Memory)
		switch path {
		case "memoria/decisoes":
			edit = func(m *store.Memory) { m.Decisions = appendNew(m.Decisions, lines...) }
		case "memoria/rejeitados":
			edit = func(m *store.Memory) {
				for _, l := range lines {
					prop, reason, _ := strings.Cut(l, ":")
					if reason == "" {
						prop, reason, _ = strings.Cut(l, " - ")
					}
					m.Rejected = append(m.Rejected, store.Rejected{Property: strings.TrimSpace(prop), Reason: strings.TrimSpace(reason)})
				}
			}
		case "memoria/questoes":
			edit = func(m *store.Memory) { m.OpenQuestions = appendNew(m.OpenQuestions, lines...) }
		default:
			return refuse(answer("note_memory_kinds"))
		}
		prof, err := c.env.Data.UpdateProfile(ctx, c.who, store.ProfileUpdate{EditMemory: edit}, c.audit)
		if err != nil {
			return nil, err
		}
		upd["user/profile"] = profileEntry(prof)
	}
	kb.Write(upd, path, sum, a.Content, kb.SourceTool, c.turn)
	return ok(answer("noted", "note", firstLine(a.Content, 120)), tool.Update{"knowledge": upd,
		"executed_actions": []ExecutedAction{{Type: "write_context", Summary: sum}}})
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(l, "-•* ")); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		found := false
		for _, x := range list {
			found = found || x == a
		}
		if !found {
			list = append(list, a)
		}
	}
	return list
}

func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

type removeCtxArgs struct {
	Path string `json:"path" jsonschema:"the entry's path"`
}

func (o *Orchestrator) removeContext(ctx context.Context, c *call, a removeCtxArgs) (*tool.Result, error) {
	if a.Path == "user/profile" || a.Path == "portfolio/index" {
		return refuse(answer("forget_kept"))
	}
	if _, found := c.st.Knowledge[a.Path]; !found {
		return refuse(answer("forget_unknown"))
	}
	return ok(answer("forgotten", "note", c.st.Knowledge[a.Path].Summary), tool.Update{"knowledge": kb.KB{a.Path: Tombstone()},
		"executed_actions": []ExecutedAction{{Type: "remove_context", Summary: c.st.Knowledge[a.Path].Summary}}})
}

type todoArgs struct {
	Action string `json:"action" enum:"add,complete,reopen,remove,list" jsonschema:"add a task, complete one, reopen a completed one, remove one, or list them"`
	Task   string `json:"task,omitempty" jsonschema:"the task to add (only what is to be done), or words of the task to complete, reopen or remove"`
	ID     string `json:"todo_id,omitempty" jsonschema:"the id of the task to complete, reopen or remove"`
}

func (o *Orchestrator) manageTodos(ctx context.Context, c *call, a todoArgs) (*tool.Result, error) {
	switch a.Action {
	case "add":
		task := strings.TrimSpace(a.Task)
		if task == "" {
			task = TaskText(c.audit.Trigger)
		}
		task = trimCommand(task)
		if task == "" {
			return refuse(answer("task_what"))
		}
		t := kb.Todo{ID: newTodoID(), Task: task, Status: "pending"}
		if err := c.carryTodo(ctx, t); err != nil {
			return nil, err
		}
		return ok(answer("task_add", "task", t.Task), tool.Update{"todos": []kb.Todo{t},
			"executed_actions": []ExecutedAction{{Type: "todo_add", Summary: t.Task}}})
	case "complete", "reopen", "remove":
		t, why := FindTodo(c.st.Todos, a.ID, a.Task, a.Action)
		if t == nil {
			return refuse(why)
		}
		t.Status = map[string]string{"complete": "done", "reopen": "pending", "remove": "removed"}[a.Action]
		if err := c.carryTodo(ctx, *t); err != nil {
			return nil, err
		}
		return ok(answer("task_"+a.Action, "task", t.Task), tool.Update{"todos": []kb.Todo{*t},
			"executed_actions": []ExecutedAction{{Type: "todo_" + a.Action, Summary: t.Task}}})
	case "list", "":
		return ok(TodoListText(c.st.Todos), nil)
	default:
		return refuse(answer("task_actions"))
	}
}

// FindTodo is the task a reference names: its ID, its number in the list ("2"), or words of
// its text ("a do canalizador"); with no reference, the only task the action can apply to.
// When none or several fit, why says so in pt-PT with the tasks to choose from.
func FindTodo(todos []kb.Todo, id, words, action string) (*kb.Todo, string) {
	var cands []kb.Todo
	for _, t := range todos {
		switch {
		case t.Status == "removed":
		case action == "complete" && t.Status == "done":
		case action == "reopen" && t.Status != "done":
		default:
			cands = append(cands, t)
		}
	}
	id = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(id), "#"))
	words = strings.TrimSpace(words)
	if id == "" {
		// A bare ID or number may come as the task's words.
		if f := strings.Fields(strings.TrimPrefix(words, "#")); len(f) == 1 {
			id = f[0]
		}
	}
	if id != "" {
		for i := range todos {
			if strings.EqualFold(todos[i].ID, id) {
				t := todos[i]
				return &t, ""
			}
		}
		if n, err := strconv.Atoi(id); err == nil {
			visible := visibleTodos(todos)
			if n >= 1 && n <= len(visible) {
				t := visible[n-1]
				return &t, ""
			}
		}
	}
	if n := numberIn(words); n > 0 && id == "" {
		visible := visibleTodos(todos)
		if n <= len(visible) {
			t := visible[n-1]
			return &t, ""
		}
	}
	want := nlu.Content(words)
	if len(want) > 0 {
		best, bestScore, tie := -1, 0, false
		for i, t := range cands {
			tw := " " + strings.Join(nlu.Words(t.Task), " ") + " "
			score := 0
			for _, w := range want {
				if len(w) >= 3 && (strings.Contains(tw, " "+w) || len(w) >= 6 && strings.Contains(tw, " "+w[:len(w)-2])) {
					score++
				}
			}
			switch {
			case score > bestScore:
				best, bestScore, tie = i, score, false
			case score == bestScore && score > 0:
				tie = true
			}
		}
		if best >= 0 && !tie {
			t := cands[best]
			return &t, ""
		}
	} else if len(cands) == 1 {
		t := cands[0]
		return &t, ""
	}
	if len(cands) == 0 {
		return nil, answer("task_none_" + action)
	}
	return nil, answer("task_which_"+action, "tasks", TodoListText(cands))
}

// numberRE is a task's number as a word of its own ("2", "#2", "nº 2"); the words before it
// ("tarefa 2") need not be known, since the number is found after any space.
var numberRE = regexp.MustCompile(`(?:^|\s)(?:#|n\.?º\s*)?(\d{1,2})(?:\s|$|[.,!?])`)

func numberIn(s string) int {
	if m := numberRE.FindStringSubmatch(strings.ToLower(s)); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func visibleTodos(ts []kb.Todo) []kb.Todo {
	var out []kb.Todo
	for _, t := range ts {
		if t.Status != "removed" {
			out = append(out, t)
		}
	}
	return out
}

// TodoListText is the task list as the user reads it: numbered, without IDs.
func TodoListText(ts []kb.Todo) string {
	ts = visibleTodos(ts)
	if len(ts) == 0 {
		return answer("tasks_none")
	}
	var b strings.Builder
	b.WriteString(answer("tasks_heading"))
	for i, t := range ts {
		box := "☐"
		if t.Status == "done" {
			box = "☑"
		}
		fmt.Fprintf(&b, "\n%d. %s %s", i+1, box, t.Task)
	}
	return b.String()
}

// carryTodo records a task's change in the user's memory of open tasks, so that the next
// conversation starts with the tasks still pending (and the change is in the action log).
func (c *call) carryTodo(ctx context.Context, t kb.Todo) error {
	_, err := c.env.Data.UpdateProfile(ctx, c.who, store.ProfileUpdate{EditMemory: func(m *store.Memory) {
		var keep []store.OpenTodo
		for _, o := range m.OpenTodos {
			if o.ID != t.ID {
				keep = append(keep, o)
			}
		}
		if t.Status == "pending" {
			keep = append(keep, store.OpenTodo{ID: t.ID, Task: t.Task, ConversationID: c.audit.ConversationID})
		}
		m.OpenTodos = keep
	}}, c.audit)
	return err
}

// trimCommand drops the request around a task ("Adiciona a tarefa visitar…" gives "Visitar…").
func trimCommand(task string) string {
	l := strings.ToLower(task)
	for _, p := range said.TaskLeadIns {
		if strings.HasPrefix(l, p) {
			r := []rune(strings.TrimSpace(task[len(p):]))
			if len(r) == 0 {
				return task
			}
			return strings.ToUpper(string(r[0])) + string(r[1:])
		}
	}
	return task
}

type profileArgs struct {
	Section    string         `json:"section" enum:"fiscal,budget,renovation,preferences,goals" jsonschema:"the profile section"`
	Data       map[string]any `json:"data,omitempty" jsonschema:"the section's fields to set (budget: min, max, renovacao_max in euros; fiscal: regime, primeira_habitacao, habitacao_propria_permanente, idade; renovation: diy_skills, qualidade, prioridades, excluir; preferences: zonas, tipologia, idioma_respostas (pt, en, es or fr, only when the user asks for replies in another language); goals: objetivo); read from the user's words when empty"`
	Confidence float64        `json:"confidence,omitempty" minimum:"0" maximum:"1" jsonschema:"how sure you are that the user meant it (1 explicit, lower for an implicit mention)"`
}

func (a profileArgs) confidence() float64 { return a.Confidence }

func (o *Orchestrator) updateProfile(ctx context.Context, c *call, a profileArgs) (*tool.Result, error) {
	conf := a.Confidence
	d := a.Data
	if len(d) == 0 {
		d = ExtractSection(a.Section, c.audit.Trigger)
		if conf == 0 {
			c.audit.Confidence = 0.8 // read from the words, not stated as data
		}
	}
	if len(d) == 0 {
		return refuse(answer("profile_what"))
	}
	prof, err := c.env.Data.UpdateProfile(ctx, c.who, store.ProfileUpdate{Section: a.Section, Data: d, Summarize: kb.Summarize(a.Section)}, c.audit)
	if err != nil {
		return refuse(answer("profile_sections"))
	}
	sum := prof.Summaries[a.Section]
	upd := kb.KB{"user/profile": profileEntry(prof)}
	e := kb.NewEntry(sum, kb.SectionText(a.Section, prof.Sections[a.Section]), kb.SourceTool, true)
	e.Touched = c.turn
	upd["user/"+a.Section] = e
	msg := answer("profile_noted", "summary", sum)
	if a.Section == "budget" {
		msg += budgetNote(c.st, prof)
	}
	return ok(msg, tool.Update{"knowledge": upd,
		"executed_actions": []ExecutedAction{{Type: "update_profile", Summary: sum}},
		"stream_events":    []map[string]any{actionEvent("update_profile", sum)}})
}

// budgetNote says how the active property sits against a new budget.
func budgetNote(st State, prof *store.Profile) string {
	if st.CurrentFocus == nil || st.CurrentFocus.PropertyID == "" {
		return ""
	}
	e, ok := st.Knowledge["portfolio/"+st.CurrentFocus.PropertyID+"/resumo"]
	if !ok {
		return ""
	}
	max, has := kb.Num(prof.Sections["budget"]["max"])
	price := 0.0
	if a := Amounts(e.Text); len(a) > 0 {
		price = a[0]
	}
	if !has || price == 0 {
		return ""
	}
	if price <= max {
		return " " + answer("budget_fits_focus", "price", kb.Euro(price))
	}
	return " " + answer("budget_over_focus", "price", kb.Euro(price), "over", kb.Euro(price-max))
}

func profileEntry(p *store.Profile) kb.Entry {
	k, _ := kb.Build(&store.Hydrated{Profile: p})
	e := k["user/profile"]
	e.Source = kb.SourceTool
	return e
}

type propArgs struct {
	Property string `json:"property_id,omitempty" jsonschema:"the property: its id, its Idealista id or URL, or words that name it (o de Alfama); the property in focus when empty"`
}

// resolve finds the portfolio item a reference names: an ID, an Idealista ID or URL, words
// of its place, title or nickname, or (with no reference) the words of the user's message and
// then the property in focus.
func (c *call) resolve(ctx context.Context, ref string) (*store.PortfolioItem, []store.PortfolioItem, error) {
	items, err := c.env.Data.Portfolio(ctx, c.who, false)
	if err != nil {
		return nil, nil, err
	}
	ref = strings.TrimSpace(ref)
	if id, err := listing.ID(ref); err == nil {
		ref = id
	}
	// The user's own words win over an ID they did not write (a model may pick up the ID of the
	// property in focus when the user named another: "remove o de Alfama").
	words := matchWords(items, c.audit.Trigger)
	if len(words) == 1 && (ref == "" || !strings.Contains(c.audit.Trigger, ref)) {
		return words[0], items, nil
	}
	if ref != "" {
		for i := range items {
			it := &items[i]
			if it.ID == ref || it.PropertyID == ref || it.Property.IdealistaID == ref {
				return it, items, nil
			}
		}
		if m := matchWords(items, ref); len(m) == 1 {
			return m[0], items, nil
		}
	}
	if ref == "" && c.st.CurrentFocus != nil && c.st.CurrentFocus.PropertyID != "" {
		for i := range items {
			if items[i].PropertyID == c.st.CurrentFocus.PropertyID {
				return &items[i], items, nil
			}
		}
	}
	if ref == "" {
		for i := range items {
			if items[i].IsActive {
				return &items[i], items, nil
			}
		}
	}
	return nil, items, nil
}

func itemWords(it *store.PortfolioItem) string {
	return strings.ToLower(strings.Join([]string{it.Nickname, it.Property.Title, it.Property.Location, it.Property.Typology, it.IndexSummary}, " "))
}

func matchWords(items []store.PortfolioItem, text string) []*store.PortfolioItem {
	low := strings.ToLower(text)
	var out []*store.PortfolioItem
	for _, n := range Neighbourhoods {
		ln := strings.ToLower(n)
		if !strings.Contains(low, ln) {
			continue
		}
		for i := range items {
			if strings.Contains(itemWords(&items[i]), ln) {
				out = append(out, &items[i])
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	for i := range items {
		if nick := strings.ToLower(items[i].Nickname); nick != "" && strings.Contains(low, nick) {
			out = append(out, &items[i])
		}
	}
	return out
}

func notFound(items []store.PortfolioItem, ref string) (*tool.Result, error) {
	if len(items) == 0 {
		return refuse(answer("portfolio_empty_start"))
	}
	var sums []string
	for _, it := range items {
		sums = append(sums, it.IndexSummary)
	}
	return refuse(answer("property_which", "list", bullets(sums), "place", kb.Neighbourhood(items[0].Property.Location)))
}

// bullets are lines as a list, one "- <line>" a line.
func bullets(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- " + l)
	}
	return b.String()
}

type saveArgs struct {
	Property string `json:"property_id" jsonschema:"the Idealista URL or listing id"`
	Nickname string `json:"nickname,omitempty" jsonschema:"a short name the user gives it"`
}

func (o *Orchestrator) saveToPortfolio(ctx context.Context, c *call, a saveArgs) (*tool.Result, error) {
	ref := a.Property
	if _, err := listing.ID(ref); err != nil {
		if it, _, _ := c.resolve(ctx, ref); it != nil {
			ref = it.Property.IdealistaID
		}
	}
	if c.env.Pipeline == nil {
		return refuse(answer("listing_unavailable"))
	}
	l, err := c.env.Pipeline.Listings.Get(ctx, ref)
	if err != nil {
		return refuse(ListingProblem(err))
	}
	it, err := c.env.Data.SaveProperty(ctx, c.who, propertyOf(l), a.Nickname, c.audit)
	if err != nil {
		return nil, err
	}
	if it.IndexSummary == "" {
		it.IndexSummary = kb.IndexLine(it.Property, 0, 0)
		if err := c.env.Data.SetIndexSummary(ctx, c.who, it.ID, it.IndexSummary); err != nil {
			return nil, err
		}
	}
	o.index(ctx, c, it, l.Description)
	upd, err := c.portfolioUpdate(ctx)
	if err != nil {
		return nil, err
	}
	sum := answer("saved_event", "property", it.IndexSummary)
	return ok(answer("saved", "property", it.IndexSummary, "facts", kb.Compact(l.Price, l.AreaM2)), tool.Update{"knowledge": upd,
		"executed_actions": []ExecutedAction{{Type: "save_to_portfolio", Summary: it.IndexSummary}},
		"stream_events":    []map[string]any{actionEvent("save_to_portfolio", sum)}})
}

func propertyOf(l *listing.Listing) store.Property {
	raw := map[string]any{"features": l.Features, "description": l.Description, "photos": l.Photos}
	var imgs []string
	for _, p := range l.Photos {
		imgs = append(imgs, p.URL)
	}
	return store.Property{IdealistaID: l.ID, URL: l.URL, Title: l.Title, Typology: l.Typology, Price: l.Price, AreaM2: l.AreaM2,
		Location: l.Location, ImageURLs: imgs, Raw: raw}
}

// portfolioUpdate rebuilds portfolio/index from the database.
func (c *call) portfolioUpdate(ctx context.Context) (kb.KB, error) {
	items, err := c.env.Data.Portfolio(ctx, c.who, false)
	if err != nil {
		return nil, err
	}
	return kb.KB{"portfolio/index": kb.PortfolioIndex(items)}, nil
}

// ConsentRequest is the interrupt value of remove_from_portfolio.
type ConsentRequest struct {
	Type       string `json:"type"` // "consent"
	Action     string `json:"action"`
	PropertyID string `json:"property_id"`
	Question   string `json:"question"`
}

// Consented reads a resume value as a yes or a no: true, "sim", "yes", "confirmo",
// {"confirm": true}, or an Agent Inbox response of type accept.
func Consented(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		l := strings.ToLower(strings.TrimSpace(x))
		starts := func(w string) bool { return strings.HasPrefix(l, w) }
		if slices.ContainsFunc(said.Refusals, starts) || mentions(l, said.RefusalWords) {
			return false
		}
		for _, w := range said.Consents {
			if strings.HasPrefix(l, w) || strings.Contains(l, " "+w) {
				return true
			}
		}
	case map[string]any:
		if b, ok := x["confirm"].(bool); ok {
			return b
		}
		if t, ok := x["type"].(string); ok {
			return t == "accept"
		}
	case []any:
		if len(x) == 1 {
			return Consented(x[0])
		}
	}
	return false
}

func (o *Orchestrator) removeFromPortfolio(ctx context.Context, c *call, a propArgs) (*tool.Result, error) {
	it, items, err := c.resolve(ctx, a.Property)
	if err != nil {
		return nil, err
	}
	if it == nil || (a.Property == "" && matchWords(items, c.audit.Trigger) == nil && len(items) > 1 && !it.IsActive) {
		return notFound(items, a.Property)
	}
	q := answer("remove_confirm", "property", it.IndexSummary)
	consent, err := graph.Interrupt(ctx, ConsentRequest{Type: "consent", Action: "remove_from_portfolio", PropertyID: it.PropertyID, Question: q})
	if err != nil {
		return nil, err
	}
	if !Consented(consent) {
		return ok(answer("remove_kept", "property", it.IndexSummary), nil)
	}
	if _, err := c.env.Data.ArchiveItem(ctx, c.who, it.PropertyID, c.audit); err != nil {
		return nil, err
	}
	if c.env.Store != nil {
		_ = c.env.Store.Delete(ctx, kv.DeleteRequest{Namespace: portfolioNS(c.who.User), Key: it.PropertyID})
	}
	upd, err := c.portfolioUpdate(ctx)
	if err != nil {
		return nil, err
	}
	for p := range c.st.Knowledge {
		if strings.HasPrefix(p, "portfolio/"+it.PropertyID+"/") {
			upd[p] = Tombstone()
		}
	}
	u := tool.Update{"knowledge": upd,
		"executed_actions": []ExecutedAction{{Type: "remove_from_portfolio", Summary: it.IndexSummary}},
		"stream_events":    []map[string]any{actionEvent("remove_from_portfolio", answer("removed_event", "property", it.IndexSummary))}}
	if c.st.CurrentFocus != nil && c.st.CurrentFocus.PropertyID == it.PropertyID {
		u["current_focus"] = &kb.Focus{}
	}
	return ok(answer("removed", "property", it.IndexSummary), u)
}

func (o *Orchestrator) switchActive(ctx context.Context, c *call, a propArgs) (*tool.Result, error) {
	it, items, err := c.resolve(ctx, a.Property)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return notFound(items, a.Property)
	}
	it, err = c.env.Data.SetActive(ctx, c.who, it.PropertyID, c.audit)
	if err != nil {
		return nil, err
	}
	upd, err := c.portfolioUpdate(ctx)
	if err != nil {
		return nil, err
	}
	text := it.ChatSummary
	if text == "" {
		text = kb.Compact(it.Property.Price, it.Property.AreaM2) + "\n" + answer("not_analysed")
	}
	e := kb.NewEntry(it.IndexSummary, text, kb.SourceDB, true)
	e.Touched = c.turn
	upd["portfolio/"+it.PropertyID+"/resumo"] = e
	if it.DetailSummary != "" {
		upd["portfolio/"+it.PropertyID+"/analise"] = kb.NewEntry(answer("analysis_title", "property", it.IndexSummary), it.DetailSummary, kb.SourceDB, false)
	}
	topic := answer("topic_property")
	if c.st.CurrentFocus != nil && c.st.CurrentFocus.Topic != "" {
		topic = c.st.CurrentFocus.Topic
	}
	return ok(answer("focus_on", "property", it.IndexSummary, "summary", text), tool.Update{"knowledge": upd, "current_focus": &kb.Focus{PropertyID: it.PropertyID, Topic: topic}})
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"the user's words for the property, e.g. o de Alfama, o mais barato"`
}

func portfolioNS(user string) []string { return []string{"rehab", "users", user, "portfolio"} }

// index puts a portfolio item's description in the store, for search by meaning.
func (o *Orchestrator) index(ctx context.Context, c *call, it *store.PortfolioItem, description string) {
	if c.env.Store == nil {
		return
	}
	ns := portfolioNS(c.who.User)
	if description == "" {
		// Keep the description an earlier put indexed (a recalculation does not fetch it).
		if old, err := c.env.Store.Get(ctx, kv.GetRequest{Namespace: ns, Key: it.PropertyID}); err == nil {
			description, _ = old.Value["description"].(string)
		}
	}
	text := strings.Join([]string{it.Nickname, it.Property.Title, it.Property.Location, it.Property.Typology, it.IndexSummary, it.ChatSummary, description}, ". ")
	_ = c.env.Store.Put(ctx, kv.PutRequest{Namespace: ns, Key: it.PropertyID,
		Value: map[string]any{"text": text, "property_id": it.PropertyID, "index_summary": it.IndexSummary, "description": description}, Index: []string{"text"}})
}

func (o *Orchestrator) searchPortfolio(ctx context.Context, c *call, a searchArgs) (*tool.Result, error) {
	items, err := c.env.Data.Portfolio(ctx, c.who, false)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return ok(answer("portfolio_empty"), nil)
	}
	q := strings.ToLower(a.Query + " " + c.audit.Trigger)
	// Superlatives are answered from the numbers, not from words.
	pick := func(less func(x, y store.PortfolioItem) bool, why string) (*tool.Result, error) {
		sorted := append([]store.PortfolioItem(nil), items...)
		sort.SliceStable(sorted, func(i, j int) bool { return less(sorted[i], sorted[j]) })
		it := sorted[0]
		return ok(answer("superlative", "says", why, "property", it.IndexSummary), nil)
	}
	// The questions and their answers' words are the pack's (words.json's superlatives).
	for _, sp := range said.Superlatives {
		if !mentions(q, sp.Words) {
			continue
		}
		num := func(it store.PortfolioItem) float64 { return it.Property.Price }
		if sp.By == "area" {
			num = func(it store.PortfolioItem) float64 { return it.Property.AreaM2 }
		}
		if sp.Order == "most" {
			return pick(func(x, y store.PortfolioItem) bool { return num(x) > num(y) }, sp.Says)
		}
		return pick(func(x, y store.PortfolioItem) bool { return num(x) < num(y) }, sp.Says)
	}
	if m := matchWords(items, a.Query); len(m) > 0 {
		var sums []string
		for _, it := range m {
			sums = append(sums, it.IndexSummary)
		}
		return ok(answer("search_found", "list", bullets(sums)), nil)
	}
	if c.env.Store != nil {
		found, err := c.env.Store.Search(ctx, kv.SearchRequest{NamespacePrefix: portfolioNS(c.who.User), Query: a.Query, Limit: 3})
		if err == nil && len(found) > 0 {
			var sums []string
			for _, f := range found {
				sums = append(sums, fmt.Sprint(f.Value["index_summary"]))
			}
			return ok(answer("search_near", "list", bullets(sums)), nil)
		}
	}
	return notFound(items, a.Query)
}

type analysisArgs struct {
	URL      string `json:"url,omitempty" jsonschema:"the Idealista listing URL"`
	Property string `json:"property_id,omitempty" jsonschema:"instead of a URL, a portfolio property not analysed yet (id or words)"`
}

// preferences reads the estimate's preferences from a profile.
func preferences(p *store.Profile) reno.Preferences {
	r := p.Sections["renovation"]
	out := reno.Preferences{Skills: kb.Strings(r["diy_skills"]), Skip: kb.Strings(r["excluir"])}
	out.Quality, _ = r["qualidade"].(string)
	return out
}

func (o *Orchestrator) triggerAnalysis(ctx context.Context, c *call, a analysisArgs) (*tool.Result, error) {
	if c.env.Pipeline == nil {
		return refuse(answer("listing_unavailable"))
	}
	url := a.URL
	if url == "" && a.Property != "" {
		it, items, err := c.resolve(ctx, a.Property)
		if err != nil {
			return nil, err
		}
		if it == nil {
			return notFound(items, a.Property)
		}
		url = it.Property.URL
		if url == "" {
			url = it.Property.IdealistaID
		}
	}
	if _, err := listing.ID(url); err != nil {
		return refuse(ListingProblem(err))
	}
	scraped, err := c.env.Pipeline.Scrape(ctx, url)
	if err != nil {
		return refuse(ListingProblem(err))
	}
	prof, err := c.env.Data.Profile(ctx, c.who)
	if err != nil {
		return nil, err
	}
	it, err := c.env.Data.SaveProperty(ctx, c.who, propertyOf(scraped.Listing), "", c.audit)
	if err != nil {
		return nil, err
	}
	rooms := make([]store.RoomFeature, len(scraped.Rooms))
	for i, r := range scraped.Rooms {
		rooms[i] = store.RoomFeature{RoomType: r.Type, RoomIndex: r.Index, AreaM2: r.AreaM2, Condition: r.Condition, Features: r.Features, Photo: r.Photo}
	}
	if err := c.env.Data.SaveRoomFeatures(ctx, c.who, it.PropertyID, rooms); err != nil {
		return nil, err
	}
	res := reno.Analyze(scraped.Listing, it.PropertyID, scraped.Rooms, preferences(prof))
	return o.finishAnalysis(ctx, c, it, res, prof, "trigger_property_analysis", scraped.Listing.Description)
}

// finishAnalysis stores an analysis and returns the tool's answer and state update.
func (o *Orchestrator) finishAnalysis(ctx context.Context, c *call, it *store.PortfolioItem, res *reno.Result, prof *store.Profile, kind, description string) (*tool.Result, error) {
	chat, detail := kb.ChatSummary(res), kb.DetailSummary(res)
	raw, _ := json.Marshal(res)
	if _, err := c.env.Data.SaveAnalysis(ctx, c.who, store.Analysis{PropertyID: it.PropertyID, Type: "renovation", Result: raw, ChatSummary: chat, DetailSummary: detail}, c.audit); err != nil {
		return nil, err
	}
	line := kb.IndexLine(it.Property, res.TotalMin, res.TotalMax)
	if err := c.env.Data.SetIndexSummary(ctx, c.who, it.ID, line); err != nil {
		return nil, err
	}
	it, err := c.env.Data.SetActive(ctx, c.who, it.PropertyID, c.audit)
	if err != nil {
		return nil, err
	}
	o.index(ctx, c, it, description)
	upd, err := c.portfolioUpdate(ctx)
	if err != nil {
		return nil, err
	}
	e := kb.NewEntry(line, chat, kb.SourcePipeline, true)
	e.Touched = c.turn
	upd["portfolio/"+it.PropertyID+"/resumo"] = e
	upd["portfolio/"+it.PropertyID+"/analise"] = kb.NewEntry(answer("analysis_title", "property", line), detail, kb.SourcePipeline, false)
	// Proactive suggestions: the budget, the taxes, the dearest room.
	var tips []string
	if max, ok := kb.Num(prof.Sections["budget"]["max"]); ok && max > 0 {
		if res.Price+res.TotalMax <= max {
			tips = append(tips, answer("within_budget", "budget", kb.Euro(max)))
		} else if res.Price <= max {
			tips = append(tips, answer("works_over_budget", "over", kb.Euro(res.Price+res.TotalMax-max)))
		} else {
			tips = append(tips, answer("over_budget", "over", kb.Euro(res.Price-max)))
		}
	}
	tips = append(tips, answer("offer_taxes"))
	if pr := reno.Priority(res.Rooms); len(pr) > 0 {
		tips = append(tips, answer("offer_room", "room", strings.ToLower(reno.RoomLabel(pr[0].Type))))
	}
	done := answer("analysis_done", "property", line)
	if kind == "recalculate_costs" {
		done = answer("costs_recalculated", "property", line)
	}
	content := done + "\n" + chat + "\n\n" + strings.Join(tips, " ")
	return ok(content, tool.Update{"knowledge": upd,
		"current_focus":    &kb.Focus{PropertyID: it.PropertyID, Topic: answer("topic_renovation")},
		"executed_actions": []ExecutedAction{{Type: kind, Summary: line}},
		"stream_events":    []map[string]any{actionEvent(kind, line)}})
}

func (o *Orchestrator) recalculateCosts(ctx context.Context, c *call, a propArgs) (*tool.Result, error) {
	it, items, err := c.resolve(ctx, a.Property)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return notFound(items, a.Property)
	}
	cached, err := c.env.Data.RoomFeatures(ctx, c.who, it.PropertyID)
	if err != nil {
		return nil, err
	}
	if len(cached) == 0 {
		return refuse(answer("recalc_not_analysed", "property", it.IndexSummary))
	}
	prof, err := c.env.Data.Profile(ctx, c.who)
	if err != nil {
		return nil, err
	}
	// The user's words may carry the change that prompted the recalculation.
	if d := ExtractSection("renovation", c.audit.Trigger); len(d) > 0 {
		if prof, err = c.env.Data.UpdateProfile(ctx, c.who, store.ProfileUpdate{Section: "renovation", Data: d, Summarize: kb.Summarize("renovation")},
			store.Audit{ConversationID: c.audit.ConversationID, Trigger: c.audit.Trigger, Confidence: 0.8}); err != nil {
			return nil, err
		}
	}
	rooms := make([]reno.Room, len(cached))
	for i, r := range cached {
		rooms[i] = reno.Room{Type: r.RoomType, Index: r.RoomIndex, AreaM2: r.AreaM2, Condition: r.Condition, Features: r.Features, Photo: r.Photo}
	}
	l := &listing.Listing{ID: it.Property.IdealistaID, Title: it.Property.Title, Typology: it.Property.Typology, Location: it.Property.Location,
		Price: it.Property.Price, AreaM2: it.Property.AreaM2}
	res := reno.Analyze(l, it.PropertyID, rooms, preferences(prof))
	return o.finishAnalysis(ctx, c, it, res, prof, "recalculate_costs", "")
}

type taxArgs struct {
	Property string  `json:"property_id,omitempty" jsonschema:"the property (id or words); the one in focus when empty"`
	Price    float64 `json:"price,omitempty" jsonschema:"a price in euros, instead of a property's"`
}

func (o *Orchestrator) calculateTaxes(ctx context.Context, c *call, a taxArgs) (*tool.Result, error) {
	price := a.Price
	var it *store.PortfolioItem
	if price < 0 {
		return refuse(answer("tax_needs_price"))
	}
	if price == 0 {
		if am := Amounts(c.audit.Trigger); len(am) == 1 && a.Property == "" {
			price = am[0]
		}
	}
	if price <= 0 {
		var items []store.PortfolioItem
		var err error
		if it, items, err = c.resolve(ctx, a.Property); err != nil {
			return nil, err
		}
		if it == nil {
			return notFound(items, a.Property)
		}
		price = it.Property.Price
	}
	prof, err := c.env.Data.Profile(ctx, c.who)
	if err != nil {
		return nil, err
	}
	f := prof.Sections["fiscal"]
	p := taxes.Profile{OwnPermanentHome: true}
	if v, ok := f["habitacao_propria_permanente"].(bool); ok {
		p.OwnPermanentHome = v
	}
	if v, ok := f["primeira_habitacao"].(bool); ok {
		p.FirstHome = v
	}
	if n, ok := kb.Num(f["idade"]); ok {
		p.Age = int(n)
	}
	now := time.Now()
	if c.env.Data.Now != nil {
		now = c.env.Data.Now()
	}
	tables, _ := taxes.For(now.Year())
	r, err := tables.Compute(price, p)
	if err != nil {
		return refuse(answer("tax_needs_price"))
	}
	var b strings.Builder
	what := kb.Euro(price)
	if it != nil {
		what = it.IndexSummary
	}
	b.WriteString(answer("tax_heading", "what", what, "year", strconv.Itoa(r.TablesOfYear), "table", r.Table) + "\n")
	b.WriteString(answer("tax_lines", "imt", kb.EuroCents(r.IMT), "stamp", kb.EuroCents(r.Stamp), "total", kb.EuroCents(r.Total)))
	b.WriteString("\n" + r.Explain())
	switch {
	case len(f) == 0:
		b.WriteString("\n" + answer("tax_profile_unknown"))
	case !r.YoungExempt && p.OwnPermanentHome && p.Age == 0 && p.FirstHome:
		b.WriteString("\n" + answer("tax_age_hint"))
	}
	upd := tool.Update{}
	if it != nil {
		raw, _ := json.Marshal(r)
		if _, err := c.env.Data.SaveAnalysis(ctx, c.who, store.Analysis{PropertyID: it.PropertyID, Type: "fiscal", Result: raw,
			ChatSummary: answer("tax_chat", "imt", kb.Euro(r.IMT), "stamp", kb.Euro(r.Stamp), "total", kb.Euro(r.Total))}, c.audit); err != nil {
			return nil, err
		}
		e := kb.NewEntry(answer("tax_entry", "total", kb.Euro(r.Total)), b.String(), kb.SourceTool, true)
		e.Touched = c.turn
		upd["knowledge"] = kb.KB{"portfolio/" + it.PropertyID + "/impostos": e}
		if tot, ok := totalCost(c.st, it.PropertyID); ok {
			b.WriteString("\n" + answer("tax_total_cost", "range", kb.EuroRange(price+tot[0]+r.Total, price+tot[1]+r.Total)))
		}
	}
	return ok(b.String(), upd)
}

// totalCost reads a property's renovation range from its summary in the knowledge base.
func totalCost(st State, propertyID string) ([2]float64, bool) {
	e, ok := st.Knowledge["portfolio/"+propertyID+"/resumo"]
	if !ok {
		return [2]float64{}, false
	}
	lo, hi, ok := kb.WorksRange(e.Text)
	return [2]float64{lo, hi}, ok
}

type compareArgs struct {
	Properties []string `json:"property_ids,omitempty" jsonschema:"2 or 3 properties (ids or words); the first three of the portfolio when empty"`
}

func (o *Orchestrator) compareProperties(ctx context.Context, c *call, a compareArgs) (*tool.Result, error) {
	items, err := c.env.Data.Portfolio(ctx, c.who, false)
	if err != nil {
		return nil, err
	}
	var chosen []store.PortfolioItem
	seen := map[string]bool{}
	for _, ref := range a.Properties {
		it, _, err := c.resolve(ctx, ref)
		if err != nil {
			return nil, err
		}
		if it != nil && !seen[it.ID] {
			seen[it.ID] = true
			chosen = append(chosen, *it)
		}
	}
	if len(chosen) < 2 {
		for _, m := range matchAll(items, c.audit.Trigger) {
			if !seen[m.ID] {
				seen[m.ID] = true
				chosen = append(chosen, m)
			}
		}
	}
	for _, it := range items {
		if len(chosen) >= 2 && len(a.Properties) > 0 || len(chosen) >= 3 {
			break
		}
		if !seen[it.ID] {
			seen[it.ID] = true
			chosen = append(chosen, it)
		}
	}
	if len(chosen) > 3 {
		chosen = chosen[:3]
	}
	if len(chosen) < 2 {
		return refuse(answer("compare_needs_two", "count", strconv.Itoa(len(items))))
	}
	return ok(CompareTable(chosen), nil)
}

func matchAll(items []store.PortfolioItem, text string) []store.PortfolioItem {
	low := strings.ToLower(text)
	var out []store.PortfolioItem
	for _, it := range items {
		for _, n := range Neighbourhoods {
			ln := strings.ToLower(n)
			if strings.Contains(low, ln) && strings.Contains(itemWords(&it), ln) {
				out = append(out, it)
				break
			}
		}
	}
	return out
}

// CompareTable renders portfolio items side by side.
func CompareTable(items []store.PortfolioItem) string {
	var b strings.Builder
	b.WriteString("| |")
	for _, it := range items {
		name := strings.TrimSpace(it.Property.Typology + " " + kb.Neighbourhood(it.Property.Location))
		fmt.Fprintf(&b, " %s |", name)
	}
	b.WriteString("\n|---|")
	for range items {
		b.WriteString("---|")
	}
	row := func(label string, f func(it store.PortfolioItem) string) {
		fmt.Fprintf(&b, "\n| %s |", label)
		for _, it := range items {
			fmt.Fprintf(&b, " %s |", f(it))
		}
	}
	row(answer("compare_price"), func(it store.PortfolioItem) string { return kb.Euro(it.Property.Price) })
	row(answer("compare_area"), func(it store.PortfolioItem) string { return kb.Area(it.Property.AreaM2) })
	row(answer("compare_per_m2"), func(it store.PortfolioItem) string {
		if it.Property.AreaM2 == 0 {
			return "—"
		}
		return kb.Euro(it.Property.Price / it.Property.AreaM2)
	})
	reno := func(it store.PortfolioItem) (float64, float64, bool) { return kb.WorksRange(it.ChatSummary) }
	row(answer("compare_works"), func(it store.PortfolioItem) string {
		if lo, hi, ok := reno(it); ok {
			return kb.EuroRange(lo, hi)
		}
		return answer("compare_not_analysed")
	})
	row(answer("compare_total"), func(it store.PortfolioItem) string {
		if lo, hi, ok := reno(it); ok {
			return kb.EuroRange(it.Property.Price+lo, it.Property.Price+hi)
		}
		return answer("compare_price_plus_works", "price", kb.Euro(it.Property.Price))
	})
	row(answer("compare_status"), func(it store.PortfolioItem) string { return it.Status })
	cheapest := items[0]
	for _, it := range items[1:] {
		if it.Property.Price < cheapest.Property.Price {
			cheapest = it
		}
	}
	b.WriteString("\n\n" + answer("compare_cheapest", "property", strings.TrimSpace(cheapest.Property.Typology+" "+kb.Neighbourhood(cheapest.Property.Location)), "price", kb.Euro(cheapest.Property.Price)))
	return b.String()
}

// ListingProblem explains in pt-PT why a listing could not be read, and that nothing was saved.
func ListingProblem(err error) string {
	switch {
	case errors.Is(err, listing.ErrBadURL):
		return answer("listing_bad_url")
	case errors.Is(err, listing.ErrRemoved):
		return answer("listing_removed")
	case errors.Is(err, listing.ErrUnreadable):
		return answer("listing_unreadable")
	default:
		return answer("listing_unreachable")
	}
}
