// Package analyst is the strategic analyst: an ambient research assistant for management
// consultants, served through the Agent Protocol as the assistant "analyst".
//
// It knows its user through four memory namespaces (user_profile, company_profile,
// user_preferences, episodic_memory, under ("strategic_analyst", user_id, ...)), retrieves from
// the company's knowledge base (the tables documents, reports and report_chunks, with vectors in
// the store's index), plans research with the user at an Agent Inbox gate, dispatches task agents
// in parallel with Send, reviews and re-dispatches their findings, asks about its discoveries at a
// second gate, writes a report in the user's style with parallel section writers, and saves it on
// approval at a third gate, chunked and indexed back so that a later session finds it.
//
// With no model configured everything runs on deterministic rules (planning, review, writing from
// the corpus); with models, the strong role plans, supervises and writes and the fast role
// routes gate answers and proposes memory updates. Web search goes through a Tavily client; by
// default it is answered by a shipped web corpus behind the same client.
package analyst

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/apps/analyst/corpus"
	"github.com/trellis-go/trellis/apps/analyst/pack"
	"github.com/trellis-go/trellis/apps/analyst/store"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/telemetry"
	"github.com/trellis-go/trellis/tool"
)

// Options configure the analyst ([New]). The zero value is the offline demo ([App]); the server's
// settings (tavily_api_key, tavily_base_url) fill TavilyURL and TavilyKey when both are empty.
type Options struct {
	// TavilyURL is the Tavily Search API's base URL; empty means the shipped web corpus, served
	// in process through the same client.
	TavilyURL string
	// TavilyKey is sent as a bearer token to TavilyURL.
	TavilyKey string
	// TavilyTransport, when not nil, replaces the client's HTTP transport (tests).
	TavilyTransport http.RoundTripper
	// MaxAttempts bounds how often a task agent is sent back with a critique (3 when zero).
	MaxAttempts int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// App is the analyst on the offline web corpus.
func App() server.App { return New(Options{}) }

// New is the analyst with opts.
func New(opts Options) server.App {
	return server.App{
		Name:        "analyst",
		Pack:        pack.Pack,
		Description: "The strategic analyst: a research agent with memory, a company knowledge base and three review gates.",
		Settings: []server.AppSetting{
			{Key: "tavily_api_key", Doc: "the Tavily search API key; the offline web corpus when empty"},
			{Key: "tavily_base_url", Doc: "the Tavily API's base URL (Tavily's own when empty)"},
		},
		Build: func(ctx context.Context, d server.AppDeps) (*server.AppParts, error) {
			cfg := opts
			if cfg.TavilyURL == "" && cfg.TavilyKey == "" {
				// The app's settings (TRELLIS_APP_ANALYST_TAVILY_API_KEY, _TAVILY_BASE_URL): a key
				// alone means Tavily's own endpoint.
				if key := d.Settings.Get("tavily_api_key"); key != "" {
					cfg.TavilyURL, cfg.TavilyKey = d.Settings.Or("tavily_base_url", TavilyURL), key
				}
			}
			a, err := open(ctx, d, cfg)
			if err != nil {
				return nil, err
			}
			g, err := a.Graph(d.Compile)
			if err != nil {
				a.Close()
				return nil, err
			}
			return &server.AppParts{
				Graphs: []server.AppGraph{{ID: "analyst", Graph: g.Runnable(),
					Description: "Strategic analyst: plans research with you, runs parallel task agents over the company knowledge base and the web, and writes a report in your style (Agent Inbox gates)."}},
				Handler: a.Handler(d),
				Close:   a.Close,
			}, nil
		},
	}
}

// Analyst holds what the graphs share: the knowledge base, the memory, the web client and the
// models.
type Analyst struct {
	tables      *store.Tables
	kb          *KB
	mem         *Memory
	web         *Tavily
	offlineWeb  *OfflineWeb
	fast        model.Model
	strong      model.Model
	fastRule    bool // the fast role is the offline model: route by rule
	strongRule  bool // the strong role is the offline model: plan, review and write by rule
	log         *slog.Logger
	now         func() time.Time
	maxAttempts int
	tools       map[string]tool.Tool // traced
	taskReact   *graph.Compiled[react.State]
	superModel  model.Model         // the supervisors' tool loops; the strong role when nil (tests replace it)
	dates       sync.Map            // web result URL → published date
	assumptions []corpus.Assumption // the firm's planning assumptions, from the corpus
}

// open opens the analyst's tables in d's database, ingests the corpus for the default tenant and
// connects the web client.
func open(ctx context.Context, d server.AppDeps, cfg Options) (*Analyst, error) {
	st := d.Store
	if st == nil {
		return nil, fmt.Errorf("analyst: the server has no store")
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	db, err := appdb.Open(ctx, "analyst", &appdb.Options{DataDir: d.DataDir, DatabaseURL: d.DatabaseURL})
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, store.Migrations); err != nil {
		db.Close()
		return nil, err
	}
	roles := d.Models
	if roles == nil {
		db.Close()
		return nil, fmt.Errorf("analyst: no models")
	}
	fast, strong := withPack(roles.For(model.RoleFast)), withPack(roles.For(model.RoleStrong))
	a := &Analyst{tables: store.New(db), log: log, now: now, maxAttempts: cfg.MaxAttempts,
		fastRule: isOffline(fast), strongRule: isOffline(strong),
		fast: fast, strong: strong} // the server wraps them with telemetry
	if a.maxAttempts <= 0 {
		a.maxAttempts = 3
	}
	shared := d.SharedStore
	if shared == nil {
		shared = st
	}
	a.kb = &KB{tables: a.tables, shared: shared, log: log, now: now, loaded: map[string]bool{}}
	dom, err := loadDomain()
	if err != nil {
		db.Close()
		return nil, err
	}
	a.assumptions = dom.Assumptions
	memModel := a.fast
	if a.fastRule {
		memModel = nil
	}
	a.mem = &Memory{st: st, log: log, fast: memModel, now: now}
	base, transport := cfg.TavilyURL, cfg.TavilyTransport
	if base == "" {
		a.offlineWeb, err = NewOfflineWeb()
		if err != nil {
			db.Close()
			return nil, err
		}
		base = "http://tavily.offline"
		if transport == nil {
			transport = a.offlineWeb.Transport()
		}
	}
	if a.web, err = NewTavily(base, cfg.TavilyKey, transport); err != nil {
		db.Close()
		return nil, err
	}
	ts, err := a.Tools()
	if err != nil {
		db.Close()
		return nil, err
	}
	a.tools = map[string]tool.Tool{}
	for name, t := range ts {
		a.tools[name] = telemetry.Tool(t)
	}
	if !a.strongRule {
		a.taskReact, err = react.New(a.strong, &react.Options{Name: "task_agent", MaxTurns: 8, ResponseSchema: findingSchema,
			Tools:  []tool.Tool{a.tools["rag_tool"], a.tools["web_search_tool"]},
			Prompt: prompt("task_agent", nil, nil)})
		if err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := a.kb.EnsureCorpus(ctx, server.DevPrincipal.Tenant); err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}

// Close closes the tables.
func (a *Analyst) Close() error { return a.tables.Close() }

// KB is the knowledge base.
func (a *Analyst) KB() *KB { return a.kb }

// Memory is the memory.
func (a *Analyst) Memory() *Memory { return a.mem }

// OfflineWeb is the in-process search engine, nil when a Tavily URL is configured.
func (a *Analyst) OfflineWeb() *OfflineWeb { return a.offlineWeb }

// withPack gives the offline model the analyst's pack when it lacks it (the analyst built
// outside the server; the server gives each app's offline roles its pack and wraps them).
func withPack(m model.Model) model.Model {
	for _, p := range offline.PacksOf(m) {
		if p == pack.Pack {
			return m
		}
	}
	if x, ok, err := offline.Extend(m, pack.Pack); ok && err == nil {
		return x
	}
	return m
}
