package offline_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

var travelTools = []model.ToolSpec{
	{Name: "get_weather", Description: "Current weather for a city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"the city"}},"required":["city"]}`)},
	{Name: "convert_currency", Description: "Converts an amount between currencies.", Parameters: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"},"to":{"type":"string","enum":["EUR","USD","GBP"]}},"required":["amount","to"]}`)},
	{Name: "search_hotels", Description: "Searches hotels in a city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
}

func names(calls []message.ToolCall) string {
	var n []string
	for _, c := range calls {
		n = append(n, c.Name)
	}
	return strings.Join(n, ",")
}

// Trigger words in Spanish, French and German pick the tools, and the fixed phrases come back in
// the user's language.
func TestOtherLanguagesTriggerToolsAndAnswerInKind(t *testing.T) {
	for _, tc := range []struct {
		msg, tool, calling, found string
	}{
		{"¿Cuál es el clima en 'Sevilla' por favor?", "get_weather", "Llamando a", "Esto es lo que encontré"},
		{"Busca hoteles en 'Madrid'", "search_hotels", "Llamando a", "Esto es lo que encontré"},
		{"Quelle est la météo à 'Lyon' ?", "get_weather", "J'appelle", "Voici ce que j'ai trouvé"},
		{"Cherche des hôtels à 'Nice' pour moi", "search_hotels", "J'appelle", "Voici ce que j'ai trouvé"},
		{"Wie ist das Wetter in 'Berlin'?", "get_weather", "Ich rufe", "Das habe ich zu"},
		{"Rechne bitte 20 in EUR um", "convert_currency", "Ich rufe", "Das habe ich zu"},
		{"Qual é o tempo em 'Lisboa' por favor?", "get_weather", "A chamar", "Eis o que encontrei"},
		{"What is the weather in 'Boston'?", "get_weather", "Calling", "Here is what I found"},
	} {
		t.Run(tc.msg, func(t *testing.T) {
			resp := ask(t, setup(t), travelTools, message.User(tc.msg))
			if names(resp.Message.ToolCalls) != tc.tool || !strings.HasPrefix(resp.Message.Content, tc.calling) {
				t.Fatalf("got calls %q, text %q", names(resp.Message.ToolCalls), resp.Message.Content)
			}
			c := resp.Message.ToolCalls[0]
			after := ask(t, setup(t), travelTools, message.User(tc.msg), resp.Message, message.ToolResult(c.ID, c.Name, `{"ok":true}`))
			if !strings.HasPrefix(after.Message.Content, tc.found) {
				t.Errorf("answer %q does not start with %q", after.Message.Content, tc.found)
			}
		})
	}
}

func TestQuestionAndFallbackInTheUsersLanguage(t *testing.T) {
	resp := ask(t, setup(t), travelTools, message.User("Convierte el dinero a EUR por favor"))
	if len(resp.Message.ToolCalls) != 0 || !strings.Contains(resp.Message.Content, "Para usar `convert_currency` necesito `amount`. Inclúyalo") {
		t.Errorf("question = %q", resp.Message.Content)
	}
	resp = ask(t, setup(t), travelTools, message.User("Bonjour, je voudrais une chanson pour moi"))
	if !strings.Contains(resp.Message.Content, "Aucun modèle de langage") || !strings.Contains(resp.Message.Content, "Je peux :") {
		t.Errorf("fallback = %q", resp.Message.Content)
	}
}

// "and" joins independent requests: their tools are called in parallel, in one turn.
func TestIndependentRequestsAreParallelCalls(t *testing.T) {
	resp := ask(t, setup(t), travelTools, message.User("Busca hoteles en 'Madrid' y dime el clima en 'Madrid'"))
	if got := names(resp.Message.ToolCalls); got != "search_hotels,get_weather" {
		t.Fatalf("calls = %q", got)
	}
}

// "then" orders requests: the second step's tool is called once the first step's result is in,
// and may take its arguments from that result.
func TestStepsAreChainedAcrossTurns(t *testing.T) {
	m := setup(t)
	user := message.User(`Look up the weather in "Porto" and then convert the temperature to EUR`)
	first := ask(t, m, travelTools, user)
	if got := names(first.Message.ToolCalls); got != "get_weather" {
		t.Fatalf("first turn calls %q, want only get_weather", got)
	}
	if !strings.Contains(string(first.Message.ToolCalls[0].Arguments), `"Porto"`) {
		t.Errorf("weather args = %s", first.Message.ToolCalls[0].Arguments)
	}
	c1 := first.Message.ToolCalls[0]
	second := ask(t, m, travelTools, user, first.Message, message.ToolResult(c1.ID, c1.Name, `{"city":"Porto","celsius":18.5}`))
	if got := names(second.Message.ToolCalls); got != "convert_currency" || second.Message.Metadata["offline_rule"] != "tool_chain" {
		t.Fatalf("second turn calls %q (rule %v), want convert_currency", got, second.Message.Metadata["offline_rule"])
	}
	var args struct {
		Amount float64 `json:"amount"`
		To     string  `json:"to"`
	}
	if err := json.Unmarshal(second.Message.ToolCalls[0].Arguments, &args); err != nil || args.Amount != 18.5 || args.To != "EUR" {
		t.Errorf("convert args = %s (%v); want the amount from the weather result", second.Message.ToolCalls[0].Arguments, err)
	}
	if second.Message.ToolCalls[0].ID == c1.ID {
		t.Errorf("call IDs repeat: %s", c1.ID)
	}
	c2 := second.Message.ToolCalls[0]
	final := ask(t, m, travelTools, user, first.Message, message.ToolResult(c1.ID, c1.Name, `{"city":"Porto","celsius":18.5}`),
		second.Message, message.ToolResult(c2.ID, c2.Name, `{"amount":17.1,"currency":"EUR"}`))
	if len(final.Message.ToolCalls) != 0 || !strings.Contains(final.Message.Content, "**get_weather**") || !strings.Contains(final.Message.Content, "**convert_currency**") {
		t.Errorf("final answer should use both results:\n%s", final.Message.Content)
	}
	// Spanish and German order words chain the same way.
	for _, msg := range []string{`Busca hoteles en "Vigo" y luego dime el clima en "Vigo"`, `Suche Hotels in "Bonn", dann zeige das Wetter in "Bonn"`} {
		r := ask(t, m, travelTools, message.User(msg))
		if got := names(r.Message.ToolCalls); got != "search_hotels" {
			t.Errorf("%s: first turn calls %q", msg, got)
		}
	}
}
