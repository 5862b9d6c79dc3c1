package nlu_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/rehab/nlu"
)

func TestContent(t *testing.T) {
	t.Parallel()
	for text, c := range map[string]struct{ intent, want string }{
		"Marca a do canalizador como concluída": {"todo_complete", "canalizador"},
		"Já fiz a do banco":                     {"todo_complete", "banco"},
		"Reabre a tarefa do notário":            {"todo_reopen", "notario"},
	} {
		intent, want := c.intent, c.want
		if got := strings.Join(nlu.Content(text, intent), " "); got != want {
			t.Errorf("%q (%s): %q, want %q", text, intent, got, want)
		}
	}
}

func TestFacts(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	type kv = map[string]any
	for text, want := range map[string]kv{
		"Tenho 31 anos e vai ser a minha primeira casa, para viver com a minha mulher": {
			"fiscal.idade": 31.0, "fiscal.primeira_habitacao": true, "fiscal.habitacao_propria_permanente": true, "fiscal.agregado": "casal", "goals.objetivo": "habitacao"},
		"Nasci em 1995 e vou pedir crédito habitação":             {"fiscal.idade": 31.0, "budget.financiamento": "credito"},
		"O meu orçamento é de 250 mil euros":                      {"budget.max": 250000.0},
		"Temos dois filhos e procuro um T3 em Alvalade":           {"fiscal.dependentes": 2.0, "preferences.tipologia": "T3", "preferences.zonas": []any{"Alvalade"}},
		"É para arrendar, não é para viver":                       {"fiscal.habitacao_propria_permanente": false, "goals.objetivo": "investimento"},
		"Sou não residente, vivo no estrangeiro":                  {"fiscal.residente": false},
		"Sei fazer pintura e azulejos, quero acabamentos premium": {"renovation.diy_skills": []any{"pintura", "azulejos"}, "renovation.qualidade": "premium"},
		"Pago a pronto, tenho 60 mil de entrada":                  {"budget.financiamento": "pronto", "budget.entrada": 60000.0},
		"Quanto pago de IMT?":                                     {},
		"Há 10 anos comprei um carro":                             {},
		// The readers' words are the pack's (words.json): a written date, zero and a negation.
		"Nasci em 12 de maio de 1990":                     {"fiscal.idade": 36.0},
		"Somos um casal sem filhos, com 40 anos de idade": {"fiscal.dependentes": 0.0, "fiscal.idade": 40.0},
		// The reply language, only when asked for replies in it.
		"Responde-me em inglês a partir de agora":      {"preferences.idioma_respostas": "en"},
		"Podes responder em ingles por favor?":         {"preferences.idioma_respostas": "en"},
		"Please answer in English from now on":         {"preferences.idioma_respostas": "en"},
		"I'd prefer English, I don't speak Portuguese": {"preferences.idioma_respostas": "en"},
		"Prefiro espanhol, se puder ser":               {"preferences.idioma_respostas": "es"},
		"Répondez en français s'il vous plaît":         {"preferences.idioma_respostas": "fr"},
		"Volta ao português, obrigado":                 {"preferences.idioma_respostas": "pt"},
		"Como se diz cozinha em inglês?":               {},
	} {
		got := kv{}
		for _, f := range nlu.Facts(text, now) {
			if f.Confidence <= 0 || f.Confidence > 1 {
				t.Errorf("%q: %s.%s confidence %v", text, f.Section, f.Field, f.Confidence)
			}
			got[f.Section+"."+f.Field] = f.Value
		}
		if !equal(got, want) {
			t.Errorf("%q:\n got %v\nwant %v", text, got, want)
		}
	}
}

// Amounts reads the suffixes and currencies of words.json, and leaves out the numbers that are
// not money.
func TestAmounts(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"180.000€":             "[180000]",
		"180 000 €":            "[180000]",
		"até 180k€":            "[180000]",
		"180 mil euros":        "[180000]",
		"1,2 milhões":          "[1.2e+06]",
		"1,5 MILHOES de EUR":   "[1.5e+06]",
		"2M€ no máximo":        "[2e+06]",
		"um T2 de 1990, 3 wc":  "[]",
		"tenho 30 anos e 4000": "[]",
		"meio milhão de euros": "[500000]",
		"half a million":       "[500000]",
		"no meio, 200 mil":     "[200000]",
		"-50 mil":              "[]",
		"entre 200-250 mil":    "[250000]",
		"150.000€-250.000€":    "[150000 250000]",
	} {
		if got := fmt.Sprint(nlu.Amounts(text)); got != want {
			t.Errorf("Amounts(%q) = %s, want %s", text, got, want)
		}
	}
	for text, want := range map[string]string{"casa de -50 mil": "[-50000]", "casa de -50 mil, ou 80 mil": "[-50000 80000]", "200-250 mil": "[250000]"} {
		if got := fmt.Sprint(nlu.SignedAmounts(text)); got != want {
			t.Errorf("SignedAmounts(%q) = %s, want %s", text, got, want)
		}
	}
}

func equal(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || strings.TrimSpace(toS(v)) != strings.TrimSpace(toS(w)) {
			return false
		}
	}
	return true
}

func toS(v any) string {
	if l, ok := v.([]any); ok {
		var s []string
		for _, x := range l {
			s = append(s, toS(x))
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	return strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(fmtAny(v)), "\n", ""), " ", ""))
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return strings.TrimRight(strings.TrimRight(strconvF(x), "0"), ".")
	}
	return "?"
}

func strconvF(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
