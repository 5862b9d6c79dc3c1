package kb_test

import (
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/apps/rehab/store"
)

func TestFormats(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		kb.Euro(180000):             "180.000€",
		kb.Euro(1250000.4):          "1.250.000€",
		kb.Euro(950):                "950€",
		kb.EuroRange(15000, 25000):  "15.000€–25.000€",
		kb.Compact(180000, 65):      "Preço: 180.000€ | Área: 65m² | €/m²: 2.769€",
		kb.EuroShort(180000):        "180k€",
		kb.EuroShort(1200000):       "1,2M€",
		kb.RangeShort(15000, 25000): "15-25k€",
		kb.EuroCents(1234.5):        "1.234,50€",
		kb.Area(65.5):               "65,5m²",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestSummaries(t *testing.T) {
	t.Parallel()
	p := &store.Profile{Exists: true, Name: "João Silva", Location: "Lisboa", Sections: map[string]map[string]any{
		"fiscal":      {"regime": "IRS", "primeira_habitacao": true},
		"budget":      {"min": 150000.0, "max": 250000.0},
		"preferences": {"zonas": []any{"Alfama", "Graça"}, "tipologia": "T2"},
	}}
	if got := kb.MasterSummary(p); got != "João Silva | Lisboa | 3/5 secções completas" {
		t.Errorf("master %q", got)
	}
	if got := kb.MasterSummary(&store.Profile{}); got != "Perfil não configurado" {
		t.Errorf("empty master %q", got)
	}
	if got := kb.SectionSummary("fiscal", p.Sections["fiscal"]); got != "IRS | 1ª habitação" {
		t.Errorf("fiscal %q", got)
	}
	if got := kb.SectionSummary("budget", p.Sections["budget"]); got != "Orçamento: 150.000€–250.000€" {
		t.Errorf("budget %q", got)
	}
	if got := kb.SectionSummary("budget", map[string]any{"max": 180000.0}); got != "Orçamento: até 180.000€" {
		t.Errorf("budget max %q", got)
	}
	prop := store.Property{Typology: "T2", Location: "Alfama, Lisboa", Price: 180000, AreaM2: 65}
	if got := kb.IndexLine(prop, 15000, 25000); got != "T2 Alfama, 180k€, reno 15-25k€" {
		t.Errorf("index %q", got)
	}
	r := &reno.Result{Typology: "T2", Location: "Alfama, Lisboa", Price: 180000, AreaM2: 65, TotalMin: 15000, TotalMax: 25000,
		Rooms: []reno.RoomEstimate{
			{Room: reno.Room{Type: "kitchen", AreaM2: 9, Condition: reno.Poor, Features: []string{"azulejos antigos"}}, Min: 9000, Max: 14000, Issues: []string{"azulejos antigos"}},
			{Room: reno.Room{Type: "bedroom", AreaM2: 12, Condition: reno.Good}, Min: 0, Max: 200},
		}}
	chat := kb.ChatSummary(r)
	for _, want := range []string{"T2 Alfama", "Preço: 180.000€ | Área: 65m² | €/m²: 2.769€", "Obras: 15.000€–25.000€", "Prioridades: Cozinha (mau estado)"} {
		if !strings.Contains(chat, want) {
			t.Errorf("chat summary lacks %q:\n%s", want, chat)
		}
	}
	detail := kb.DetailSummary(r)
	if !strings.Contains(detail, "- Cozinha (9m²): mau estado, 9.000€–14.000€; problemas: azulejos antigos") || !strings.Contains(detail, "- Quarto") {
		t.Errorf("detail:\n%s", detail)
	}
}

func demo() *store.Hydrated {
	return &store.Hydrated{
		Profile: &store.Profile{Exists: true, Name: "João Silva", Location: "Lisboa", Summary: "João Silva | Lisboa | 3/5 secções completas",
			Sections:  map[string]map[string]any{"fiscal": {"regime": "IRS", "primeira_habitacao": true}, "budget": {"min": 150000.0, "max": 250000.0}},
			Summaries: map[string]string{"fiscal": "IRS | 1ª habitação", "budget": "Orçamento: 150.000€–250.000€"}},
		Portfolio: []store.PortfolioItem{
			{PropertyID: "abc-123", IndexSummary: "T2 Alfama, 180k€, reno 15-25k€", Status: "interessado", IsActive: true, ChatSummary: "Preço: 180.000€", DetailSummary: strings.Repeat("linha\n", 30)},
			{PropertyID: "def-456", IndexSummary: "T3 Graça, 230k€", Status: "interessado", ChatSummary: "Preço: 230.000€"},
		},
		LastSummary: "Discutimos o T2 de Alfama. Próximo: comparação formal.",
	}
}

func TestBuildAndBlock(t *testing.T) {
	t.Parallel()
	k, active := kb.Build(demo())
	if active != "abc-123" {
		t.Errorf("active %q", active)
	}
	block := kb.Block(k, []kb.Todo{{ID: "a1b2c3d4", Task: "Analisar imóvel de Graça", Status: "pending"}}, &kb.Focus{PropertyID: "abc-123", Topic: "renovação"})
	for _, want := range []string{
		"## Estado Atual", "### Base de Conhecimento",
		"  user/profile [carregado] — João Silva | Lisboa | 3/5 secções completas",
		"  user/fiscal [disponível] — IRS | 1ª habitação",
		"  user/budget [disponível] — Orçamento: 150.000€–250.000€",
		"  portfolio/index [carregado] — 2 imóvel(is) no portfólio",
		"  portfolio/abc-123/resumo [carregado] — T2 Alfama, 180k€, reno 15-25k€",
		"  portfolio/def-456/resumo [disponível] — T3 Graça, 230k€",
		"### Tarefas", "  ☐ [a1b2c3d4] Analisar imóvel de Graça",
		"### Foco Atual", "  Imóvel: abc-123 | Tópico: renovação | Nível: 0",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	if strings.Index(block, "user/profile") > strings.Index(block, "user/fiscal") || strings.Index(block, "user/budget") > strings.Index(block, "portfolio/index") {
		t.Errorf("order:\n%s", block)
	}
	empty, _ := kb.Build(&store.Hydrated{Profile: &store.Profile{}})
	b := kb.Block(empty, nil, nil)
	if !strings.Contains(b, "user/profile [carregado] — Perfil não configurado") || !strings.Contains(b, "portfolio/index [carregado] — Portfólio vazio") {
		t.Errorf("empty block:\n%s", b)
	}
}

func TestReadWriteRemoveDemote(t *testing.T) {
	t.Parallel()
	k, _ := kb.Build(demo())
	s := kb.Settings{MinLinesForPartialRead: 20}
	// 30 lines: a partial read loads only the slice asked for.
	got, err := kb.Read(k, "portfolio/abc-123/analise", 5, 3, s, 1)
	if err != nil || got != "linha\nlinha\nlinha" {
		t.Fatalf("partial read %q %v", got, err)
	}
	if e := k["portfolio/abc-123/analise"]; e.LinesLoaded != 3 || e.TotalLines != 30 {
		t.Errorf("entry %+v", e)
	}
	if !strings.Contains(kb.Block(k, nil, nil), "[parcial 3/30 linhas]") {
		t.Error("partial read not shown")
	}
	// Short texts load whole whatever is asked.
	if _, err := kb.Read(k, "user/fiscal", 2, 1, s, 1); err != nil {
		t.Fatal(err)
	}
	if e := k["user/fiscal"]; e.LinesLoaded != e.TotalLines {
		t.Errorf("short read partial %+v", e)
	}
	if _, err := kb.Read(k, "user/nothing", 0, 0, s, 1); err == nil || !strings.Contains(err.Error(), "user/profile") {
		t.Errorf("unknown path: %v", err)
	}
	kb.Write(k, "notas/visita", "Visita sábado", "Visita ao T2 no sábado às 10h", kb.SourceTool, 1)
	// Turn 2: nothing touched, so turn-1 loads are demoted, protected ones kept.
	demoted := kb.DemoteStale(k, 2, "abc-123")
	if strings.Join(demoted, ",") != "user/fiscal,portfolio/abc-123/analise,notas/visita" {
		t.Errorf("demoted %v", demoted)
	}
	for _, p := range []string{"user/profile", "portfolio/index", "portfolio/abc-123/resumo", "session/resumo_anterior"} {
		if !k[p].Loaded() {
			t.Errorf("protected %s demoted", p)
		}
	}
	if k["notas/visita"].Summary != "Visita sábado" {
		t.Error("demotion lost the summary")
	}
	if !kb.Remove(k, "notas/visita") || kb.Remove(k, "notas/visita") {
		t.Error("remove")
	}
}

func TestBudget(t *testing.T) {
	t.Parallel()
	k, _ := kb.Build(demo())
	s := kb.Settings{BudgetTokens: 120, MinLinesForPartialRead: 20}
	kb.Write(k, "notas/longa", "Nota longa", strings.Repeat("texto comprido de uma nota\n", 40), kb.SourceTool, 1)
	f := &kb.Focus{PropertyID: "abc-123"}
	changed := kb.Fit(k, nil, f, s)
	if len(changed) == 0 || k["notas/longa"].Loaded() {
		t.Errorf("over budget: changed %v", changed)
	}
	if got := kb.Tokens(kb.Block(k, nil, f)); got > 400 {
		t.Errorf("block still %d tokens", got)
	}
	// Within budget nothing changes.
	k2, _ := kb.Build(demo())
	if ch := kb.Fit(k2, nil, f, kb.Settings{}); ch != nil {
		t.Errorf("changed within budget: %v", ch)
	}
}

// The works' range is read back from the line ChatSummary wrote, a range or a single amount.
func TestWorksRangeReadsChatSummary(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
	}{{15000, 25000}, {8000, 8000}} {
		sum := kb.ChatSummary(&reno.Result{Typology: "T2", Location: "Alfama, Lisboa", Price: 180000, AreaM2: 65, TotalMin: c.lo, TotalMax: c.hi})
		lo, hi, ok := kb.WorksRange(sum)
		if !ok || lo != c.lo || hi != c.hi {
			t.Errorf("%q: got %v–%v (%v), want %v–%v", sum, lo, hi, ok, c.lo, c.hi)
		}
	}
	if _, _, ok := kb.WorksRange("T2 Alfama\nPreço: 180.000€"); ok {
		t.Error("a summary without the works' line gave a range")
	}
}
