package rehab_test

import (
	"strings"
	"testing"

	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/modeltest"
	"github.com/trellis-go/trellis/model/openai"
	"github.com/trellis-go/trellis/server"
)

// Whatever the model writes, the user reads pt-PT without tool names, argument names, IDs or
// scores: an English reply is asked again once in pt-PT; one still not in pt-PT is replaced.
func TestProviderRepliesArePortugueseAndClean(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		replies []modeltest.Reply
		want    string
		calls   int
	}{
		{"english then portuguese", []modeltest.Reply{{Text: "Sure! The cheapest property in your portfolio is the one in Alfama, and it is a good deal."},
			{Text: "O mais barato do teu portfólio é o T2 de Alfama."}}, "O mais barato do teu portfólio é o T2 de Alfama.", 2},
		{"french twice", []modeltest.Reply{{Text: "Bien sûr ! Le bien le moins cher est celui de Alfama, avec un prix de 180.000€."},
			{Text: "Je vous conseille de visiter le bien dans les prochains jours."}}, "Desculpa, não consegui responder", 2},
		{"leaks", []modeltest.Reply{{Text: "Usei o search_portfolio com property_id 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b (relevância 0.87): o mais barato é o T2 de Alfama."}},
			"o mais barato é o T2 de Alfama", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.NewOpenAI(t, c.replies...)
			m, err := openai.New("gpt-4o", &openai.Options{BaseURL: srv.URL + "/v1", APIKey: "test", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			hs := serve(t, server.Config{Dev: true, Models: model.NewRoles(m, "openai:gpt-4o")})
			_, _, evs := chat(t, hs.URL, "", `{"message":"Which one is the cheapest?"}`)
			answer := answerOf(evs)
			if !strings.Contains(answer, c.want) || len(srv.Requests()) != c.calls {
				t.Errorf("%d calls: %q", len(srv.Requests()), answer)
			}
			for _, leak := range []string{"Sure", "Bien", "search_portfolio", "property_id", "0190a1b2", "relevância", "0.87"} {
				if strings.Contains(answer, leak) {
					t.Errorf("the user reads %q: %s", leak, answer)
				}
			}
		})
	}
}
