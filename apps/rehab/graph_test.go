package rehab_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/rehab"
	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/httpclient"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
	kv "github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
)

// countingVision counts the vision model's calls.
type countingVision struct {
	model.Model
	n atomic.Int64
}

func (c *countingVision) Generate(ctx context.Context, r *model.Request) (*model.Response, error) {
	c.n.Add(1)
	return c.Model.Generate(ctx, r)
}

type fixture struct {
	o       *rehab.Orchestrator
	env     *rehab.Env
	fetches *atomic.Int64
	vision  *countingVision
	who     store.Who
}

// setup builds the graph over a fresh SQLite database, the demo listings behind a counting
// transport, a counting offline vision model and the given agent model.
func setup(t *testing.T, m model.Model, cfg rehab.Config) *fixture {
	t.Helper()
	db := appdbtest.SQLite(t, "rehab")
	st, err := store.New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	fetches := &atomic.Int64{}
	demo := listing.Demo()
	lc, err := listing.New("", &httpclient.Options{Retries: -1, Transport: listing.HandlerTransport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		demo.ServeHTTP(w, r)
	})}})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := memstore.New(&memstore.Options{Config: kv.Config{Index: &kv.IndexConfig{Embedder: embed.NewLocal(nil), Dims: 256}}})
	if err != nil {
		t.Fatal(err)
	}
	vision := &countingVision{Model: offline.New(nil)}
	env := &rehab.Env{Data: st, Pipeline: &reno.Pipeline{Listings: lc, Vision: vision}, Model: m, Summary: offline.New(nil), Store: mem, Config: cfg}
	// The default env is a decoy: the runs name theirs through the configuration.
	o, err := rehab.NewOrchestrator(&rehab.Env{}, graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	o.Register("test", env)
	return &fixture{o: o, env: env, fetches: fetches, vision: vision, who: store.Who{Tenant: "t1", User: "ana"}}
}

func (f *fixture) turn(t *testing.T, thread, text string, opts ...graph.RunOption) rehab.State {
	t.Helper()
	opts = append([]graph.RunOption{graph.WithThread(thread), graph.WithConfig(map[string]any{
		rehab.EnvKey: "test", "user_id": f.who.User, "tenant": f.who.Tenant})}, opts...)
	var in rehab.State
	if text != "" {
		in.Messages = []message.Message{message.User(text)}
	}
	out, err := f.o.Graph.Invoke(context.Background(), in, opts...)
	if err != nil {
		var ie *graph.InterruptedError
		if !errorsAs(err, &ie) {
			t.Fatal(err)
		}
	}
	return out
}

func call(name, args string) message.ToolCall {
	return message.ToolCall{ID: "c-" + name, Name: name, Arguments: json.RawMessage(args)}
}

func contextBlocks(msgs []message.Message) []message.Message {
	var out []message.Message
	for _, m := range msgs {
		if m.Name == kb.ContextRefresh {
			out = append(out, m)
		}
	}
	return out
}

func TestRoute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		msgs []message.Message
		want string
	}{
		{[]message.Message{message.User("x"), message.Assistant("", call("manage_todos", `{}`))}, "tools"},
		{[]message.Message{message.User("x"), message.Assistant("olá")}, "post_process"},
		{nil, "post_process"},
	} {
		got, _ := rehab.Route(ctx, rehab.State{Messages: c.msgs})
		if got != c.want {
			t.Errorf("%v: %s, want %s", c.msgs, got, c.want)
		}
	}
}

func TestReflectReplacesTheContextBlock(t *testing.T) {
	t.Parallel()
	k := kb.KB{"user/profile": kb.NewEntry("Ana | Porto | 1/5 secções completas", "Nome: Ana", kb.SourceDB, true)}
	s := rehab.State{Messages: []message.Message{message.User("olá")}, Knowledge: k}
	s.Messages = rehab.Reflect(s, kb.Settings{})
	s.Todos = []kb.Todo{{ID: "a1b2c3d4", Task: "Analisar imóvel de Graça", Status: "pending"}}
	s.Messages = rehab.Reflect(s, kb.Settings{})
	blocks := contextBlocks(s.Messages)
	if len(blocks) != 1 || !strings.Contains(blocks[0].Content, "☐ [a1b2c3d4] Analisar imóvel de Graça") || blocks[0].Role != message.RoleSystem {
		t.Fatalf("blocks %+v", blocks)
	}
	if len(s.Messages) != 2 || s.Messages[0].Content != "olá" {
		t.Errorf("other messages changed: %+v", s.Messages)
	}
}

// A scripted (real-model) turn: todos, an implicit budget, the context rebuilt between calls,
// the messages persisted, the action logged with the triggering message.
func TestScriptedTurn(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.ToolCalls(call("manage_todos", `{"action":"add","task":"Analisar imóvel de Graça"}`)),
		scripted.ToolCalls(call("update_user_profile", `{"section":"budget","data":{"max":180000},"confidence":0.7}`)),
		scripted.Text("Anotei o orçamento de 180.000€ e a tarefa."),
	)
	f := setup(t, m, rehab.Config{})
	st := f.turn(t, "th1", "Quero ver o imóvel da Graça; tenho uns 180k€")
	if len(st.Todos) != 1 || st.Todos[0].Task != "Analisar imóvel de Graça" || st.Todos[0].Status != "pending" {
		t.Errorf("todos %+v", st.Todos)
	}
	if e := st.Knowledge["user/budget"]; e.Summary != "Orçamento: até 180.000€" {
		t.Errorf("budget entry %+v", e)
	}
	if len(contextBlocks(st.Messages)) != 1 || st.Messages[0].Role != message.RoleSystem || st.Messages[0].Content != rehab.SystemPrompt {
		t.Errorf("system messages %+v", st.Messages[:2])
	}
	reqs := m.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls", len(reqs))
	}
	// The second call sees the todo the first call's tool added: reflect rebuilt the block.
	if !strings.Contains(reqs[1].Messages[1].Content, "Analisar imóvel de Graça") || strings.Contains(reqs[0].Messages[1].Content, "Analisar imóvel") {
		t.Errorf("context not rebuilt between calls:\n%s", reqs[1].Messages[1].Content)
	}
	if len(reqs[0].Tools) != len(rehab.ToolNames) {
		t.Errorf("%d tools offered", len(reqs[0].Tools))
	}
	ctx := context.Background()
	acts, _ := f.env.Data.Actions(ctx, f.who, 10)
	// Two mutations: the budget, and the open task carried to the next session (memory).
	var budget, todo []store.Action
	for _, x := range acts {
		switch x.Field {
		case "budget.max":
			budget = append(budget, x)
		case "memory":
			todo = append(todo, x)
		}
	}
	if len(acts) != 2 || len(budget) != 1 || budget[0].New != "180000" || budget[0].Confidence != 0.7 ||
		budget[0].Trigger != "Quero ver o imóvel da Graça; tenho uns 180k€" || budget[0].ConversationID != st.ConversationID ||
		len(todo) != 1 || !strings.Contains(todo[0].New, `"task":"Analisar imóvel de Graça"`) {
		t.Errorf("actions %+v", acts)
	}
	msgs, _ := f.env.Data.Messages(ctx, f.who, st.ConversationID)
	roles := ""
	for _, x := range msgs {
		roles += x.Role + " "
	}
	if roles != "user assistant tool assistant tool assistant " || msgs[5].Content != "Anotei o orçamento de 180.000€ e a tarefa." {
		t.Errorf("persisted: %s", roles)
	}
	if len(st.ExecutedActions) != 0 || len(st.StreamEvents) != 0 {
		t.Errorf("turn metadata not reset: %+v %+v", st.ExecutedActions, st.StreamEvents)
	}
}

// The analysis fetches and classifies once; recalculate_costs reuses the cached rooms (no
// fetch, no model call) with the new DIY skills.
func TestRecalculateUsesTheCache(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.ToolCalls(call("trigger_property_analysis", `{"url":"https://www.idealista.pt/imovel/40112233/"}`)),
		scripted.Text("Feito."),
		scripted.ToolCalls(call("recalculate_costs", `{}`)),
		scripted.Text("Recalculado."),
	)
	f := setup(t, m, rehab.Config{})
	st := f.turn(t, "th1", "Analisa https://www.idealista.pt/imovel/40112233/")
	fetches, calls := f.fetches.Load(), f.vision.n.Load()
	if fetches != 5 || calls != 4 { // the page and four photos; one vision call per photo
		t.Fatalf("%d fetches, %d vision calls", fetches, calls)
	}
	pid := st.CurrentFocus.PropertyID
	before := st.Knowledge["portfolio/"+pid+"/resumo"]
	if before.Summary == "" || !before.Loaded() || st.CurrentFocus.Topic != "renovação" {
		t.Fatalf("after analysis: %+v %+v", before, st.CurrentFocus)
	}
	st = f.turn(t, "th1", "Sei fazer pintura e demolição, recalcula os custos")
	if f.fetches.Load() != fetches || f.vision.n.Load() != calls {
		t.Errorf("recalculation fetched (%d) or called the vision model (%d)", f.fetches.Load()-fetches, f.vision.n.Load()-calls)
	}
	after := st.Knowledge["portfolio/"+pid+"/resumo"]
	if after.Summary == before.Summary {
		t.Errorf("the DIY skills did not change the estimate: %s", after.Summary)
	}
	p, _ := f.env.Data.Profile(context.Background(), f.who)
	if got := kb.Strings(p.Sections["renovation"]["diy_skills"]); strings.Join(got, ",") != "pintura,demolicao" {
		t.Errorf("skills %v", got)
	}
}

// Turns share the thread's state; entries loaded in an earlier turn are demoted.
func TestCheckpointedTurnsAndDemotion(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.ToolCalls(call("write_context", `{"path":"notas/visita","content":"Visita sábado às 10h"}`)),
		scripted.Text("Guardei."),
		scripted.Text("Olá de novo."),
	)
	f := setup(t, m, rehab.Config{})
	st := f.turn(t, "th1", "Nota: visita sábado às 10h")
	if !st.Knowledge["notas/visita"].Loaded() || st.Turn != 1 {
		t.Fatalf("turn 1: %+v", st.Knowledge["notas/visita"])
	}
	st = f.turn(t, "th1", "olá")
	if st.Turn != 2 || st.Knowledge["notas/visita"].Loaded() || st.Knowledge["notas/visita"].Summary != "Visita sábado às 10h" {
		t.Errorf("turn 2: %+v", st.Knowledge["notas/visita"])
	}
	users := 0
	for _, x := range st.Messages {
		if x.Role == message.RoleUser {
			users++
		}
	}
	if users != 2 || len(contextBlocks(st.Messages)) != 1 {
		t.Errorf("%d user messages, %d context blocks", users, len(contextBlocks(st.Messages)))
	}
}

// remove_from_portfolio pauses for consent; "não" keeps the item, "sim" archives it.
func TestConsentBeforeRemoval(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.ToolCalls(call("save_to_portfolio", `{"property_id":"https://www.idealista.pt/imovel/50223344/"}`)),
		scripted.Text("Guardado."),
		scripted.ToolCalls(call("remove_from_portfolio", `{"property_id":"Ribeira"}`)),
		scripted.Text("Mantive."),
		scripted.ToolCalls(call("remove_from_portfolio", `{"property_id":"Ribeira"}`)),
		scripted.Text("Removido."),
	)
	f := setup(t, m, rehab.Config{})
	ctx := context.Background()
	f.turn(t, "th1", "Guarda este")
	f.turn(t, "th1", "Tira o da Ribeira")
	snap, _ := f.o.Graph.State(ctx, checkpoint.Ref{ThreadID: "th1"})
	if len(snap.Interrupts()) != 1 {
		t.Fatalf("no consent asked: %+v", snap.Next)
	}
	q, _ := json.Marshal(snap.Interrupts()[0].Value)
	if !strings.Contains(string(q), "Confirmas que queres remover T1 Ribeira") {
		t.Errorf("question %s", q)
	}
	if items, _ := f.env.Data.Portfolio(ctx, f.who, false); len(items) != 1 {
		t.Fatal("removed before consent")
	}
	f.turn(t, "th1", "", graph.Resume("não"))
	if items, _ := f.env.Data.Portfolio(ctx, f.who, false); len(items) != 1 {
		t.Fatal("removed after a no")
	}
	f.turn(t, "th1", "Remove o da Ribeira")
	st := f.turn(t, "th1", "", graph.Resume("sim, remove"))
	items, _ := f.env.Data.Portfolio(ctx, f.who, true)
	if len(items) != 1 || items[0].Status != store.StatusArchived {
		t.Fatalf("after yes: %+v", items)
	}
	if strings.Contains(kb.Block(st.Knowledge, nil, nil), items[0].PropertyID) {
		t.Error("the archived property is still in the knowledge base")
	}
	acts, _ := f.env.Data.Actions(ctx, f.who, 1)
	if acts[0].ActionType != "remove_from_portfolio" || acts[0].Old != store.StatusInterested || acts[0].New != store.StatusArchived {
		t.Errorf("log %+v", acts[0])
	}
	for _, v := range []any{true, "Sim", "yes", map[string]any{"confirm": true}, []any{map[string]any{"type": "accept"}}} {
		if !rehab.Consented(v) {
			t.Errorf("%v not taken as consent", v)
		}
	}
	for _, v := range []any{false, "não", "nao, obrigado", "cancela", map[string]any{"type": "ignore"}, 3} {
		if rehab.Consented(v) {
			t.Errorf("%v taken as consent", v)
		}
	}
}

// A session idle past the timeout ends; its summary is written and shown to the next one;
// the summary trigger writes one after enough messages.
func TestSessionsAndSummaries(t *testing.T) {
	t.Parallel()
	m := scripted.New(scripted.Text("Olá!"))
	m.Repeat = true
	f := setup(t, m, rehab.Config{SummaryTriggerMessageCount: 4, SessionTimeoutMinutes: 30})
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f.env.Data.Now = func() time.Time { return now }
	ctx := context.Background()
	st := f.turn(t, "th1", "Procuro um T2 em Alfama")
	conv := st.ConversationID
	c, _ := f.env.Data.Conversation(ctx, f.who, conv)
	if c.Summary != "" || c.MessageCount != 2 {
		t.Fatalf("after 2 messages: %+v", c)
	}
	st = f.turn(t, "th1", "E também na Graça")
	c, _ = f.env.Data.Conversation(ctx, f.who, conv)
	if c.Summary == "" || c.SummarizedCount != 4 || !strings.Contains(c.Summary, "Procuro um T2 em Alfama") {
		t.Fatalf("after 4 messages: %+v", c)
	}
	now = now.Add(45 * time.Minute)
	sess, err := f.o.OpenSession(ctx, f.env, f.who, "")
	if err != nil || !sess.Created || len(sess.Ended) != 1 {
		t.Fatalf("after 45 idle minutes: %v %+v", err, sess)
	}
	st = f.turn(t, "th2", "olá", graph.WithConfig(map[string]any{rehab.EnvKey: "test", "user_id": "ana", "tenant": "t1", "conversation_id": sess.Conversation.ID}))
	prev := st.Knowledge["session/resumo_anterior"]
	if !prev.Loaded() || !strings.Contains(prev.Text, "Procuro um T2 em Alfama") {
		t.Errorf("the next session does not show the summary: %+v", prev)
	}
}

func TestCompareAndTaxesAndSearch(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.ToolCalls(call("save_to_portfolio", `{"property_id":"50334455"}`), call("save_to_portfolio", `{"property_id":"40223344"}`)),
		scripted.ToolCalls(call("update_user_profile", `{"section":"fiscal","data":{"habitacao_propria_permanente":true,"primeira_habitacao":true,"idade":30}}`)),
		scripted.ToolCalls(call("compare_properties", `{"property_ids":["Paranhos","Alvalade"]}`)),
		scripted.ToolCalls(call("calculate_taxes", `{"property_id":"Paranhos"}`)),
		scripted.ToolCalls(call("search_portfolio", `{"query":"o mais barato"}`)),
		scripted.ToolCalls(call("search_portfolio", `{"query":"o que tem garagem"}`)),
		scripted.Text("Pronto."),
	)
	f := setup(t, m, rehab.Config{})
	st := f.turn(t, "th1", "Guarda os dois e compara")
	var tools []string
	for _, x := range st.Messages {
		if x.Role == message.RoleTool {
			tools = append(tools, x.Content)
		}
	}
	if len(tools) != 7 {
		t.Fatalf("tool results: %q", tools)
	}
	table := tools[3]
	for _, want := range []string{"| | T3 Paranhos | T3 Alvalade |", "| Preço | 260.000€ | 420.000€ |", "| €/m² | 2.476€ | 3.818€ |", "O mais barato à partida é T3 Paranhos"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// 260.000€, young first-home buyer: exempt under 324.058€.
	if !strings.Contains(tools[4], "IMT: 0,00€") || !strings.Contains(tools[4], "isenção total") {
		t.Errorf("taxes:\n%s", tools[4])
	}
	if !strings.Contains(tools[5], "O mais barato") || !strings.Contains(tools[5], "T3 Paranhos") {
		t.Errorf("search: %s", tools[5])
	}
	// By meaning (the store's vectors over the listing's description): the flat with a garage.
	// The best match comes first, with no score or ID for the user to read.
	if lines := strings.Split(tools[6], "\n"); len(lines) < 2 || !strings.Contains(lines[1], "T3 Paranhos") || strings.Contains(tools[6], "relevância") {
		t.Errorf("search by meaning: %s", tools[6])
	}
}

// Users are kept apart in the tools as in the tables.
func TestToolsAreScopedToTheUser(t *testing.T) {
	t.Parallel()
	m := scripted.New(scripted.ToolCalls(call("save_to_portfolio", `{"property_id":"50334455"}`)), scripted.Text("ok"),
		scripted.ToolCalls(call("remove_from_portfolio", `{"property_id":"Paranhos"}`)), scripted.Text("não há"))
	f := setup(t, m, rehab.Config{})
	f.turn(t, "th-ana", "guarda")
	f.who = store.Who{Tenant: "t1", User: "rui"}
	st := f.turn(t, "th-rui", "remove o de Paranhos")
	last := ""
	for _, x := range st.Messages {
		if x.Role == message.RoleTool {
			last = x.Content
		}
	}
	if !strings.Contains(last, "portfólio está vazio") {
		t.Errorf("rui's removal: %s", last)
	}
	items, _ := f.env.Data.Portfolio(context.Background(), store.Who{Tenant: "t1", User: "ana"}, false)
	if len(items) != 1 {
		t.Error("ana's item changed")
	}
}

// Structured memory (decisions, rejected properties with reasons, open questions) is kept in the
// profile and shown to the next sessions.
func TestMemoryAcrossSessions(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.ToolCalls(call("write_context", `{"path":"memoria/rejeitados","content":"T1 Ribeira: demasiada humidade"}`),
			call("write_context", `{"path":"memoria/decisoes","content":"Comprar só com elevador"}`),
			call("write_context", `{"path":"memoria/questoes","content":"Aceitam proposta abaixo de 240.000€?"}`)),
		scripted.Text("Anotado."),
		scripted.Text("Olá."),
	)
	f := setup(t, m, rehab.Config{})
	f.turn(t, "th1", "Esquece o da Ribeira, tem humidade a mais")
	p, _ := f.env.Data.Profile(context.Background(), f.who)
	if len(p.Memory.Rejected) != 1 || p.Memory.Rejected[0] != (store.Rejected{Property: "T1 Ribeira", Reason: "demasiada humidade"}) ||
		len(p.Memory.Decisions) != 1 || len(p.Memory.OpenQuestions) != 1 {
		t.Fatalf("memory %+v", p.Memory)
	}
	st := f.turn(t, "th-next-session", "olá")
	prof := *st.Knowledge["user/profile"].Content
	for _, want := range []string{"Rejeitado: T1 Ribeira (demasiada humidade)", "Decisão: Comprar só com elevador", "Questão em aberto: Aceitam proposta"} {
		if !strings.Contains(prof, want) {
			t.Errorf("next session's profile lacks %q:\n%s", want, prof)
		}
	}
}

// At the summary trigger the thread drops the turns the summary covers, keeping the latest.
func TestSummaryCompactsTheThread(t *testing.T) {
	t.Parallel()
	m := scripted.New(scripted.Text("Certo."))
	m.Repeat = true
	f := setup(t, m, rehab.Config{SummaryTriggerMessageCount: 8})
	var st rehab.State
	for _, q := range []string{"Procuro T2 em Alfama", "E na Graça?", "Tenho 200k€", "Quero obras leves", "E impostos?"} {
		st = f.turn(t, "th1", q)
	}
	users := 0
	for _, x := range st.Messages {
		if x.Role == message.RoleUser {
			users++
		}
	}
	cur := st.Knowledge["session/resumo_atual"]
	if users != rehab.KeepTurns+1 || !cur.Loaded() || !strings.Contains(cur.Text, "Procuro T2 em Alfama") {
		t.Errorf("%d user turns kept; summary %+v", users, cur)
	}
	if st.Messages[0].Content != rehab.SystemPrompt || len(contextBlocks(st.Messages)) != 1 {
		t.Error("system messages lost")
	}
	msgs, _ := f.env.Data.Messages(context.Background(), f.who, st.ConversationID)
	if len(msgs) != 10 {
		t.Errorf("%d messages stored; the table keeps them all", len(msgs))
	}
}

// A session nobody writes to again is ended and summarised by the sweep.
func TestEndIdle(t *testing.T) {
	t.Parallel()
	m := scripted.New(scripted.Text("Certo."))
	m.Repeat = true
	f := setup(t, m, rehab.Config{SessionTimeoutMinutes: 30})
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f.env.Data.Now = func() time.Time { return now }
	st := f.turn(t, "th1", "Procuro um T1 na Mouraria")
	ctx := context.Background()
	if n, err := f.o.EndIdle(ctx, f.env); err != nil || n != 0 {
		t.Fatalf("fresh session ended: %d %v", n, err)
	}
	now = now.Add(31 * time.Minute)
	if n, err := f.o.EndIdle(ctx, f.env); err != nil || n != 1 {
		t.Fatalf("idle session not ended: %d %v", n, err)
	}
	c, _ := f.env.Data.Conversation(ctx, f.who, st.ConversationID)
	if c.EndedAt == nil || !strings.Contains(c.Summary, "Procuro um T1 na Mouraria") {
		t.Errorf("%+v", c)
	}
}

// A task left open in one conversation is in the next conversation's todo list and context
// block; one completed there is not carried further.
func TestTodosCarriedIntoTheNextSession(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.ToolCalls(call("manage_todos", `{"action":"add","task":"Visitar o imóvel da Graça"}`)),
		scripted.ToolCalls(message.ToolCall{ID: "c-2", Name: "manage_todos", Arguments: json.RawMessage(`{"action":"add","task":"Pedir a caderneta predial"}`)}),
		scripted.Text("Anotado."),
		scripted.ToolCalls(call("manage_todos", `{"action":"complete","task":"caderneta"}`)),
		scripted.Text("Feito."),
		scripted.Text("Olá outra vez."),
	)
	f := setup(t, m, rehab.Config{SessionTimeoutMinutes: 30})
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f.env.Data.Now = func() time.Time { return now }
	ctx := context.Background()
	st := f.turn(t, "th1", "Adiciona duas tarefas")
	if len(st.Todos) != 2 {
		t.Fatalf("first session's todos: %+v", st.Todos)
	}
	next := func(thread, text string) rehab.State {
		now = now.Add(45 * time.Minute)
		sess, err := f.o.OpenSession(ctx, f.env, f.who, "")
		if err != nil || !sess.Created {
			t.Fatalf("a new session: %v %+v", err, sess)
		}
		return f.turn(t, thread, text, graph.WithConfig(map[string]any{rehab.EnvKey: "test", "user_id": f.who.User, "tenant": f.who.Tenant, "conversation_id": sess.Conversation.ID}))
	}
	st = next("th2", "Já pedi a caderneta")
	if st.ConversationID == "" || len(st.Todos) != 2 {
		t.Fatalf("second session's todos: %+v", st.Todos)
	}
	blocks := contextBlocks(st.Messages)
	if len(blocks) != 1 || !strings.Contains(blocks[0].Text(), "☐ ["+st.Todos[0].ID+"] Visitar o imóvel da Graça") {
		t.Fatalf("the second session's context block does not list the carried task:\n%v", blocks)
	}
	done := map[string]string{}
	for _, td := range st.Todos {
		done[td.Task] = td.Status
	}
	if done["Pedir a caderneta predial"] != "done" || done["Visitar o imóvel da Graça"] != "pending" {
		t.Fatalf("after completing one: %+v", st.Todos)
	}
	// What the read endpoint (GET /conversations/{id}/state) shows is the thread's state.
	snap, err := f.o.Graph.State(ctx, checkpoint.Ref{ThreadID: "th2"})
	if err != nil || len(snap.Values.Todos) != 2 {
		t.Fatalf("thread state: %v %+v", err, snap)
	}
	st = next("th3", "Olá")
	if len(st.Todos) != 1 || st.Todos[0].Task != "Visitar o imóvel da Graça" || st.Todos[0].Status != "pending" {
		t.Fatalf("third session's todos: %+v", st.Todos)
	}
	prof, err := f.env.Data.Profile(ctx, f.who)
	if err != nil || len(prof.Memory.OpenTodos) != 1 {
		t.Fatalf("memory of open todos: %v %+v", err, prof)
	}
}

// A user who chose English for the replies in their profile is answered in English: the model
// is told so, an English reply passes as it is, and a reply in another language is asked again
// in English (not in pt-PT).
func TestProfileChoosesTheReplyLanguage(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.ToolCalls(call("update_user_profile", `{"section":"preferences","data":{"idioma_respostas":"en"},"confidence":1}`)),
		scripted.Text("Combinado, a partir de agora respondo em inglês."),
		// Next turn: the profile says English.
		scripted.Text("Your portfolio is empty: send me an Idealista link and I will analyse the property."),
		// And a reply in Portuguese is asked again in English.
		scripted.Text("O teu portfólio está vazio, e não tens tarefas em aberto neste momento."),
		scripted.Text("Your portfolio is still empty, and you have no open tasks."),
	)
	f := setup(t, m, rehab.Config{})
	f.turn(t, "lang", "Responde-me em inglês a partir de agora, por favor")
	st := f.turn(t, "lang", "What is in my portfolio?")
	if st.ReplyLanguage != "en" {
		t.Fatalf("reply language %q after the profile chose English", st.ReplyLanguage)
	}
	if got := st.Messages[len(st.Messages)-1].Text(); !strings.HasPrefix(got, "Your portfolio is empty") {
		t.Errorf("the English reply was not kept: %q", got)
	}
	st = f.turn(t, "lang", "And my tasks?")
	if got := st.Messages[len(st.Messages)-1].Text(); got != "Your portfolio is still empty, and you have no open tasks." {
		t.Errorf("a pt-PT reply was not asked again in English: %q", got)
	}
	reqs := m.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model calls", len(reqs))
	}
	told := func(r *model.Request, text string) bool {
		return slices.ContainsFunc(r.Messages, func(x message.Message) bool { return x.Role == message.RoleSystem && x.Content == text })
	}
	en := rehab.ReplyLanguages["en"]
	if told(reqs[0], en.Instruction) || !told(reqs[2], en.Instruction) {
		t.Errorf("the English instruction: first turn %v, second %v", told(reqs[0], en.Instruction), told(reqs[2], en.Instruction))
	}
	if !told(reqs[4], en.Reminder) || told(reqs[4], rehab.PortugueseReminder) {
		t.Errorf("the retry was not reminded of English")
	}
}
