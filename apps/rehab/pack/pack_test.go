package pack_test

// What rehab asks of the offline model, with its pack (moved here from model/offline's tests).

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/rehab/pack"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/offline/packtest"
)

var (
	spec   = packtest.Spec
	ask    = packtest.Ask
	argsOf = packtest.ArgsOf
)

// setup is the offline model with the pack, on packtest's fixed clock (a Wednesday).
func setup(*testing.T) *offline.Model { return packtest.Model(pack.Pack) }

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestPackIsValid: the embedded pack parses and validates.
func TestPackIsValid(t *testing.T) {
	if err := pack.Pack.Validate(); err != nil {
		t.Fatal(err)
	}
}

var rehabTools = []model.ToolSpec{
	spec("trigger_property_analysis", "Run the full renovation pipeline (scrape, classify, estimate) for an Idealista URL.",
		`{"type":"object","properties":{"url":{"type":"string","description":"Idealista listing URL"}},"required":["url"]}`),
	spec("manage_todos", "Add, complete, or list tasks for multi-step requests.",
		`{"type":"object","properties":{"action":{"type":"string","enum":["add","complete","list"]},"task":{"type":"string"}},"required":["action"]}`),
	spec("search_portfolio", "Resolve natural language references to portfolio property IDs via keyword matching.",
		`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
	spec("update_user_profile", "Update a profile section (fiscal, budget, renovation, preferences, goals).",
		`{"type":"object","properties":{"section":{"type":"string","enum":["fiscal","budget","renovation","preferences","goals"]},"data":{"type":"object"}},"required":["section"]}`),
}

var ptTools = []model.ToolSpec{
	spec("search_properties", "Search properties for sale by location, maximum price and bedrooms.",
		`{"type":"object","properties":{"location":{"type":"string"},"max_price":{"type":"number"},"bedrooms":{"type":"integer"}},"required":["location"]}`),
	spec("trigger_property_analysis", "Analyse a listing: run the renovation pipeline for an Idealista URL.",
		`{"type":"object","properties":{"url":{"type":"string","description":"Idealista listing URL"}},"required":["url"]}`),
	spec("add_to_portfolio", "Add a property to the user's portfolio.",
		`{"type":"object","properties":{"property_id":{"type":"string"}},"required":["property_id"]}`),
	spec("remove_from_portfolio", "Remove a property from the user's portfolio.",
		`{"type":"object","properties":{"property_id":{"type":"string"}},"required":["property_id"]}`),
	spec("update_budget", "Set the user's total budget for buying and renovation.",
		`{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}`),
	spec("compare_properties", "Compare two or more properties of the portfolio side by side.",
		`{"type":"object","properties":{"property_ids":{"type":"array","items":{"type":"string"}}},"required":["property_ids"]}`),
	spec("calculate_taxes", "Calculate purchase taxes (IMT and stamp duty) for a property price.",
		`{"type":"object","properties":{"price":{"type":"number"},"own_home":{"type":"boolean"}},"required":["price"]}`),
	spec("estimate_renovation", "Estimate renovation costs for a room or a whole property.",
		`{"type":"object","properties":{"scope":{"type":"string","enum":["kitchen","bathroom","whole_house","facade"]}},"required":["scope"]}`),
}

// The rehab specification's eleven tools.
var rehab11 = []model.ToolSpec{
	spec("read_context", "Load content from the knowledge base. Supports partial reads via start_line/num_lines.", `{"type":"object","properties":{"path":{"type":"string"},"start_line":{"type":"integer"},"num_lines":{"type":"integer"}},"required":["path"]}`),
	spec("write_context", "Store derived information, notes, or sub-agent results.", `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`),
	spec("remove_context", "Remove irrelevant entries from the knowledge base.", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
	spec("manage_todos", "Add, complete, or list tasks for multi-step requests.", `{"type":"object","properties":{"action":{"type":"string","enum":["add","complete","list"]},"task":{"type":"string"}},"required":["action"]}`),
	spec("update_user_profile", "Update a profile section (fiscal, budget, renovation, preferences, goals).", `{"type":"object","properties":{"section":{"type":"string","enum":["fiscal","budget","renovation","preferences","goals"]},"data":{"type":"object"}},"required":["section"]}`),
	spec("save_to_portfolio", "Add a property to the user's portfolio.", `{"type":"object","properties":{"property_id":{"type":"string"},"nickname":{"type":"string"}},"required":["property_id"]}`),
	spec("remove_from_portfolio", "Archive a portfolio item (soft delete). Requires confirmation.", `{"type":"object","properties":{"property_id":{"type":"string"}},"required":["property_id"]}`),
	spec("switch_active_property", "Change the focused property.", `{"type":"object","properties":{"property_id":{"type":"string"}},"required":["property_id"]}`),
	spec("search_portfolio", "Resolve natural language references to portfolio property IDs via keyword matching.", `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
	spec("trigger_property_analysis", "Run the full renovation pipeline (scrape, classify, estimate) for an Idealista URL.", `{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`),
	spec("recalculate_costs", "Recalculate costs using cached room features and updated preferences.", `{"type":"object","properties":{"property_id":{"type":"string"}}}`),
}

// TestSeedTools: requests from the specification reach the right tool with their arguments.
func TestSeedTools(t *testing.T) {
	packtest.CheckCalls(t, pack.Pack, []packtest.Case{
		{Name: "rehab portuguese url", Tools: rehabTools,
			Msgs: []message.Message{message.User("Analisa este imóvel: https://www.idealista.pt/imovel/33445566/")},
			Tool: "trigger_property_analysis", Args: `{"url":"https://www.idealista.pt/imovel/33445566/"}`},
		{Name: "rehab todos", Tools: rehabTools, Msgs: []message.Message{message.User("list my todos")},
			Tool: "manage_todos", Args: `{"action":"list"}`},
		// The digits of a listing's address are its ID, not an amount.
		{Name: "address beside a price", Tools: taxTools,
			Msgs: []message.Message{message.User("impostos de https://www.idealista.pt/imovel/50112233/ por 180.000€")},
			Tool: "calculate_taxes", Args: `{"price":180000}`},
		{Name: "address without a price", Tools: taxTools,
			Msgs: []message.Message{message.User("impostos do imóvel www.idealista.pt/imovel/50112233")},
			Tool: "calculate_taxes", Args: `{}`},
	})
}

var taxTools = []model.ToolSpec{spec("calculate_taxes", "Calculate purchase taxes (IMT and stamp duty) for a property price.",
	`{"type":"object","properties":{"price":{"type":"number"}}}`)}

// TestPortugueseIntents: requests in European Portuguese reach the right tool with their
// arguments, and the offline model answers in Portuguese.
func TestPortugueseIntents(t *testing.T) {
	cases := []struct {
		text, tool string
		args       map[string]any
	}{
		{"Quero comprar um T2 em Lisboa até 250.000€", "search_properties", map[string]any{"location": "Lisboa", "max_price": 250000.0, "bedrooms": 2.0}},
		{"Analisa este anúncio: https://www.idealista.pt/imovel/33445566/", "trigger_property_analysis", map[string]any{"url": "https://www.idealista.pt/imovel/33445566/"}},
		{"Adiciona o imóvel 8812 à minha carteira", "add_to_portfolio", map[string]any{"property_id": "8812"}},
		{"Remove o imóvel 8812 da carteira", "remove_from_portfolio", map[string]any{"property_id": "8812"}},
		{"O meu orçamento é 180 000 €", "update_budget", map[string]any{"amount": 180000.0}},
		{"Quanto pago de impostos por uma casa de 1,2 milhões?", "calculate_taxes", map[string]any{"price": 1.2e6}},
		{"Quero remodelar a cozinha", "estimate_renovation", map[string]any{"scope": "kitchen"}},
	}
	for _, c := range cases {
		resp := ask(t, setup(t), ptTools, message.User(c.text))
		name, args := argsOf(t, resp)
		if name != c.tool {
			t.Errorf("%q called %s, want %s", c.text, name, c.tool)
			continue
		}
		for k, want := range c.args {
			if args[k] != want {
				t.Errorf("%q: %s = %v, want %v (all: %v)", c.text, k, args[k], want, args)
			}
		}
		if !strings.HasPrefix(resp.Message.Content, "A chamar") {
			t.Errorf("%q: announcement %q is not in Portuguese", c.text, resp.Message.Content)
		}
	}
	// The answer after the tool's result is in Portuguese too.
	call := message.ToolCall{ID: "c1", Name: "update_budget", Arguments: json.RawMessage(`{"amount":180000}`)}
	resp := ask(t, setup(t), ptTools, message.User("O meu orçamento é 180 000 €"), message.Assistant("", call), message.ToolResult("c1", "update_budget", `{"budget":180000,"currency":"EUR"}`))
	if !strings.Contains(resp.Message.Content, "Eis o que encontrei") {
		t.Errorf("answer after results = %q, want Portuguese", resp.Message.Content)
	}
	// Compare names the two properties.
	resp = ask(t, setup(t), ptTools, message.User(`Compara os imóveis "Casa da Ribeira" e "Loft Alfama"`))
	name, args := argsOf(t, resp)
	if name != "compare_properties" || mustJSON(args["property_ids"]) != `["Casa da Ribeira","Loft Alfama"]` {
		t.Errorf("compare: %s %v", name, args)
	}
}

func TestRehabToolsInPortuguese(t *testing.T) {
	for q, want := range map[string]string{
		"Analisa este imóvel https://www.idealista.pt/imovel/33445566/": `trigger_property_analysis{"url":"https://www.idealista.pt/imovel/33445566/"}`,
		"O meu orçamento é 180 000 €":                                   `update_user_profile{"section":"budget"}`,
		"Guarda o imóvel 8812 na minha carteira":                        `save_to_portfolio{"property_id":"8812"}`,
		"Adiciona o imóvel 8812 à carteira":                             `save_to_portfolio{"property_id":"8812"}`,
		"Quero remodelar a cozinha, recalcula os custos":                `recalculate_costs{}`,
		"Mostra as minhas tarefas":                                      `manage_todos{"action":"list"}`,
	} {
		resp := ask(t, setup(t), rehab11, message.User(q))
		got := ""
		for _, c := range resp.Message.ToolCalls {
			got += c.Name + string(c.Arguments)
		}
		if got != want {
			t.Errorf("%q called %s, want %s", q, got, want)
		}
	}
}

// TestFacts: facts.txt parses, its phrases are the pack's cues of update_user_profile (weight 3)
// once each,
// and a bad line is refused with its line number.
func TestFacts(t *testing.T) {
	if len(pack.Facts) < 100 {
		t.Fatalf("%d facts, want the whole of facts.txt", len(pack.Facts))
	}
	cues := map[string]int{}
	for _, in := range pack.Pack.Intents {
		if in.Tool == "update_user_profile" && in.Weight == 3 {
			for _, c := range in.Cues {
				cues[c]++
			}
		}
	}
	for _, f := range pack.Facts {
		if cues[f.Cue] != 1 {
			t.Errorf("fact %s.%s %q: %d cues of update_user_profile, want 1", f.Section, f.Field, f.Cue, cues[f.Cue])
		}
	}
	for _, bad := range []string{"fiscal idade @age anos", "fiscal idade @age 1.5 anos", "fiscal idade @age x anos"} {
		if _, err := pack.ParseFacts([]byte("# ok\n\n" + bad)); err == nil || !strings.Contains(err.Error(), "line 3") {
			t.Errorf("%q: err = %v, want one naming line 3", bad, err)
		}
	}
}

// The offline model fills update_user_profile's section from the pack's values, typos and
// pt-BR words included, as rehab's own plan reads them (pack.Reader).
func TestPackValuesFillTheSection(t *testing.T) {
	for text, want := range map[string]string{
		"atualiza a minha meta de investimento": "goals",
		"muda o meu orcamneto":                  "budget",
		"atualiza meus dados do irs":            "fiscal",
		"muda a qualidade da reforma":           "renovation",
		"atualiza os bairros onde procuro":      "preferences",
	} {
		name, args := argsOf(t, ask(t, setup(t), rehabTools[3:4], message.User(text)))
		if name != "update_user_profile" || args["section"] != want {
			t.Errorf("%q: %s %v, want section %s", text, name, args, want)
		}
		if got, _ := pack.Reader.Value("update_user_profile", "section", text); got != want {
			t.Errorf("%q: pack.Reader gives %q, want %s", text, got, want)
		}
	}
}
