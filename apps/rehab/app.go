// Package rehab is the Rehabify application: a pt-PT chat agent through which a user buys and
// renovates property. It serves the orchestrator graph as the assistant "rehab", the SSE chat
// endpoint POST /apps/rehab/api/v1/chat, and the JSON a front end needs (profile, portfolio,
// action log, conversations, todos, the analysis report as PDF). See docs/apps/rehab.md.
//
// The chat agent (graph.go) is a graph of five nodes (hydrate_context, agent, tools, reflect,
// post_process) over State, with its tools (tools.go: the specification's eleven and the ones of
// its "future" list), the pt-PT system prompt (prompts/system.md) and the session summaries
// (summary.go). Dependencies (the data layer, the renovation pipeline, the models, the store)
// reach the nodes and tools through the run's configuration: the configurable value "rehab_env"
// names an Env registered on the Orchestrator (the default one when absent), so tests run the
// same graph against other dependencies without any global.
package rehab

import (
	"context"
	"fmt"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/apps/rehab/pack"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/httpclient"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server"
)

// Name is the app's name; GraphID its assistant.
const (
	Name    = "rehab"
	GraphID = "rehab"
)

// Options configure the app. The zero value is the offline quick start: the demo listings,
// the demo user seeded, the specification's defaults.
type Options struct {
	// ListingBaseURL is the Idealista site to read listings from; empty serves the demo
	// listings in process (through the same client).
	ListingBaseURL string
	// Listing tunes the listing client (timeouts, retries, a transport).
	Listing *httpclient.Options
	// NoDemoSeed leaves the demo user unseeded.
	NoDemoSeed bool
	// DemoUser is who the demo profile is seeded for; zero means the dev principal.
	DemoUser store.Who
	// Config is the orchestrator configuration (zero fields mean the specification's defaults);
	// the ORCHESTRATOR__* settings override it.
	Config Config
	// Swept, when set, is called after every sweep of idle sessions (for tests and metrics).
	Swept func(ended int, err error)
}

// App returns the application with the default options.
func App() server.App { return New(Options{}) }

// New returns the application with options.
func New(opts Options) server.App {
	return server.App{
		Name:        Name,
		Pack:        pack.Pack,
		Description: "Rehabify: compra e remodelação de imóveis em Portugal, por conversa (pt-PT).",
		Settings: []server.AppSetting{
			{Key: SettingListingBaseURL, Doc: "the listing site's base URL, e.g. https://www.idealista.pt; the demo listings in process when empty"},
			{Key: SettingModel, Doc: "the agent's model, provider:model or offline; the server's default model when empty"},
			{Key: SettingSummaryModel, Doc: "the session summaries' model, as orchestrator__model; the server's fast model when empty"},
			{Key: "openai_api_key", Doc: "the key of an openai model named above (likewise anthropic_api_key, ...)"},
			{Key: SettingSessionTimeout, Doc: "minutes of inactivity that end a session (30)"},
			{Key: SettingContextBudget, Doc: "the context block's token budget (4000)"},
			{Key: SettingMinLinesPartialRead, Doc: "below this many lines an entry is read whole (20)"},
			{Key: SettingSummaryTriggerCount, Doc: "messages since the last summary that trigger a new one (20)"},
		},
		Build: func(ctx context.Context, d server.AppDeps) (*server.AppParts, error) { return build(ctx, d, opts) },
	}
}

// Parts is what Build assembled, for tests in this package's tree.
type Parts struct {
	DB           *appdb.DB
	Data         *store.Store
	Orchestrator *Orchestrator
	Env          *Env
}

func build(ctx context.Context, d server.AppDeps, opts Options) (*server.AppParts, error) {
	// The settings are checked before anything is opened: a wrong one stops the start with an
	// error that names it.
	set, err := ReadSettings(d.Settings, opts.Config, nil)
	if err != nil {
		return nil, err
	}
	if set.ListingBaseURL != "" {
		opts.ListingBaseURL = set.ListingBaseURL
	}
	db, err := appdb.Open(ctx, Name, &appdb.Options{DataDir: d.DataDir, DatabaseURL: d.DatabaseURL})
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*server.AppParts, error) {
		db.Close()
		return nil, err
	}
	st, err := store.New(ctx, db)
	if err != nil {
		return fail(err)
	}
	var lc *listing.Client
	if opts.ListingBaseURL == "" {
		lc, err = listing.NewDemo()
	} else {
		lc, err = listing.New(opts.ListingBaseURL, opts.Listing)
	}
	if err != nil {
		return fail(fmt.Errorf("rehab: the listing client: %w", err))
	}
	models := d.Models
	env := &Env{
		Data:     st,
		Pipeline: &reno.Pipeline{Listings: lc, Vision: models.For(model.RoleVision)},
		Model:    models.For(model.RoleDefault),
		Summary:  models.For(model.RoleFast),
		Store:    d.Store,
		Config:   set.Config,
	}
	// ORCHESTRATOR__MODEL and ORCHESTRATOR__SUMMARY_MODEL choose the models; otherwise the
	// server's default and fast roles.
	if set.Model != nil {
		env.Model = set.Model
	} else {
		env.Config.Model = models.Spec(model.RoleDefault)
	}
	if set.Summary != nil {
		env.Summary = set.Summary
	} else {
		env.Config.SummaryModel = models.Spec(model.RoleFast)
	}
	orch, err := NewOrchestrator(env, d.Compile)
	if err != nil {
		return fail(err)
	}
	if !opts.NoDemoSeed {
		who := opts.DemoUser
		if who.Tenant == "" {
			who = store.Who{Tenant: server.DevPrincipal.Tenant, User: server.DevPrincipal.User}
		}
		if err := SeedDemo(ctx, st, lc, who); err != nil {
			return fail(err)
		}
	}
	api := &API{Parts: Parts{DB: db, Data: st, Orchestrator: orch, Env: env}, Runs: d.Runs, Logger: d.Logger}
	h := api.Routes(d)
	// Sessions idle past the timeout are ended and summarised in the background as well.
	sw := &Sweeper{O: orch, Env: env, Swept: func(n int, err error) {
		if err != nil && d.Logger != nil {
			d.Logger.Warn("rehab: ending idle sessions", "err", err)
		}
		if opts.Swept != nil {
			opts.Swept(n, err)
		}
	}}
	stopSweep, err := sw.Start()
	if err != nil {
		return fail(err)
	}
	return &server.AppParts{
		Graphs:  []server.AppGraph{{ID: GraphID, Description: "Rehabify: o orquestrador de conversa (pt-PT).", Graph: orch.Graph.Runnable()}},
		Handler: h,
		Close: func() error {
			stopSweep()
			return db.Close()
		},
	}, nil
}
