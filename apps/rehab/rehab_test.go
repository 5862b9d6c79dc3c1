package rehab_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/example"
	"github.com/trellis-go/trellis/apps/rehab"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/modeltest"
	"github.com/trellis-go/trellis/model/openai"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/servertest"
)

func serve(t testing.TB, cfg server.Config) *httptest.Server {
	t.Helper()
	if cfg.Apps == nil {
		cfg.Apps = []server.App{rehab.App()}
	}
	return servertest.Start(t, cfg).HTTP
}

type sseEvent struct {
	Name string
	ID   string
	rehab.Event
}

// send makes a request with the API key (none when empty) and a JSON body (none when empty).
func send(t testing.TB, method, url, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func chat(t testing.TB, base, key, body string) (int, string, []sseEvent) {
	t.Helper()
	resp := send(t, "POST", base+"/apps/rehab/api/v1/chat", key, body)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	var out []sseEvent
	sc := bufio.NewScanner(resp.Body)
	var name, id string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var e rehab.Event
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
				t.Fatalf("bad event %q: %v", line, err)
			}
			if e.Type != name {
				t.Errorf("event %q carries type %q", name, e.Type)
			}
			out = append(out, sseEvent{Name: name, ID: id, Event: e})
		}
	}
	return resp.StatusCode, "", out
}

func answerOf(evs []sseEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == "message" && e.Content != nil && e.Consent == nil {
			b.WriteString(*e.Content)
		}
	}
	return b.String()
}

func convOf(evs []sseEvent) string {
	for _, e := range evs {
		if e.ConversationID != "" {
			return e.ConversationID
		}
	}
	return ""
}

func getJSON(t testing.TB, url, key string, out any) int {
	t.Helper()
	resp := send(t, "GET", url, key, "")
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == 200 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// The registry's check: the graph answers "hello" through /runs/wait.
func TestRunsWaitHello(t *testing.T) {
	t.Parallel()
	hs := serve(t, server.Config{Dev: true})
	resp, err := http.Post(hs.URL+"/runs/wait", "application/json",
		strings.NewReader(`{"assistant_id":"rehab","input":{"messages":[{"role":"user","content":"hello"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(out), "__error__") || !strings.Contains(string(out), "Posso analisar") {
		t.Fatalf("%d %s", resp.StatusCode, out)
	}
}

// An analysis end to end over SSE, offline, in Portuguese: thinking, the tool call, the action,
// the answer token by token, the end; every event once; then the read endpoints show it.
func TestAnalysisOverSSE(t *testing.T) {
	t.Parallel()
	hs := serve(t, server.Config{Dev: true})
	code, body, evs := chat(t, hs.URL, "", `{"message":"Analisa este imóvel: https://www.idealista.pt/imovel/50112233/"}`)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var kinds []string
	tokens := 0
	ids := map[string]bool{}
	for _, e := range evs {
		if ids[e.ID] {
			t.Errorf("event id %s sent twice", e.ID)
		}
		ids[e.ID] = true
		if e.Type == "message" && e.Done != nil && !*e.Done {
			tokens++
			continue
		}
		kinds = append(kinds, e.Type)
	}
	if strings.Join(kinds, ",") != "thinking,tool_call,action,message" {
		t.Errorf("events %v", kinds)
	}
	if tokens < 10 {
		t.Errorf("the answer came in %d pieces, not token by token", tokens)
	}
	if last := evs[len(evs)-1]; last.Type != "message" || !*last.Done {
		t.Errorf("last event %+v", last)
	}
	if evs[1].Tool != "trigger_property_analysis" || evs[1].Args["url"] != "https://www.idealista.pt/imovel/50112233/" {
		t.Errorf("tool_call %+v", evs[1])
	}
	ans := answerOf(evs)
	for _, want := range []string{"Preço: 245.000€ | Área: 78m² | €/m²: 3.141€", "Obras: ", "impostos"} {
		if !strings.Contains(ans, want) {
			t.Errorf("answer lacks %q:\n%s", want, ans)
		}
	}
	conv := convOf(evs)
	var items []store.PortfolioItem
	getJSON(t, hs.URL+"/apps/rehab/api/v1/portfolio", "", &items)
	found := false
	for _, it := range items {
		if it.Property.IdealistaID == "50112233" {
			found = it.IsActive && strings.HasPrefix(it.IndexSummary, "T2 Cedofeita, 245k€, reno ")
		}
	}
	if !found {
		t.Errorf("portfolio %+v", items)
	}
	var acts []store.Action
	getJSON(t, hs.URL+"/apps/rehab/api/v1/actions?limit=5", "", &acts)
	if len(acts) == 0 || acts[0].Trigger != "Analisa este imóvel: https://www.idealista.pt/imovel/50112233/" {
		t.Errorf("actions %+v", acts)
	}
	var msgs []store.Message
	getJSON(t, hs.URL+"/apps/rehab/api/v1/conversations/"+conv+"/messages", "", &msgs)
	if len(msgs) < 3 || msgs[0].Role != "user" || msgs[len(msgs)-1].Role != "assistant" {
		t.Errorf("messages %+v", msgs)
	}
	var st rehab.StateView
	getJSON(t, hs.URL+"/apps/rehab/api/v1/conversations/"+conv+"/state", "", &st)
	if st.Focus == nil || st.Focus.Topic != "renovação" || !strings.Contains(st.Context, "## Estado Atual") {
		t.Errorf("state %+v", st)
	}
	var an map[string]any
	if code := getJSON(t, hs.URL+"/apps/rehab/api/v1/properties/50112233/analysis", "", &an); code != 200 || an["rooms"] == nil {
		t.Errorf("analysis %d %v", code, an)
	}
}

// The demo user's first context block reads as in the specification.
func TestDemoContextBlock(t *testing.T) {
	t.Parallel()
	hs := serve(t, server.Config{Dev: true})
	_, _, evs := chat(t, hs.URL, "", `{"message":"olá"}`)
	if !strings.Contains(answerOf(evs), "Olá, João!") {
		t.Errorf("greeting %q", answerOf(evs))
	}
	var st rehab.StateView
	getJSON(t, hs.URL+"/apps/rehab/api/v1/conversations/"+convOf(evs)+"/state", "", &st)
	for _, want := range []string{
		"  user/profile [carregado] — João Silva | Lisboa | 3/5 secções completas",
		"  user/fiscal [disponível] — IRS | 1ª habitação",
		"  user/budget [disponível] — Orçamento: 150.000€–250.000€",
		"  portfolio/index [carregado] — 2 imóvel(is) no portfólio",
		"  portfolio/abc-123/resumo [carregado] — T2 Alfama, 180k€, reno 15-25k€",
		"  Imóvel: abc-123 | Tópico: renovação | Nível: 0",
		"session/resumo_anterior [carregado] — Discutimos o T2 de Alfama.",
	} {
		if !strings.Contains(st.Context, want) {
			t.Errorf("context block lacks %q:\n%s", want, st.Context)
		}
	}
}

func TestConsentOverSSE(t *testing.T) {
	t.Parallel()
	hs := serve(t, server.Config{Dev: true})
	_, _, evs := chat(t, hs.URL, "", `{"message":"Remove o de Alfama da carteira"}`)
	conv := convOf(evs)
	last := evs[len(evs)-1]
	if last.Consent == nil || last.Consent.PropertyID != rehab.DemoAlfama || !strings.Contains(*last.Content, "Confirmas") {
		t.Fatalf("no consent asked: %+v", last)
	}
	var items []store.PortfolioItem
	getJSON(t, hs.URL+"/apps/rehab/api/v1/portfolio", "", &items)
	if len(items) != 2 {
		t.Fatal("removed before consent")
	}
	var st rehab.StateView
	getJSON(t, hs.URL+"/apps/rehab/api/v1/conversations/"+conv+"/state", "", &st)
	if st.Pending == nil {
		t.Error("state shows no pending consent")
	}
	_, _, evs = chat(t, hs.URL, "", `{"message":"sim","conversation_id":"`+conv+`"}`)
	if !strings.Contains(answerOf(evs), "Removido do portfólio") {
		t.Errorf("answer %q", answerOf(evs))
	}
	getJSON(t, hs.URL+"/apps/rehab/api/v1/portfolio", "", &items)
	if len(items) != 1 || items[0].PropertyID != rehab.DemoGraca {
		t.Errorf("after consent %+v", items)
	}
	getJSON(t, hs.URL+"/apps/rehab/api/v1/portfolio?archived=true", "", &items)
	if len(items) != 2 {
		t.Errorf("archived item not kept: %d", len(items))
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	hs := serve(t, server.Config{Dev: true})
	for body, field := range map[string]string{
		`{}`:                                    "message",
		`{"message":"   "}`:                     "message",
		`{"message":42}`:                        "message",
		`{"message":"olá","conversation_id":7}`: "conversation_id",
		`{"message":"olá","conv":"x"}`:          "conv",
		`{"message":"olá","conversation_id":"nope"}`: "conversation_id",
		`not json`: "",
	} {
		code, out, _ := chat(t, hs.URL, "", body)
		// The API's error shape: the detail names the field that was wrong, the hint what to do.
		var e struct{ Detail, Hint string }
		_ = json.Unmarshal([]byte(out), &e)
		want := 400
		if strings.Contains(body, "nope") {
			want = 404
		}
		named := field == "" || strings.Contains(e.Detail, `field "`+field+`"`)
		if code != want || !named || e.Detail == "" || e.Hint == "" {
			t.Errorf("%s: %d %s", body, code, out)
		}
	}
	if code := getJSON(t, hs.URL+"/apps/rehab/api/v1/actions?limit=x", "", nil); code != 400 {
		t.Errorf("limit=x: %d", code)
	}
}

// Without a valid token: 401. Users of one tenant do not see each other's data, on SQLite and on
// Postgres.
func TestAuthAndIsolation(t *testing.T) {
	t.Parallel()
	keys := map[string]server.Principal{"k-ana-0123456789abcdef": {User: "ana", Tenant: "t1"}, "k-rui-0123456789abcdef": {User: "rui", Tenant: "t1"}, "k-eva-0123456789abcdef": {User: "ana", Tenant: "t2"}}
	for name, cfg := range map[string]func(t *testing.T) server.Config{
		"sqlite":   func(t *testing.T) server.Config { return server.Config{} },
		"postgres": func(t *testing.T) server.Config { return server.Config{DatabaseURL: appdbtest.PostgresURL(t)} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := cfg(t)
			c.Auth = server.AuthConfig{APIKeys: keys}
			hs := serve(t, c)
			if code, _, _ := chat(t, hs.URL, "", `{"message":"olá"}`); code != 401 {
				t.Errorf("no token: %d", code)
			}
			if code, _, _ := chat(t, hs.URL, "wrong", `{"message":"olá"}`); code != 401 {
				t.Errorf("bad token: %d", code)
			}
			if code := getJSON(t, hs.URL+"/apps/rehab/api/v1/portfolio", "", nil); code != 401 {
				t.Errorf("portfolio without a token: %d", code)
			}
			code, _, evs := chat(t, hs.URL, "k-ana-0123456789abcdef", `{"message":"Analisa https://www.idealista.pt/imovel/40556677/"}`)
			if code != 200 || !strings.Contains(answerOf(evs), "Mouraria") {
				t.Fatalf("ana: %d %q", code, answerOf(evs))
			}
			conv := convOf(evs)
			for _, other := range []string{"k-rui-0123456789abcdef", "k-eva-0123456789abcdef"} {
				var items []store.PortfolioItem
				getJSON(t, hs.URL+"/apps/rehab/api/v1/portfolio?archived=true", other, &items)
				var acts []store.Action
				getJSON(t, hs.URL+"/apps/rehab/api/v1/actions", other, &acts)
				if len(items) != 0 || len(acts) != 0 {
					t.Errorf("%s sees %d items and %d actions", other, len(items), len(acts))
				}
				if code := getJSON(t, hs.URL+"/apps/rehab/api/v1/conversations/"+conv+"/messages", other, nil); code != 404 {
					t.Errorf("%s reads ana's conversation: %d", other, code)
				}
				if code, _, _ := chat(t, hs.URL, other, `{"message":"olá","conversation_id":"`+conv+`"}`); code != 404 {
					t.Errorf("%s writes into ana's conversation: %d", other, code)
				}
				if code := getJSON(t, hs.URL+"/apps/rehab/api/v1/properties/40556677/analysis", other, nil); code != 404 {
					t.Errorf("%s reads ana's analysis: %d", other, code)
				}
			}
			var items []store.PortfolioItem
			getJSON(t, hs.URL+"/apps/rehab/api/v1/portfolio", "k-ana-0123456789abcdef", &items)
			if len(items) != 1 {
				t.Errorf("ana's portfolio: %+v", items)
			}
		})
	}
}

// A real provider's stream, through a local server speaking OpenAI's wire format, reaches the
// client token by token.
func TestProviderStreamingOverSSE(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewOpenAI(t, modeltest.Reply{Text: "Olá João! Em que posso ajudar hoje com os teus imóveis?", TextChunk: 5})
	m, err := openai.New("gpt-4o", &openai.Options{BaseURL: srv.URL + "/v1", APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	hs := serve(t, server.Config{Dev: true, Models: model.NewRoles(m, "openai:gpt-4o")})
	_, _, evs := chat(t, hs.URL, "", `{"message":"olá"}`)
	tokens := 0
	for _, e := range evs {
		if e.Type == "message" && !*e.Done {
			tokens++
		}
	}
	if answerOf(evs) != "Olá João! Em que posso ajudar hoje com os teus imóveis?" || tokens < 8 {
		t.Errorf("%d tokens: %q", tokens, answerOf(evs))
	}
	reqs := srv.Requests()
	body, _ := json.Marshal(reqs[0].Body)
	if len(reqs) == 0 || !strings.Contains(string(body), "## Estado Atual") || !strings.Contains(string(body), "trigger_property_analysis") {
		t.Errorf("the provider did not get the context block and the tools")
	}
}

func TestReportPDF(t *testing.T) {
	t.Parallel()
	hs := serve(t, server.Config{Dev: true})
	resp, err := http.Get(hs.URL + "/apps/rehab/api/v1/properties/" + rehab.DemoAlfama + "/report.pdf")
	if err != nil {
		t.Fatal(err)
	}
	pdf, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(string(pdf), "%PDF-1.4") ||
		!strings.Contains(string(pdf), `Pre\347o: 180.000\200 | \301rea: 65m\262`) {
		t.Fatalf("%d %s %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), pdf)
	}
	// Graça was never analysed: 404 saying what to do.
	resp, _ = http.Get(hs.URL + "/apps/rehab/api/v1/properties/" + rehab.DemoGraca + "/report.pdf")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), "analyse the property first") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// The app shares a server with another app (as in the registry), each graph answering hello.
func TestSharesAServer(t *testing.T) {
	t.Parallel()
	hs := serve(t, server.Config{Dev: true, Apps: []server.App{example.App(), rehab.App()}})
	for _, g := range []string{"rehab"} {
		resp, err := http.Post(hs.URL+"/runs/wait", "application/json",
			strings.NewReader(`{"assistant_id":"`+g+`","input":{"messages":[{"role":"user","content":"hello"}]}}`))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(out), "__error__") {
			t.Errorf("%s: %d %s", g, resp.StatusCode, out)
		}
	}
	var apps []server.AppInfo
	getJSON(t, hs.URL+"/apps", "", &apps)
	if len(apps) != 2 || apps[1].Name != "rehab" {
		t.Errorf("apps %+v", apps)
	}
}

// The offline flow in Portuguese: taxes, comparison, todos, focus, a superlative.
func TestOfflinePortugueseFlow(t *testing.T) {
	t.Parallel()
	hs := serve(t, server.Config{Dev: true})
	conv := ""
	for _, c := range []struct{ msg, tool, want string }{
		{"Quanto pago de impostos pelo de Alfama?", "calculate_taxes", "IMT: 2.508,98€"}, // 2026 tables: 9.000 − 6.491,02,
		{"Compara o de Alfama com o da Graça", "compare_properties", "| Preço | 180.000€ | 230.000€ |"},
		{"Adiciona a tarefa visitar o imóvel da Graça", "manage_todos", "Tarefa acrescentada: Visitar o imóvel da Graça."},
		{"Muda para o da Graça", "switch_active_property", "Em foco: T2 Graça"},
		{"Qual é o mais barato?", "search_portfolio", "O mais barato: T2 Alfama"},
		{"Qual é o mais caro?", "search_portfolio", "O mais caro: T2 Graça"},
	} {
		body := `{"message":"` + c.msg + `"`
		if conv != "" {
			body += `,"conversation_id":"` + conv + `"`
		}
		_, _, evs := chat(t, hs.URL, "", body+"}")
		conv = convOf(evs)
		tool := ""
		todo := false
		for _, e := range evs {
			if e.Type == "tool_call" {
				tool = e.Tool
			}
			todo = todo || e.Type == "todo_update"
		}
		if tool != c.tool || !strings.Contains(answerOf(evs), c.want) {
			t.Errorf("%s: called %q; %s", c.msg, tool, answerOf(evs))
		}
		// No tool name, ID or score reaches the user.
		for _, leak := range []string{"abc-123", "_portfolio", "manage_todos", "relevância", "property_id"} {
			if strings.Contains(answerOf(evs), leak) {
				t.Errorf("%s: the answer shows %q: %s", c.msg, leak, answerOf(evs))
			}
		}
		if c.tool == "manage_todos" && !todo {
			t.Errorf("no todo_update event")
		}
	}
}
