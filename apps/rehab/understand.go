package rehab

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/nlu"
	"github.com/trellis-go/trellis/apps/rehab/pack"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

// A plan is what a run on the offline model does for one user message, in steps (one assistant
// message of tool calls each): first the profile facts the message states in passing (saved
// silently, with their confidence), then the call its intent asks for. Reply, when set, is the
// answer when no tool fits (a question back, in pt-PT).
type plan struct {
	steps [][]message.ToolCall
	reply string
}

// Neighbourhoods are the places that tell properties apart (pack.Places without the cities).
var Neighbourhoods = pack.Neighbourhoods()

// IntentOf asks m, the offline model with rehab's pack (added when m lacks it), which of the
// tools specs the user's text asks for, as a real model would be asked: the tool's name, or
// "todo_<action>" for manage_todos; "" when it asks for none.
func IntentOf(ctx context.Context, m model.Model, specs []model.ToolSpec, text string) (string, error) {
	// The tools are given without their required arguments: the model is asked which tool,
	// and rehab finds the arguments in its state (understand).
	free := make([]model.ToolSpec, len(specs))
	for i, s := range specs {
		free[i] = s
		var p map[string]any
		if json.Unmarshal(s.Parameters, &p) == nil && p["required"] != nil {
			delete(p, "required")
			free[i].Parameters, _ = json.Marshal(p)
		}
	}
	resp, err := withPack(m).Generate(ctx, &model.Request{Messages: []message.Message{message.User(text)}, Tools: free})
	if err != nil {
		return "", err
	}
	if len(resp.Message.ToolCalls) == 0 {
		return "", nil
	}
	c := resp.Message.ToolCalls[0]
	if c.Name == "manage_todos" {
		var a struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(c.Arguments, &a)
		if a.Action == "" {
			a.Action = "list"
		}
		return "todo_" + a.Action, nil
	}
	return c.Name, nil
}

// withPack is m with rehab's pack: m itself when it has it (the server gives it to the app's
// offline roles), else m extended with it, else a new offline model with it.
func withPack(m model.Model) model.Model {
	if m != nil && slices.Contains(offline.PacksOf(m), pack.Pack) {
		return m
	}
	if m != nil {
		if x, ok, err := offline.Extend(m, pack.Pack); ok && err == nil {
			return x
		}
	}
	return offline.New(&offline.Options{Packs: []*offline.Pack{pack.Pack}})
}

func toolCall(id, name string, args map[string]any) message.ToolCall {
	raw, _ := json.Marshal(args)
	return message.ToolCall{ID: id, Name: name, Arguments: raw}
}

// understand builds the plan of a user's message asking for intent (IntentOf) from the facts it
// states (package nlu) and the state: the properties the knowledge base lists, the property in
// focus, the tasks.
func understand(s State, text, intent string, now time.Time, idPrefix string) plan {
	var p plan
	n := 0
	next := func() string { n++; return idPrefix + "_" + string(rune('a'+n-1)) }

	facts := nlu.Facts(text, now)
	if intent == "" && len(facts) > 0 {
		intent = "update_user_profile" // facts said as they are: the profile is what they update
	}
	bySection := map[string]map[string]any{}
	conf := map[string]float64{}
	var sections []string
	for _, f := range facts {
		if bySection[f.Section] == nil {
			bySection[f.Section] = map[string]any{}
			conf[f.Section] = 1
			sections = append(sections, f.Section)
		}
		bySection[f.Section][f.Field] = f.Value
		conf[f.Section] = min(conf[f.Section], f.Confidence)
	}
	if len(sections) > 0 {
		var step []message.ToolCall
		for _, sec := range sections {
			c := conf[sec]
			if intent == "update_user_profile" {
				c = max(c, 0.9) // said as an update, not in passing
			}
			step = append(step, toolCall(next(), "update_user_profile", map[string]any{"section": sec, "data": bySection[sec], "confidence": c}))
		}
		p.steps = append(p.steps, step)
	}
	if intent == "update_user_profile" && len(sections) > 0 {
		return p
	}
	props := properties(s)
	named := namedProperties(props, text)
	focus := ""
	if s.CurrentFocus != nil {
		focus = s.CurrentFocus.PropertyID
	}
	first := func() string {
		if len(named) > 0 {
			return named[0]
		}
		return ""
	}
	call := func(name string, args map[string]any) {
		p.steps = append(p.steps, []message.ToolCall{toolCall(next(), name, args)})
	}
	url := idealistaURL.FindString(text)
	switch intent {
	case "":
		// Nothing asked: the facts alone (if any) are the turn.
	case "read_context":
		call("read_context", map[string]any{"path": readPath(s, text, first(), focus)})
	case "write_context":
		path, content := notePath(text)
		call("write_context", map[string]any{"path": path, "content": content})
	case "remove_context":
		if path := notePathToForget(s, text); path != "" {
			call("remove_context", map[string]any{"path": path})
		} else {
			p.reply = answer("forget_which")
		}
	case "todo_add":
		call("manage_todos", map[string]any{"action": "add", "task": TaskText(text)})
	case "todo_complete", "todo_reopen", "todo_remove", "todo_list":
		action := strings.TrimPrefix(intent, "todo_")
		args := map[string]any{"action": action}
		if action != "list" {
			args["task"] = strings.Join(nlu.Content(text, intent), " ")
			if id := todoID(s.Todos, text); id != "" {
				args["todo_id"] = id
			} else if n, ok := pack.Reader.Entity("todo_id", text); ok {
				args["todo_id"] = n // its number in the list
			}
		}
		call("manage_todos", args)
	case "update_user_profile":
		call("update_user_profile", map[string]any{"section": sectionOf(text)})
	case "save_to_portfolio":
		ref := url
		if ref == "" {
			ref = first()
		}
		if ref == "" && focus != "" && len(props) > 0 {
			ref = focus
		}
		if ref == "" {
			p.reply = answer("save_needs_link")
			break
		}
		call("save_to_portfolio", map[string]any{"property_id": ref})
	case "remove_from_portfolio", "switch_active_property", "recalculate_costs":
		call(intent, map[string]any{"property_id": first()})
	case "calculate_taxes":
		args := map[string]any{"property_id": first()}
		if a := nlu.SignedAmounts(text); len(a) == 1 && first() == "" {
			args = map[string]any{"price": a[0]}
		}
		call("calculate_taxes", args)
	case "search_portfolio":
		call("search_portfolio", map[string]any{"query": text})
	case "compare_properties":
		args := map[string]any{}
		if len(named) >= 2 {
			args["property_ids"] = named
		}
		call("compare_properties", args)
	case "trigger_property_analysis":
		if url != "" {
			call("trigger_property_analysis", map[string]any{"url": url})
			break
		}
		// No link: an analysed property is shown, not analysed again; one not analysed yet is
		// analysed from its listing.
		id := first()
		if id == "" {
			id = focus
		}
		switch {
		case id == "":
			p.reply = answer("analysis_needs_link")
		case hasEntry(s, "portfolio/"+id+"/analise"):
			call("read_context", map[string]any{"path": "portfolio/" + id + "/analise"})
		default:
			call("trigger_property_analysis", map[string]any{"property_id": id})
		}
	}
	return p
}

var idealistaURL = regexp.MustCompile(`(?i)https?://[^\s]*idealista\.[a-z]+/[^\s]*\d[^\s]*`)

func hasEntry(s State, path string) bool { _, ok := s.Knowledge[path]; return ok }

// property is a portfolio property as the knowledge base's index lists it.
type property struct{ id, line string }

var indexLineRE = regexp.MustCompile(`^([^:\s]+): (.*)$`)

func properties(s State) []property {
	var out []property
	if e, ok := s.Knowledge["portfolio/index"]; ok {
		for _, l := range strings.Split(e.Text, "\n") {
			if m := indexLineRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				out = append(out, property{m[1], m[2]})
			}
		}
	}
	return out
}

// namedProperties are the properties whose place or typology the text names, in the order the
// text names them.
func namedProperties(props []property, text string) []string {
	low := " " + strings.Join(nlu.Words(text), " ") + " "
	type hit struct {
		id  string
		pos int
	}
	var hits []hit
	seen := map[string]bool{}
	for _, place := range Neighbourhoods {
		fp := " " + strings.Join(nlu.Words(place), " ") + " "
		i := strings.Index(low, fp)
		if i < 0 {
			continue
		}
		for _, p := range props {
			if !seen[p.id] && strings.Contains(" "+strings.Join(nlu.Words(p.line), " ")+" ", fp) {
				seen[p.id] = true
				hits = append(hits, hit{p.id, i})
			}
		}
	}
	for _, p := range props {
		if seen[p.id] {
			continue
		}
		if strings.Contains(low, " "+strings.ToLower(p.id)+" ") {
			seen[p.id] = true
			hits = append(hits, hit{p.id, strings.Index(low, strings.ToLower(p.id))})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].pos < hits[j].pos })
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.id
	}
	return out
}

// readPath is the knowledge entry a request to see points to: a profile section or the memory
// (the pack's values of read_context's path), else an entry of the property named or in focus:
// its taxes when the message names them, its analysis or summary.
func readPath(s State, text, named, focus string) string {
	v, _ := pack.Reader.Value("read_context", "path", text)
	if named == "" && strings.Contains(v, "/") {
		return firstPresent(s, v, "user/profile")
	}
	id := named
	if id == "" {
		id = focus
	}
	if id == "" {
		return "portfolio/index"
	}
	if v != "" && !strings.Contains(v, "/") && hasEntry(s, "portfolio/"+id+"/"+v) {
		return "portfolio/" + id + "/" + v
	}
	return firstPresent(s, "portfolio/"+id+"/analise", "portfolio/"+id+"/resumo", "portfolio/index")
}

func firstPresent(s State, paths ...string) string {
	for _, p := range paths[:len(paths)-1] {
		if hasEntry(s, p) {
			return p
		}
	}
	return paths[len(paths)-1]
}

// notePath is where a note goes (decisions, rejected properties and open questions are kept in
// the memory across sessions: the pack's values of write_context's path) and its content,
// without the request around it.
func notePath(text string) (string, string) {
	content := afterLeadIn(text, "write_context")
	if path, ok := pack.Reader.Value("write_context", "path", text); ok {
		return path, content
	}
	slug := "nota"
	if c := nlu.Content(content); len(c) > 0 {
		slug = c[0]
	}
	return "notas/" + slug, content
}

// afterLeadIn is a message without the request that introduces it: what follows a colon, or the
// message without its leading cue words ("Anota que o condomínio…" gives "O condomínio…").
func afterLeadIn(text, intent string) string {
	t := strings.TrimSpace(text)
	if _, after, ok := strings.Cut(t, ":"); ok && strings.TrimSpace(after) != "" && !strings.Contains(t[:strings.Index(t, ":")], "http") {
		return capitalise(strings.TrimSpace(after))
	}
	words := strings.Fields(t)
	content := map[string]bool{}
	for _, c := range nlu.Content(t, intent) {
		content[c] = true
	}
	// Drop leading words that are cue or filler words, and a "que"/"de" after them.
	i := 0
	for i < len(words) {
		f := nlu.Words(words[i])
		if len(f) == 0 {
			i++
			continue
		}
		if content[f[0]] {
			break
		}
		i++
	}
	if i == len(words) {
		return t
	}
	return capitalise(strings.Join(words[i:], " "))
}

func capitalise(s string) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) == 0 {
		return ""
	}
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// TaskText is the task a request to add one names: "Adiciona uma tarefa: ligar ao canalizador"
// gives "Ligar ao canalizador"; "Tenho de ligar ao banco amanhã" gives "Ligar ao banco amanhã".
func TaskText(text string) string {
	t := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), ".!"))
	if i := strings.Index(t, ":"); i >= 0 && !strings.Contains(t[:i], "http") && strings.TrimSpace(t[i+1:]) != "" {
		return capitalise(strings.TrimSpace(t[i+1:]))
	}
	// Drop the leading words until the first one that is about the task (not a cue of adding
	// a task, not a filler word); keep the words in between that join it ("ao", "de").
	words := strings.Fields(t)
	content := map[string]bool{}
	for _, c := range nlu.Content(t, "todo_add") {
		content[c] = true
	}
	for i, w := range words {
		f := nlu.Words(w)
		if len(f) > 0 && content[f[0]] {
			return capitalise(strings.Join(words[i:], " "))
		}
	}
	return capitalise(t)
}

var hexID = regexp.MustCompile(`\b[0-9a-f]{8}\b`)

// todoID is the ID of a task the text names by its ID (its number in the list, "tarefa 2" or
// "#2", is the pack's todo_id entity).
func todoID(todos []kb.Todo, text string) string {
	for _, m := range hexID.FindAllString(strings.ToLower(text), -1) {
		for _, t := range todos {
			if t.ID == m {
				return m
			}
		}
	}
	return ""
}

// notePathToForget is the note a request to forget one points to: the note whose words the
// request shares most, else the latest note.
func notePathToForget(s State, text string) string {
	want := nlu.Content(text, "remove_context")
	best, bestScore, latest, latestTurn := "", 0, "", -1
	for p, e := range s.Knowledge {
		if !strings.HasPrefix(p, "notas/") && !strings.HasPrefix(p, "memoria/") {
			continue
		}
		if e.Touched > latestTurn || e.Touched == latestTurn && p > latest {
			latest, latestTurn = p, e.Touched
		}
		words := " " + strings.Join(nlu.Words(p+" "+e.Summary+" "+e.Text), " ") + " "
		score := 0
		for _, w := range want {
			if len(w) >= 4 && strings.Contains(words, " "+w) {
				score++
			}
		}
		if score > bestScore || score == bestScore && score > 0 && p < best {
			best, bestScore = p, score
		}
	}
	if best != "" {
		return best
	}
	return latest
}

// sectionOf is the profile section a request to update the profile names (the pack's values of
// update_user_profile's section), the preferences when it names none.
func sectionOf(text string) string {
	if sec, ok := pack.Reader.Value("update_user_profile", "section", text); ok {
		return sec
	}
	return "preferences"
}

// turnIntent is the intent of the user's message msgs[user] (IntentOf), and the previous turn's
// request when the message goes on from it: a message that starts with one of the pack's follow-up
// words ("e se fosse 1,2 milhões?", "e também pedir a caderneta predial") and asks for nothing in
// its other words asks for what the previous turn did. prev is then that turn's call (again
// asks it of the same thing when the message names nothing).
func turnIntent(ctx context.Context, m model.Model, specs []model.ToolSpec, msgs []message.Message, user int) (intent string, prev *message.ToolCall, err error) {
	text := msgs[user].Text()
	if intent, err = IntentOf(ctx, m, specs, text); err != nil {
		return "", nil, err
	}
	rest, ok := afterFollowUp(text)
	if !ok {
		return intent, nil, nil
	}
	call := previousCall(msgs[:user])
	if call == nil {
		return intent, nil, nil
	}
	// The other words are read by the pack's cues alone: the tools' descriptions would find a
	// weak intent in any words ("custasse" is near "costs").
	if nlu.Asks(rest) {
		own, err := IntentOf(ctx, m, specs, rest)
		if err != nil || own != "" {
			return own, call, err
		}
	}
	return intentOfCall(*call), call, nil
}

// afterFollowUp is the message without the follow-up words it starts with (pack.Words.FollowUps,
// the longest that fits), and whether it starts with one and has words after it.
func afterFollowUp(text string) (string, bool) {
	words := nlu.Words(text)
	best := 0
	for _, f := range pack.Words.FollowUps {
		lead := strings.Fields(f)
		if len(lead) > best && len(lead) < len(words) && slices.Equal(words[:len(lead)], lead) {
			best = len(lead)
		}
	}
	return strings.Join(words[best:], " "), best > 0
}

// previousCall is the request of the turn before the last message of msgs: the last call of that
// turn that is not a profile update said in passing (the update when it is the only one).
func previousCall(msgs []message.Message) *message.ToolCall {
	var found *message.ToolCall
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == message.RoleUser {
			break
		}
		if m.Role != message.RoleAssistant {
			continue
		}
		for j := len(m.ToolCalls) - 1; j >= 0; j-- {
			c := m.ToolCalls[j]
			if c.Name != "update_user_profile" {
				return &c
			}
			if found == nil {
				found = &c
			}
		}
	}
	return found
}

// intentOfCall is the intent a call answers, as IntentOf names it.
func intentOfCall(c message.ToolCall) string {
	if c.Name != "manage_todos" {
		return c.Name
	}
	var a struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(c.Arguments, &a)
	if a.Action == "" {
		a.Action = "list"
	}
	return "todo_" + a.Action
}

// again makes the plan's call of prev's tool ask it of what prev asked, when the message states
// none of its arguments ("e o selo, quanto é ao certo?" after the taxes of 250 mil: the same
// price).
func (p *plan) again(prev *message.ToolCall) {
	if prev == nil || len(p.steps) == 0 {
		return
	}
	step := p.steps[len(p.steps)-1]
	c := &step[len(step)-1]
	if c.Name != prev.Name {
		return
	}
	var args map[string]any
	if json.Unmarshal(c.Arguments, &args) != nil {
		return
	}
	for _, v := range args {
		if v != nil && v != "" && v != 0.0 {
			return
		}
	}
	c.Arguments = prev.Arguments
}
