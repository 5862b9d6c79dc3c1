package rehab_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/rehab"
	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/httpclient"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
)

// readPhrasings are the phrasings of the nlu tests for the intents that only read.
func readPhrasings(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open("nlu/testdata/phrasings.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		intent, text, ok := strings.Cut(sc.Text(), " | ")
		if !ok || strings.HasPrefix(intent, "#") {
			continue
		}
		switch intent {
		case "read_context", "search_portfolio", "compare_properties", "todo_list":
			out[intent] = append(out[intent], strings.TrimSpace(strings.TrimSuffix(text, "(pt-BR)")))
		}
	}
	return out
}

func actionCount(t *testing.T, f *fixture) int {
	t.Helper()
	acts, err := f.env.Data.Actions(context.Background(), f.who, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(acts)
}

// turnCalls are the tools the turn's messages call and the turn's reply.
func turnCalls(st rehab.State, user string) ([]string, string) {
	var calls []string
	reply := ""
	i := len(st.Messages) - 1
	for i >= 0 && !(st.Messages[i].Role == message.RoleUser && st.Messages[i].Text() == user) {
		i--
	}
	for _, m := range st.Messages[i+1:] {
		for _, c := range m.ToolCalls {
			calls = append(calls, c.Name)
		}
		if m.Role == message.RoleAssistant && len(m.ToolCalls) == 0 {
			reply = offline.Unlabelled(m)
		}
	}
	return calls, reply
}

var leaks = []string{"read_context", "search_portfolio", "compare_properties", "manage_todos", "update_user_profile",
	"property_id", "todo_id", "portfolio/", "user/", "relevância", "rehab:", "listing:"}

func checkReply(t *testing.T, msg, reply string) {
	t.Helper()
	if strings.TrimSpace(reply) == "" {
		t.Errorf("%q: no reply", msg)
	}
	for _, l := range leaks {
		if strings.Contains(reply, l) {
			t.Errorf("%q: the reply shows %q:\n%s", msg, l, reply)
		}
	}
	if !rehab.Portuguese(reply) {
		t.Errorf("%q: the reply is not Portuguese:\n%s", msg, reply)
	}
}

// Asking to see, compare, explain or list reads and never writes: no action is logged, no
// analysis is run, whatever the phrasing; a request to change writes once.
func TestReadsNeverWrite(t *testing.T) {
	t.Parallel()
	f := setup(t, offline.New(nil), rehab.Config{})
	f.turn(t, "th", "Analisa este imóvel: https://www.idealista.pt/imovel/12345/")
	f.turn(t, "th", "Analisa este imóvel: https://www.idealista.pt/imovel/33445566/")
	f.turn(t, "th", "Adiciona uma tarefa: ligar ao canalizador")
	fetches := f.fetches.Load()
	before := actionCount(t, f)
	n := 0
	for intent, msgs := range readPhrasings(t) {
		want := intent
		if intent == "todo_list" {
			want = "manage_todos"
		}
		for i, msg := range msgs {
			if i%2 == 1 {
				continue // half of them keep the test short; the nlu test reads them all
			}
			n++
			st := f.turn(t, "th", msg)
			calls, reply := turnCalls(st, msg)
			if len(calls) != 1 || calls[0] != want && !(intent == "read_context" && calls[0] == "search_portfolio") {
				t.Errorf("%q: called %v, want %s", msg, calls, want)
			}
			checkReply(t, msg, reply)
		}
	}
	if after := actionCount(t, f); after != before {
		acts, _ := f.env.Data.Actions(context.Background(), f.who, after-before)
		t.Errorf("%d reads wrote %d actions: %+v", n, after-before, acts)
	}
	if f.fetches.Load() != fetches {
		t.Errorf("a read fetched the listing site")
	}
	// A request to change writes exactly once.
	before = actionCount(t, f)
	st := f.turn(t, "th", "Muda para o de Alfama")
	if calls, _ := turnCalls(st, "Muda para o de Alfama"); len(calls) != 1 || calls[0] != "switch_active_property" {
		t.Fatalf("switch: %v", calls)
	}
	if d := actionCount(t, f) - before; d != 1 {
		t.Errorf("switching wrote %d actions, want 1", d)
	}
	t.Logf("%d reads, no writes", n)
}

// Asking to see an analysed property's analysis without a link shows it, never analyses it
// again.
func TestSeeingAnAnalysisDoesNotReanalyse(t *testing.T) {
	t.Parallel()
	f := setup(t, offline.New(nil), rehab.Config{})
	f.turn(t, "th", "Analisa este imóvel: https://www.idealista.pt/imovel/12345/")
	fetches, before := f.fetches.Load(), actionCount(t, f)
	for _, msg := range []string{"Analisa o de Alfama", "Mostra-me a análise", "Detalha a cozinha", "Quanto custa remodelar?"} {
		st := f.turn(t, "th", msg)
		calls, reply := turnCalls(st, msg)
		if len(calls) != 1 || calls[0] != "read_context" {
			t.Errorf("%q: called %v", msg, calls)
		}
		if !strings.Contains(reply, "Cozinha") {
			t.Errorf("%q: the analysis is not shown:\n%s", msg, reply)
		}
		checkReply(t, msg, reply)
	}
	if f.fetches.Load() != fetches || actionCount(t, f) != before {
		t.Errorf("seeing the analysis fetched %d pages and wrote %d actions", f.fetches.Load()-fetches, actionCount(t, f)-before)
	}
}

// Tasks: the stored text is the task; complete, reopen and remove by words, number or ID.
func TestTodosByTheirWords(t *testing.T) {
	t.Parallel()
	f := setup(t, offline.New(nil), rehab.Config{})
	st := f.turn(t, "th", "Adiciona uma tarefa: ligar ao canalizador")
	st = f.turn(t, "th", "Tenho de pedir a caderneta predial")
	st = f.turn(t, "th", "Lembra-me de marcar a visita ao T2")
	tasks := map[string]string{}
	for _, td := range st.Todos {
		tasks[td.Task] = td.Status
	}
	for _, want := range []string{"Ligar ao canalizador", "Pedir a caderneta predial", "Marcar a visita ao T2"} {
		if tasks[want] != "pending" {
			t.Fatalf("task %q not stored as itself: %+v", want, st.Todos)
		}
	}
	status := func(st rehab.State, task string) string {
		for _, td := range st.Todos {
			if td.Task == task {
				return td.Status
			}
		}
		return "absent"
	}
	steps := []struct{ msg, task, want string }{
		{"Marca a do canalizador como concluída", "Ligar ao canalizador", "done"},
		{"Reabre a do canalizador", "Ligar ao canalizador", "pending"},
		{"Já fiz a do canalizador", "Ligar ao canalizador", "done"},
		{"Concluir a tarefa 2", "Pedir a caderneta predial", "done"},
		{"Apaga a tarefa da visita", "Marcar a visita ao T2", "removed"},
	}
	for _, s := range steps {
		st = f.turn(t, "th", s.msg)
		if got := status(st, s.task); got != s.want {
			t.Errorf("%q: %q is %s, want %s (%+v)", s.msg, s.task, got, s.want, st.Todos)
		}
		_, reply := turnCalls(st, s.msg)
		checkReply(t, s.msg, reply)
	}
	// Completing by ID.
	st = f.turn(t, "th", "Nova tarefa: pedir a licença de utilização")
	id := ""
	for _, td := range st.Todos {
		if td.Task == "Pedir a licença de utilização" {
			id = td.ID
		}
	}
	st = f.turn(t, "th", "Marcar como concluída "+id)
	if status(st, "Pedir a licença de utilização") != "done" {
		t.Errorf("by ID %s: %+v", id, st.Todos)
	}
	// "feito" with several tasks open asks which one, in pt-PT, without IDs.
	f.turn(t, "th", "Nova tarefa: ligar ao banco")
	f.turn(t, "th", "Nova tarefa: ligar ao notário")
	st = f.turn(t, "th", "feito")
	_, reply := turnCalls(st, "feito")
	if !strings.Contains(reply, "que tarefa") || strings.Contains(reply, id) {
		t.Errorf("an ambiguous completion: %s", reply)
	}
	listed := f.turn(t, "th", "Quais são as minhas tarefas?")
	if _, reply := turnCalls(listed, "Quais são as minhas tarefas?"); !strings.Contains(reply, "☑ Ligar ao canalizador") || strings.Contains(reply, "visita") {
		t.Errorf("the list: %s", reply)
	}
}

// Facts said in passing are saved silently, with their confidence, in the action log; the
// young buyer's exemption applies when the profile qualifies, and the answer says which rule.
func TestImplicitFactsAndTheYoungBuyersExemption(t *testing.T) {
	t.Parallel()
	f := setup(t, offline.New(nil), rehab.Config{})
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f.env.Data.Now = func() time.Time { return now }
	f.turn(t, "th", "Analisa este imóvel: https://www.idealista.pt/imovel/33445566/")
	msg := "Tenho 31 anos, é a minha primeira casa e vou viver lá com a minha mulher. Quanto pago de IMT?"
	st := f.turn(t, "th", msg)
	calls, reply := turnCalls(st, msg)
	if len(calls) != 2 || calls[0] != "update_user_profile" || calls[1] != "calculate_taxes" {
		t.Fatalf("calls %v", calls)
	}
	if strings.Contains(reply, "Tomei nota") {
		t.Errorf("the profile update is not silent:\n%s", reply)
	}
	// 230.000€: below the exemption's limit, so no IMT and no stamp duty.
	if !strings.Contains(reply, "IMT: 0,00€") || !strings.Contains(reply, "Imposto do Selo") || !strings.Contains(reply, "isenção total") {
		t.Errorf("the young buyer's exemption:\n%s", reply)
	}
	checkReply(t, msg, reply)
	prof, err := f.env.Data.Profile(context.Background(), f.who)
	if err != nil {
		t.Fatal(err)
	}
	fis := prof.Sections["fiscal"]
	if fis["idade"] != 31.0 || fis["primeira_habitacao"] != true || fis["habitacao_propria_permanente"] != true || fis["agregado"] != "casal" {
		t.Errorf("fiscal section: %+v", fis)
	}
	acts, _ := f.env.Data.Actions(context.Background(), f.who, 50)
	logged := map[string]store.Action{}
	for _, a := range acts {
		logged[a.Field] = a
	}
	if a, ok := logged["fiscal.idade"]; !ok || a.Confidence <= 0 || a.Confidence >= 1 || a.Trigger != msg {
		t.Errorf("the age's action: %+v", a)
	}
}

// A listing site configured by its base URL: a real page is read and saved; a withdrawn or
// unreadable listing gets a pt-PT answer and nothing is saved.
func TestListingSite(t *testing.T) {
	t.Parallel()
	pages := map[string]string{"/imovel/53456789/": "no-photos.html", "/imovel/54567890/": "removed.html", "/imovel/55678901/": "search-page.html"}
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		name, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile("listing/testdata/pages/" + name)
		if err != nil {
			t.Error(err)
		}
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	f := setup(t, offline.New(nil), rehab.Config{})
	lc, err := listing.New(srv.URL, &httpclient.Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	env := *f.env
	env.Pipeline = &reno.Pipeline{Listings: lc, Vision: f.vision}
	f.o.Register("site", &env)
	turn := func(text string) string {
		st, err := f.o.Graph.Invoke(context.Background(), rehab.State{Messages: []message.Message{message.User(text)}},
			graph.WithThread("site"), graph.WithConfig(map[string]any{rehab.EnvKey: "site", "user_id": f.who.User, "tenant": f.who.Tenant}))
		if err != nil {
			t.Fatal(err)
		}
		_, reply := turnCalls(st, text)
		checkReply(t, text, reply)
		return reply
	}
	for text, want := range map[string]string{
		"Analisa este imóvel: https://www.idealista.pt/imovel/54567890/": "já não está no Idealista",
		"Analisa https://www.idealista.pt/imovel/55678901/":              "não consegui ler",
		"Analisa https://www.idealista.pt/imovel/58888888/":              "já não está no Idealista",
		"Analisa https://www.example.com/imovel/12345/":                  "Envia-me o link",
	} {
		if reply := turn(text); !strings.Contains(reply, want) || !strings.Contains(reply, "Não guardei nada") && want != "Envia-me o link" {
			t.Errorf("%q: %s", text, reply)
		}
	}
	items, _ := f.env.Data.Portfolio(context.Background(), f.who, true)
	if len(items) != 0 || actionCount(t, f) != 0 {
		t.Fatalf("an unreadable listing saved %d items and %d actions", len(items), actionCount(t, f))
	}
	if hits.Load() != 3 {
		t.Errorf("the site was asked %d times, want 3", hits.Load())
	}
	reply := turn("Guarda no portfólio https://www.idealista.pt/imovel/53456789/")
	items, _ = f.env.Data.Portfolio(context.Background(), f.who, true)
	if len(items) != 1 || items[0].Property.Title != "Apartamento T1 na Avenida Almirante Reis" || items[0].Property.Price != 199500 || !strings.Contains(reply, "T1 Arroios") {
		t.Fatalf("saved %+v: %s", items, reply)
	}
}

// A user writing in English (or French) is answered in pt-PT on the offline model.
func TestOtherLanguagesGetPortuguese(t *testing.T) {
	t.Parallel()
	f := setup(t, offline.New(nil), rehab.Config{})
	for _, msg := range []string{"Hello, what can you do for me?", "Bonjour, pouvez-vous m'aider avec un appartement ?", "Compare my two flats please"} {
		st := f.turn(t, "th", msg)
		_, reply := turnCalls(st, msg)
		checkReply(t, msg, reply)
	}
}

// A buyer's conversation through the graph: a follow-up goes on from the turn before, a price
// below zero is refused, and a message not understood mid-conversation is said to be so
// instead of greeting again.
func TestBuyerConversation(t *testing.T) {
	t.Parallel()
	f := setup(t, offline.New(nil), rehab.Config{})
	say := func(msg, tool string, in ...string) string {
		t.Helper()
		st := f.turn(t, "th", msg)
		calls, reply := turnCalls(st, msg)
		if tool != "" && (len(calls) != 1 || calls[0] != tool) || tool == "" && len(calls) != 0 {
			t.Errorf("%q: called %v, want %q", msg, calls, tool)
		}
		for _, s := range in {
			if !strings.Contains(reply, s) {
				t.Errorf("%q: reply %q, want %q in it", msg, reply, s)
			}
		}
		return reply
	}
	say("quanto e que pago de imt numa casa de 250 mil?", "calculate_taxes", "250.000€")
	say("e se fosse 1,2 milhões?", "calculate_taxes", "1.200.000€", "90.000,00€", "9.600,00€")
	say("e o selo, quanto é ao certo?", "calculate_taxes", "1.200.000€", "9.600,00€")
	if r := say("quanto pago de imt por uma casa de -50 mil?", "calculate_taxes", "preciso de um preço"); strings.Contains(r, "50.000") {
		t.Errorf("a price below zero was computed: %q", r)
	}
	if r := say("hmm ok, deixa-me pensar nisso", ""); strings.Contains(r, "Olá") || !strings.Contains(r, "Não percebi") {
		t.Errorf("not understood mid-conversation: %q", r)
	}
}
