// Package vesper is the Vesper Analytics application: an assistant over an energy company's
// data (day-ahead prices, price curves, Power BI usage and renewable projects) with the chat
// WebSocket of its specification.
//
// [App] is the server.App that `trellis serve` runs: on first start it loads the warehouse
// (package warehouse: SQLite vesper.db in the data directory, or the "vesper" schema of the
// server's Postgres database), keeps its own tables (chat records, the report menu, the tool
// switches) through appdb migrations, seeds the report menu of the demonstration tenants, and
// builds the graph "vesper":
//
//	START → supervisor ─┬─ Send(dayahead_agent)    ─┐
//	                    ├─ Send(price_curve_agent) ─┤
//	                    ├─ Send(pbi_metrics_agent) ─┼─→ synthesizer → END
//	                    ├─ Send(per_agent)         ─┘
//	                    └─ clarifying question → END
//
// The supervisor classifies the request (intent, agents, filters). On the offline model the
// [RuleRouter] does it: [Extract] reads vendors, markets and hub-zones through the alias map,
// years, As-Of files, "top N", stages, health colours and relative dates; a capitalised name is
// resolved against the tenant's live projects; each [Domain] is scored by its cue words. With a
// real model the model classifies and the same normalisation runs after it. Either way the
// filters go through entity.Resolve, a follow-up ("What about NP15?") inherits the previous
// request's filters, and a domain's Clarify may turn the request into a clarifying question that
// ends the run at once.
//
// Every routed agent runs in parallel (graph.Send). An agent takes its tools from the registry
// (tools.AgentTools), less those the tenant switched off (tools.Settings). Offline the domain's
// Plan chooses the calls (a SQL statement in the request goes to general_sql_query); with a real
// model the agent is a ReAct tool loop (react.New with the domain's prompt and the filter
// context, at most [Options.MaxTurns] model calls). Each call runs as the caller of the run's
// tool.CallInfo and its result is formatted by synth before any model sees it. A denied or
// switched-off tool is explained in the answer, never skipped. The synthesizer merges the
// agents' blocks, adds the Power BI deep links (reports.Linker, best effort) and streams the
// Markdown.
//
// Under /apps/vesper/ the app serves the chat WebSocket at /ws/v1/chat (http.go): each
// {"type":"chat.message"} frame is answered with chat.thinking, chat.token frames and
// chat.complete; sessions, messages and summaries are kept by package store.
//
// Adding a domain: see [Domain], [Options.Domains] and docs/apps/vesper.md.
package vesper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/apps/vesper/entity"
	"github.com/trellis-go/trellis/apps/vesper/pack"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/store"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server"

	"github.com/redis/go-redis/v9"
)

// Options configure [New]: every setting Vesper has beyond the app settings (powerbi_*, which
// the server hands it as TRELLIS_APP_VESPER_* or --app-config). The zero value is the default.
type Options struct {
	// PowerBI, when set, gives deep links an embed URL and an embed token; nil means the app's
	// powerbi_* settings, and with none of them set the links go to the report pages.
	PowerBI reports.Embedder
	// Cache keeps resolved project names; nil means the server's Redis when it has one, else
	// the process.
	Cache entity.Cache
	// Domains are registered after the built-in four; use it to add a domain.
	Domains []Domain
	// MaxTurns bounds the model calls of one domain agent's tool loop with a real model; zero
	// means DefaultMaxTurns.
	MaxTurns int
}

// App is Vesper with the default options: the assistant "vesper" and, under /apps/vesper/, the
// chat WebSocket of the specification at /apps/vesper/ws/v1/chat. The warehouse lives where the
// server keeps its data (SQLite vesper.db in the data directory, or the "vesper" schema of the
// server's Postgres database); the model is the server's default role (the offline rules when it
// is the offline model).
func App() server.App { return New(Options{}) }

// New is Vesper with options.
func New(opts Options) server.App {
	return server.App{
		Name:        "vesper",
		Pack:        pack.Pack,
		Description: "Vesper Analytics: day-ahead prices, price curves, Power BI usage and renewable projects.",
		Settings: []server.AppSetting{
			{Key: "powerbi_tenant_id", Doc: "the Azure AD tenant of the Power BI service principal; with the client ID and secret, real report embedding, else offline"},
			{Key: "powerbi_client_id", Doc: "the service principal's client ID"},
			{Key: "powerbi_client_secret", Doc: "the service principal's client secret"},
			{Key: "powerbi_authority_url", Doc: "the Azure AD authority (login.microsoftonline.com when empty)"},
			{Key: "powerbi_base_url", Doc: "the Power BI REST API's base URL (api.powerbi.com when empty)"},
		},
		Build: func(ctx context.Context, d server.AppDeps) (*server.AppParts, error) { return build(ctx, d, opts) },
	}
}

func build(ctx context.Context, d server.AppDeps, opts Options) (*server.AppParts, error) {
	dir, url := d.DataDir, d.DatabaseURL
	if dir == "" && url == "" {
		dir = server.DefaultDataDir
	}
	// The server's model, wrapped with telemetry (spans, a run's token budget); on the offline
	// model the app asks it with vesper's pack.
	cfg := openConfig{Options: opts, DataDir: dir, DatabaseURL: url, Compile: d.Compile, Model: d.Models.Default()}
	if cfg.PowerBI == nil {
		pbi, err := powerBIFrom(d.Settings)
		if err != nil {
			return nil, err
		}
		cfg.PowerBI = pbi
	}
	var rdb *redis.Client
	if d.RedisURL != "" && cfg.Cache == nil {
		// Resolved project names are shared by every replica.
		ro, err := redis.ParseURL(d.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("vesper: the server's Redis URL: %w", err)
		}
		rdb = redis.NewClient(ro)
		cfg.Cache = entity.NewRedisCache(rdb, "vesper:entity:")
	}
	o, err := open(ctx, cfg)
	if err != nil {
		if rdb != nil {
			rdb.Close()
		}
		return nil, err
	}
	closeAll := o.Close
	if rdb != nil {
		closeAll = func() error { return errors.Join(o.Close(), rdb.Close()) }
	}
	return &server.AppParts{
		Graphs: []server.AppGraph{{ID: "vesper", Graph: o.App.Graph.Runnable(),
			Description: "Vesper Analytics: day-ahead prices, price curves, Power BI usage and renewable projects, on the offline rules unless a model is configured."}},
		Handler: o.routes(d),
		Close:   closeAll,
	}, nil
}

// opened is a loaded Vesper: the warehouse, the app's tables, the graph and the chat records.
type opened struct {
	Warehouse *warehouse.Warehouse
	// DB holds the app's own tables (appdb): chat records, the report menu, the tool switches.
	DB      *appdb.DB
	App     *assistant
	Linker  *reports.Linker
	Records *store.Records
	// Model is the configured model; nil means the offline rules.
	Model model.Model
}

// Close closes the warehouse and the app's tables.
func (o *opened) Close() error { return errors.Join(o.Warehouse.Close(), o.DB.Close()) }

// openConfig says where [open] finds the warehouse. DataDir or DatabaseURL is required.
type openConfig struct {
	Options
	// DataDir holds the SQLite warehouse (vesper.db) when DatabaseURL is empty.
	DataDir string
	// DatabaseURL is a Postgres database; the warehouse is its vesper schema.
	DatabaseURL string
	// Compile configures the compiled graph (saver, store).
	Compile graph.CompileOptions
	// Model, when set and not the offline model, routes, runs each domain agent as a tool loop
	// and writes the answers; it also titles and summarises chat sessions. Nil means the
	// offline model.
	Model model.Model
}

// open opens (and on first start loads) the warehouse and builds the app.
func open(ctx context.Context, o openConfig) (*opened, error) {
	dataDir, databaseURL, compile := o.DataDir, o.DatabaseURL, o.Compile
	cfg := warehouse.Config{}
	if databaseURL != "" {
		cfg.Dialect, cfg.DSN = warehouse.Postgres, databaseURL
	} else {
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return nil, fmt.Errorf("vesper: data directory %s: %w", dataDir, err)
		}
		cfg.DSN = filepath.Join(dataDir, "vesper.db")
	}
	w, err := warehouse.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The app's own tables (chat records, the report menu, the tool switches) are kept apart
	// from the warehouse, by appdb migrations.
	db, err := appdb.Open(ctx, "vesper", &appdb.Options{DataDir: dataDir, DatabaseURL: databaseURL})
	if err != nil {
		w.Close()
		return nil, err
	}
	fail := func(err error) (*opened, error) { w.Close(); db.Close(); return nil, err }
	settings, err := tools.NewSettings(ctx, db)
	if err != nil {
		return fail(err)
	}
	menu, err := reports.NewMenu(ctx, db)
	if err != nil {
		return fail(err)
	}
	for _, tenant := range []string{warehouse.TenantVesper, "northwind"} {
		if _, ok, err := menu.ByKey(ctx, tenant, "mc_dayahead_curves"); err != nil {
			return fail(err)
		} else if !ok {
			for _, it := range reports.DefaultItems(tenant) {
				if err := menu.Put(ctx, it); err != nil {
					return fail(err)
				}
			}
		}
	}
	rec, err := store.NewRecords(ctx, db)
	if err != nil {
		return fail(err)
	}
	linker := &reports.Linker{Menu: menu, PowerBI: o.PowerBI}
	// Relative dates ("last week") are read against the data's own date
	// when it is the generated data set.
	now, err := w.Clock(ctx)
	if err != nil {
		return fail(err)
	}
	// The dev-mode server acts as one tenant; let it see the demo tenant's generated data.
	aliases := map[string]string{server.DevPrincipal.Tenant: warehouse.TenantVesper}
	a, err := newAssistant(assistantConfig{Toolkit: tools.New(w, &tools.Options{Now: now, Cache: o.Cache}), Now: now, Model: o.Model,
		Settings: settings, Linker: linker, Compile: compile, TenantAliases: aliases, Domains: o.Domains, MaxTurns: o.MaxTurns})
	if err != nil {
		return fail(err)
	}
	return &opened{Warehouse: w, DB: db, App: a, Linker: linker, Records: rec, Model: o.Model}, nil
}

// powerBIFrom makes the Power BI client the app's settings describe: powerbi_tenant_id,
// powerbi_client_id and powerbi_client_secret (a service principal), with powerbi_authority_url
// and powerbi_base_url to point elsewhere than Microsoft's endpoints. None of them set means no
// Power BI: deep links go to the report pages.
func powerBIFrom(s server.AppSettings) (reports.Embedder, error) {
	tenant, id, secret := s.Get("powerbi_tenant_id"), s.Get("powerbi_client_id"), s.Get("powerbi_client_secret")
	if tenant == "" && id == "" && secret == "" {
		return nil, nil
	}
	c, err := reports.NewPowerBI(reports.PowerBIConfig{TenantID: tenant, ClientID: id, ClientSecret: secret,
		AuthorityURL: s.Get("powerbi_authority_url"), BaseURL: s.Get("powerbi_base_url")})
	if err != nil {
		return nil, fmt.Errorf("vesper: Power BI settings (TRELLIS_APP_VESPER_POWERBI_TENANT_ID, _CLIENT_ID, _CLIENT_SECRET): %w", err)
	}
	return c, nil
}
