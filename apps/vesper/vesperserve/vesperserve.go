// Package vesperserve makes Vesper a trellis application: Open loads the
// warehouse on first start (SQLite in the data directory, or the "vesper"
// schema of the server's Postgres database), seeds the report menu of the
// demonstration tenants, and builds the graph; App is the server.App that
// `trellis serve` runs, with the assistant "vesper" and the chat WebSocket.
package vesperserve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/trellis-go/trellis/apps/vesper/app"
	"github.com/trellis-go/trellis/apps/vesper/chat"
	"github.com/trellis-go/trellis/apps/vesper/entity"
	"github.com/trellis-go/trellis/apps/vesper/pack"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appstream"

	"github.com/redis/go-redis/v9"
)

// Opened is a loaded Vesper: the warehouse, the graph and the chat records.
type Opened struct {
	Warehouse *warehouse.Warehouse
	App       *app.App
	Linker    *reports.Linker
	Records   *chat.Records
	// Model is the configured model; nil means the offline rules.
	Model model.Model
}

// Open opens (and on first start loads) the warehouse and builds the app.
// An empty databaseURL means SQLite at dataDir/vesper.db.
func Open(ctx context.Context, dataDir, databaseURL string, compile graph.CompileOptions) (*Opened, error) {
	return OpenWith(ctx, Options{DataDir: dataDir, DatabaseURL: databaseURL, Compile: compile})
}

// Options configure [OpenWith]. DataDir or DatabaseURL is required.
type Options struct {
	// DataDir holds the SQLite warehouse (vesper.db) when DatabaseURL is empty.
	DataDir string
	// DatabaseURL is a Postgres database; the warehouse is its vesper schema.
	DatabaseURL string
	// Compile configures the compiled graph (saver, store).
	Compile graph.CompileOptions
	// Model, when set and not the offline model, routes, runs each domain
	// agent as a tool loop and writes the answers (see app.Config.Model);
	// it also titles and summarises chat sessions. Nil means the offline
	// rules.
	Model model.Model
	// PowerBI, when set, gives deep links an embed URL and an embed token;
	// nil links to the report pages.
	PowerBI reports.Embedder
	// Cache keeps resolved project names; nil keeps them in the process.
	Cache entity.Cache
}

// OpenWith is [Open] with every option.
func OpenWith(ctx context.Context, o Options) (*Opened, error) {
	dataDir, databaseURL, compile := o.DataDir, o.DatabaseURL, o.Compile
	cfg := warehouse.Config{}
	if databaseURL != "" {
		cfg.Dialect, cfg.DSN = warehouse.Postgres, databaseURL
	} else {
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return nil, fmt.Errorf("vesperserve: data directory %s: %w", dataDir, err)
		}
		cfg.DSN = filepath.Join(dataDir, "vesper.db")
	}
	w, err := warehouse.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Opened, error) { w.Close(); return nil, err }
	settings, err := tools.NewSettings(ctx, w)
	if err != nil {
		return fail(err)
	}
	menu, err := reports.NewMenu(ctx, w)
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
	rec, err := chat.NewRecords(ctx, w)
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
	a, err := app.New(app.Config{Toolkit: tools.New(w, &tools.Options{Now: now, Cache: o.Cache}), Now: now, Model: o.Model, Settings: settings, Linker: linker, Compile: compile, TenantAliases: aliases})
	if err != nil {
		return fail(err)
	}
	return &Opened{Warehouse: w, App: a, Linker: linker, Records: rec, Model: o.Model}, nil
}

// App is Vesper as a trellis application: the assistant "vesper" and, under /apps/vesper/, the
// chat WebSocket of the specification at /apps/vesper/ws/v1/chat. The warehouse lives where the
// server keeps its data (SQLite vesper.db in the data directory, or the "vesper" schema of the
// server's Postgres database); the model is the server's default role (the offline rules when it
// is the offline model).
func App() server.App {
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
		Build: func(ctx context.Context, d server.AppDeps) (*server.AppParts, error) {
			dir, url := d.DataDir, d.DatabaseURL
			if dir == "" && url == "" {
				dir = server.DefaultDataDir
			}
			// The server's model, wrapped with telemetry (spans, a run's token budget); the app
			// rebuilds the offline model on its data's clock.
			m := d.Models.Default()
			pbi, err := powerBIFrom(d.Settings)
			if err != nil {
				return nil, err
			}
			opts := Options{DataDir: dir, DatabaseURL: url, Compile: d.Compile, Model: m, PowerBI: pbi}
			var rdb *redis.Client
			if d.RedisURL != "" {
				// Resolved project names are shared by every replica.
				ro, err := redis.ParseURL(d.RedisURL)
				if err != nil {
					return nil, fmt.Errorf("vesper: the server's Redis URL: %w", err)
				}
				rdb = redis.NewClient(ro)
				opts.Cache = entity.NewRedisCache(rdb, "vesper:entity:")
			}
			o, err := OpenWith(ctx, opts)
			if err != nil {
				if rdb != nil {
					rdb.Close()
				}
				return nil, err
			}
			closeAll := o.Warehouse.Close
			if rdb != nil {
				closeAll = func() error { return errors.Join(o.Warehouse.Close(), rdb.Close()) }
			}
			mux := http.NewServeMux()
			mux.Handle("GET "+chat.Path, o.chatHandler(d))
			return &server.AppParts{
				Graphs: []server.AppGraph{{ID: "vesper", Graph: o.App.Graph.Runnable(),
					Description: "Vesper Analytics: day-ahead prices, price curves, Power BI usage and renewable projects, on the offline rules unless a model is configured."}},
				Handler: mux,
				Close:   closeAll,
			}, nil
		},
	}
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

// chatHandler is the chat WebSocket on the app's appstream kit: the API's credentials
// (?token=), the Origin check, the tenant's request rate and open streams, heartbeats and write
// deadlines; each turn runs through the server's run machinery.
func (o *Opened) chatHandler(d server.AppDeps) http.Handler {
	return &chat.Handler{
		App: o.App, Runs: d.Runs, Records: o.Records, Linker: o.Linker, Model: o.Model, Log: d.Logger,
		Kit: appstream.New(d, nil),
		Principal: func(p server.Principal) chat.Principal {
			// The dev principal's tenant sees the demo tenant, as in the graph.
			tenant := p.Tenant
			if tenant == server.DevPrincipal.Tenant {
				tenant = warehouse.TenantVesper
			}
			return chat.Principal{Tenant: tenant, User: p.User, Permissions: p.Permissions, Run: p}
		},
	}
}
