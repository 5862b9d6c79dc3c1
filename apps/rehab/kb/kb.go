// Package kb is the orchestrator's working memory as a virtual file system: path-keyed
// entries whose summary is always shown to the model and whose content is loaded on demand,
// the context block (## Estado Atual) rebuilt after every tool call, and the template summaries
// and pt-PT number formats of the specification.
package kb

import (
	"fmt"
	"sort"
	"strings"

	"github.com/trellis-go/trellis/apps/rehab/store"
)

// Sources of an entry.
const (
	SourceDB       = "db"
	SourceTool     = "tool"
	SourcePipeline = "pipeline"
)

// Entry is one file of the knowledge base.
type Entry struct {
	// Summary is always shown in the context block's index.
	Summary string `json:"summary"`
	// Content is what is loaded: nil when nothing is, the whole text or a slice of its lines.
	Content *string `json:"content"`
	// LinesLoaded and TotalLines say how much of the text is loaded.
	LinesLoaded int `json:"lines_loaded"`
	TotalLines  int `json:"total_lines"`
	// Source is where the entry came from: db, tool or pipeline.
	Source string `json:"source"`
	// Text is the entry's whole text, kept so it can be loaded again without a query.
	Text string `json:"text,omitempty"`
	// Touched is the turn in which the entry was last loaded, written or read.
	Touched int `json:"touched,omitempty"`
}

// Loaded reports whether any content is loaded.
func (e Entry) Loaded() bool { return e.Content != nil }

// KB is the knowledge base: path to entry.
type KB map[string]Entry

// Clone copies the map (entries are values).
func (k KB) Clone() KB {
	out := make(KB, len(k))
	for p, e := range k {
		out[p] = e
	}
	return out
}

// Settings are the orchestrator configuration knobs the knowledge base uses.
type Settings struct {
	// MinLinesForPartialRead: below this many lines a read loads everything. Zero means 20.
	MinLinesForPartialRead int
	// BudgetTokens bounds the context block. Zero means 4000.
	BudgetTokens int
}

func (s Settings) minLines() int {
	if s.MinLinesForPartialRead <= 0 {
		return 20
	}
	return s.MinLinesForPartialRead
}

func (s Settings) budget() int {
	if s.BudgetTokens <= 0 {
		return 4000
	}
	return s.BudgetTokens
}

func lines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimRight(text, "\n"), "\n")
}

// NewEntry makes an entry of text, loaded or only available.
func NewEntry(summary, text, source string, loaded bool) Entry {
	e := Entry{Summary: summary, Text: text, Source: source, TotalLines: len(lines(text))}
	if loaded {
		c := text
		e.Content, e.LinesLoaded = &c, e.TotalLines
	}
	return e
}

// Protected reports whether a path is of the always-present tier, which demotion keeps:
// user/profile, portfolio/index, the active property's resumo and the last session's summary.
func Protected(path, activeProperty string) bool {
	switch path {
	case "user/profile", "portfolio/index", "session/resumo_anterior", "session/resumo_atual":
		return true
	}
	return activeProperty != "" && path == "portfolio/"+activeProperty+"/resumo"
}

// Read loads an entry: all of it, or lines [start, start+n) (1-based) when the text has at
// least MinLinesForPartialRead lines and a range is asked for. It returns the text read.
func Read(k KB, path string, start, n int, s Settings, turn int) (string, error) {
	e, ok := k[path]
	if !ok {
		return "", fmt.Errorf("caminho %q não existe; caminhos disponíveis: %s", path, strings.Join(k.Paths(), ", "))
	}
	all := lines(e.Text)
	var got []string
	if len(all) < s.minLines() || (start <= 1 && n <= 0) {
		got = all
	} else {
		if start < 1 {
			start = 1
		}
		if start > len(all) {
			return "", fmt.Errorf("%q tem %d linhas; start_line %d está fora", path, len(all), start)
		}
		end := len(all)
		if n > 0 && start-1+n < end {
			end = start - 1 + n
		}
		got = all[start-1 : end]
	}
	c := strings.Join(got, "\n")
	e.Content, e.LinesLoaded, e.TotalLines, e.Touched = &c, len(got), len(all), turn
	k[path] = e
	return c, nil
}

// Write stores (or replaces) an entry, loaded.
func Write(k KB, path, summary, text, source string, turn int) {
	e := NewEntry(summary, text, source, true)
	e.Touched = turn
	k[path] = e
}

// Remove deletes an entry; it reports whether one was there.
func Remove(k KB, path string) bool {
	_, ok := k[path]
	delete(k, path)
	return ok
}

// RemovePrefix deletes every entry under a prefix.
func RemovePrefix(k KB, prefix string) {
	for p := range k {
		if strings.HasPrefix(p, prefix) {
			delete(k, p)
		}
	}
}

// Offload unloads an entry's content, keeping its summary.
func Offload(k KB, path string) {
	if e, ok := k[path]; ok {
		e.Content, e.LinesLoaded = nil, 0
		k[path] = e
	}
}

// DemoteStale offloads every loaded entry not touched in this turn, except protected ones.
// It returns the paths demoted.
func DemoteStale(k KB, turn int, activeProperty string) []string {
	var out []string
	for _, p := range k.Paths() {
		e := k[p]
		if e.Loaded() && e.Touched < turn && !Protected(p, activeProperty) {
			Offload(k, p)
			out = append(out, p)
		}
	}
	return out
}

// Paths lists the paths in order.
func (k KB) Paths() []string {
	out := make([]string, 0, len(k))
	for p := range k {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return pathLess(out[i], out[j]) })
	return out
}

// user/profile, the sections in their order, portfolio/index, each property's resumo before
// its other entries, the session, then the rest, alphabetically.
func pathLess(a, b string) bool {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra < rb
	}
	if ra == 1 {
		sa, sb := sectionRank(a), sectionRank(b)
		if sa != sb {
			return sa < sb
		}
	}
	if ra == 3 {
		a, b = strings.Replace(a, "/resumo", "/!resumo", 1), strings.Replace(b, "/resumo", "/!resumo", 1)
	}
	return a < b
}

func sectionRank(p string) int {
	for i, s := range store.ProfileSections {
		if p == "user/"+s {
			return i
		}
	}
	return len(store.ProfileSections)
}

func rank(p string) int {
	switch {
	case p == "user/profile":
		return 0
	case strings.HasPrefix(p, "user/"):
		return 1
	case p == "portfolio/index":
		return 2
	case strings.HasPrefix(p, "portfolio/"):
		return 3
	case strings.HasPrefix(p, "session/"):
		return 4
	}
	return 5
}

// Todo is one task of a multi-step request.
type Todo struct {
	ID     string `json:"id"`
	Task   string `json:"task"`
	Status string `json:"status"` // pending, done, or removed (kept so that every copy of the list drops it)
}

// Focus is what the conversation is about.
type Focus struct {
	PropertyID string `json:"property_id,omitempty"`
	Topic      string `json:"topic,omitempty"`
	Level      int    `json:"level"`
}

// Build turns hydrated data into the knowledge base: the always-present tier loaded, the
// available tier as summaries only. Empty states get sensible defaults.
func Build(h *store.Hydrated) (KB, string) {
	k := KB{}
	p := h.Profile
	master := NoProfile
	if p != nil && p.Exists {
		master = p.Summary
		if master == "" {
			master = MasterSummary(p)
		}
	}
	var prof strings.Builder
	if p != nil && p.Exists {
		fmt.Fprintf(&prof, "Nome: %s\nLocalização: %s\n", orDash(p.Name), orDash(p.Location))
		for _, s := range store.ProfileSections {
			sum := p.Summaries[s]
			if sum == "" {
				sum = SectionSummary(s, p.Sections[s])
			}
			if label := sectionLabel(s); strings.HasPrefix(sum, label) {
				fmt.Fprintf(&prof, "%s\n", sum)
			} else {
				fmt.Fprintf(&prof, "%s: %s\n", label, sum)
			}
		}
		if m := MemoryText(p.Memory); m != "" {
			prof.WriteString(m)
		}
	} else {
		prof.WriteString("Perfil não configurado: ainda não sabemos nada do utilizador.")
	}
	k["user/profile"] = NewEntry(master, prof.String(), SourceDB, true)
	if p != nil && p.Exists {
		for _, s := range store.ProfileSections {
			d, ok := p.Sections[s]
			if !ok {
				continue
			}
			sum := p.Summaries[s]
			if sum == "" {
				sum = SectionSummary(s, d)
			}
			k["user/"+s] = NewEntry(sum, SectionText(s, d), SourceDB, false)
		}
	}
	active := ""
	var idx strings.Builder
	for _, it := range h.Portfolio {
		line := it.IndexSummary
		if line == "" {
			line = IndexLine(it.Property, 0, 0)
		}
		mark := ""
		if it.IsActive {
			active, mark = it.PropertyID, " (ativo)"
		}
		fmt.Fprintf(&idx, "%s: %s [%s]%s\n", it.PropertyID, line, it.Status, mark)
		if it.ChatSummary != "" {
			k["portfolio/"+it.PropertyID+"/resumo"] = NewEntry(line, it.ChatSummary, SourceDB, it.IsActive)
		}
		if it.DetailSummary != "" {
			k["portfolio/"+it.PropertyID+"/analise"] = NewEntry("Análise detalhada: "+line, it.DetailSummary, SourceDB, false)
		}
	}
	idxSummary := EmptyPortfolio
	if n := len(h.Portfolio); n > 0 {
		idxSummary = fmt.Sprintf("%d imóvel(is) no portfólio", n)
	} else {
		idx.WriteString("Portfólio vazio.")
	}
	k["portfolio/index"] = NewEntry(idxSummary, idx.String(), SourceDB, true)
	if h.LastSummary != "" {
		k["session/resumo_anterior"] = NewEntry(firstLine(h.LastSummary), h.LastSummary, SourceDB, true)
	}
	return k, active
}

// PortfolioIndex rebuilds the portfolio/index entry from items.
func PortfolioIndex(items []store.PortfolioItem) Entry {
	var idx strings.Builder
	for _, it := range items {
		mark := ""
		if it.IsActive {
			mark = " (ativo)"
		}
		fmt.Fprintf(&idx, "%s: %s [%s]%s\n", it.PropertyID, it.IndexSummary, it.Status, mark)
	}
	if len(items) == 0 {
		return NewEntry(EmptyPortfolio, EmptyPortfolio+".", SourceTool, true)
	}
	return NewEntry(fmt.Sprintf("%d imóvel(is) no portfólio", len(items)), idx.String(), SourceTool, true)
}

// SectionText is a section's data as lines.
func SectionText(section string, d map[string]any) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := d[k]
		switch x := v.(type) {
		case float64:
			if section == "budget" {
				fmt.Fprintf(&b, "%s: %s\n", k, Euro(x))
				continue
			}
		case []any:
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(strs(x), ", "))
			continue
		}
		fmt.Fprintf(&b, "%s: %v\n", k, v)
	}
	return b.String()
}

// MemoryText renders the structured memory.
func MemoryText(m store.Memory) string {
	var b strings.Builder
	for _, d := range m.Decisions {
		b.WriteString("Decisão: " + d + "\n")
	}
	for _, r := range m.Rejected {
		b.WriteString("Rejeitado: " + r.Property + " (" + r.Reason + ")\n")
	}
	for _, q := range m.OpenQuestions {
		b.WriteString("Questão em aberto: " + q + "\n")
	}
	return b.String()
}

func sectionLabel(s string) string {
	switch s {
	case "fiscal":
		return "Fiscal"
	case "budget":
		return "Orçamento"
	case "renovation":
		return "Obras"
	case "preferences":
		return "Preferências"
	case "goals":
		return "Objetivos"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, ".\n"); i > 0 {
		return s[:i+1]
	}
	return s
}

// ContextRefresh is the name of the context block's system message.
const ContextRefresh = "context_refresh"

// Block renders the context block: ## Estado Atual with the knowledge base index (loaded
// content under its line), the tasks and the focus.
func Block(k KB, todos []Todo, f *Focus) string {
	var b strings.Builder
	b.WriteString("## Estado Atual\n\n### Base de Conhecimento\n")
	for _, p := range k.Paths() {
		e := k[p]
		state := "disponível"
		if e.Loaded() {
			state = "carregado"
			if e.LinesLoaded < e.TotalLines {
				state = fmt.Sprintf("parcial %d/%d linhas", e.LinesLoaded, e.TotalLines)
			}
		}
		fmt.Fprintf(&b, "  %s [%s] — %s\n", p, state, e.Summary)
		if e.Loaded() && *e.Content != "" && *e.Content != e.Summary {
			for _, l := range lines(*e.Content) {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	b.WriteString("\n### Tarefas\n")
	shown := 0
	for _, t := range todos {
		if t.Status == "removed" {
			continue
		}
		shown++
		box := "☐"
		if t.Status == "done" {
			box = "☑"
		}
		fmt.Fprintf(&b, "  %s [%s] %s\n", box, t.ID, t.Task)
	}
	if shown == 0 {
		b.WriteString("  (nenhuma)\n")
	}
	b.WriteString("\n### Foco Atual\n")
	if f == nil || (f.PropertyID == "" && f.Topic == "") {
		b.WriteString("  (nenhum)\n")
	} else {
		fmt.Fprintf(&b, "  Imóvel: %s | Tópico: %s | Nível: %d\n", orDash(f.PropertyID), orDash(f.Topic), f.Level)
	}
	return b.String()
}

// Tokens estimates a text's tokens (four characters each, as a budget check needs no more).
func Tokens(s string) int { return (len(s) + 3) / 4 }

// Fit enforces the token budget on the context block: loaded entries that are not protected
// are offloaded (least recently touched, then largest, first); if the block is still too big,
// protected entries are cut to their first lines and, at last, to their summaries. It returns
// the paths changed.
func Fit(k KB, todos []Todo, f *Focus, s Settings) []string {
	budget := s.budget()
	if Tokens(Block(k, todos, f)) <= budget {
		return nil
	}
	active := ""
	if f != nil {
		active = f.PropertyID
	}
	var changed []string
	var loaded []string
	for _, p := range k.Paths() {
		if k[p].Loaded() && !Protected(p, active) {
			loaded = append(loaded, p)
		}
	}
	sort.SliceStable(loaded, func(i, j int) bool {
		a, b := k[loaded[i]], k[loaded[j]]
		if a.Touched != b.Touched {
			return a.Touched < b.Touched
		}
		return len(*a.Content) > len(*b.Content)
	})
	for _, p := range loaded {
		Offload(k, p)
		changed = append(changed, p)
		if Tokens(Block(k, todos, f)) <= budget {
			return changed
		}
	}
	// Summarise the protected ones: keep fewer and fewer lines, then only the summary.
	for _, keep := range []int{10, 3, 0} {
		for _, p := range k.Paths() {
			e := k[p]
			if !e.Loaded() || e.LinesLoaded <= keep {
				continue
			}
			ls := lines(*e.Content)
			if len(ls) > keep {
				ls = ls[:keep]
			}
			c := strings.Join(ls, "\n")
			e.Content, e.LinesLoaded = &c, len(ls)
			k[p] = e
			changed = append(changed, p)
			if Tokens(Block(k, todos, f)) <= budget {
				return changed
			}
		}
	}
	return changed
}
