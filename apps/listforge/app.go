// Package listforge is the ListForge application (the specification's Phase 7): items of
// second-hand goods researched by the ResearchGraph (product identification, comparable sales
// from eBay, price bands with confidence, demand signals, missing information) as background
// jobs with live progress, and discussed through the ChatGraph, which answers from the research
// and proposes field updates that are applied only when the user applies them.
//
// With no eBay keys it runs on the generated catalogue (package catalog) served in eBay's wire
// format through the same client, and on the offline model.
package listforge

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/ebay"
	"github.com/trellis-go/trellis/apps/listforge/pack"
	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appstream"
)

// AppName is the app's name: routes under /apps/listforge/.
const AppName = "listforge"

// Graph IDs of the two assistants.
const (
	ResearchGraphID = "listforge-research"
	ChatGraphID     = "listforge-chat"
)

// Options configure New: every setting ListForge has. The zero value is the offline demo; the
// app's settings (server.AppDeps.Settings, TRELLIS_APP_LISTFORGE_*) fill what is left zero.
type Options struct {
	// Ebay, when set, is the real eBay API (keys and base URLs); nil serves the generated
	// catalogue through the same client.
	Ebay *ebay.Config
	// Now is the clock (and the catalogue's day); nil means time.Now.
	Now func() time.Time
	// ResumeDelay is how long a paused research job waits before resuming; zero means 2 s.
	ResumeDelay time.Duration
	// NoDemo leaves new organisations without the demo items.
	NoDemo bool
	// Limits are how many listings each search for comparables asks for; zero values come from
	// the settings search_sold_limit, search_active_limit and refine_sold_limit, then the
	// specification's 20 sold, 10 active and 10 per refine query.
	Limits research.Limits
	// BeforeNode, when set, is called as each research node starts (tests hold a job at a step).
	BeforeNode func(ctx context.Context, node string)
	// Offline is the offline marketplace to serve when Ebay is nil (tests make it fail with
	// FailNext); nil generates the catalogue for today.
	Offline *catalog.Server
}

// App is ListForge with the default options: the offline demo unless its settings name eBay's
// keys.
func App() server.App { return New(Options{}) }

// New is ListForge with options.
func New(o Options) server.App {
	return server.App{
		Name:        AppName,
		Pack:        pack.Pack,
		Description: "Prices second-hand items: research jobs find comparable sales and recommend price bands; chat answers from the research.",
		Settings: []server.AppSetting{
			{Key: "ebay_client_id", Doc: "the eBay API's client ID; with ebay_client_secret the real eBay, else the offline catalog"},
			{Key: "ebay_client_secret", Doc: "the eBay API's client secret"},
			{Key: "ebay_base_url", Doc: "the eBay Browse API's base URL (eBay's own when empty)"},
			{Key: "ebay_token_url", Doc: "the eBay OAuth token URL (eBay's own when empty)"},
			{Key: "ebay_marketplace", Doc: "the eBay marketplace (EBAY_US when empty)"},
			{Key: "search_sold_limit", Doc: "sold comparables a search asks for (10)"},
			{Key: "search_active_limit", Doc: "active comparables a search asks for (10)"},
			{Key: "refine_sold_limit", Doc: "sold comparables a refining search asks for (10)"},
		},
		Build: func(ctx context.Context, d server.AppDeps) (*server.AppParts, error) { return build(ctx, d, o) },
	}
}

// App is a built ListForge.
type app struct {
	d        server.AppDeps
	o        Options
	st       *store.Store
	cat      *catalog.Catalogue
	market   *ebay.Client
	offline  *catalog.Server
	research *research.Graph
	chat     *chatGraph
	jobs     *Jobs
	kit      *appstream.Kit // the WebSockets' admission, heartbeats and rooms
	once     sync.Once
}

func build(ctx context.Context, d server.AppDeps, o Options) (*server.AppParts, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Ebay == nil {
		o.Ebay = ebayFromSettings(d.Settings)
	}
	limits, err := limitsFromSettings(d.Settings, o.Limits)
	if err != nil {
		return nil, err
	}
	db, err := appdb.Open(ctx, AppName, &appdb.Options{DataDir: d.DataDir, DatabaseURL: d.DatabaseURL})
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	a := &app{d: d, o: o, st: st, kit: appstream.New(d, nil)}
	if o.Offline != nil {
		a.cat = o.Offline.Cat
	} else {
		a.cat = catalog.Generate(o.Now())
	}
	if o.Ebay != nil {
		a.market, err = ebay.New(*o.Ebay)
	} else {
		a.offline = o.Offline
		if a.offline == nil {
			a.offline = catalog.NewServer(a.cat)
		}
		a.offline.ClientID, a.offline.ClientSecret = "listforge-offline", "offline-secret"
		a.market, err = ebay.New(ebay.Config{BaseURL: "http://ebay.offline", ClientID: "listforge-offline", ClientSecret: "offline-secret",
			Transport: a.offline.Transport(), Backoff: 50 * time.Millisecond})
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	a.research, err = research.New(research.Config{Store: st, Market: a.market, Vision: d.Models.For(model.RoleVision),
		Model: d.Models.For(model.RoleDefault), Now: o.Now, Compile: d.Compile, Log: d.Logger, Limits: limits, BeforeNode: o.BeforeNode})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("listforge: research graph: %w", err)
	}
	a.jobs = newJobs(st, d.Runs, ResearchGraphID, d.Logger)
	if o.ResumeDelay > 0 {
		a.jobs.ResumeDelay = o.ResumeDelay
	}
	a.chat, err = newChatGraph(a, d.Models.For(model.RoleFast))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("listforge: chat graph: %w", err)
	}
	return &server.AppParts{
		Graphs: []server.AppGraph{
			{ID: ResearchGraphID, Description: "ListForge research: identifies an item, finds comparable sales, recommends price bands (input: itemId).", Graph: a.research.Runnable()},
			{ID: ChatGraphID, Description: "ListForge chat: answers questions about an item from its research, proposes updates, starts research.", Graph: a.chat.Runnable()},
		},
		Handler: a.routes(),
		Close: func() error {
			a.jobs.close()
			return db.Close()
		},
	}, nil
}

// member records the caller's organisation and user, seeds a new organisation's demo items,
// and (once per process) takes up the research jobs an earlier process left unfinished.
func (a *app) member(ctx context.Context, p server.Principal) error {
	a.once.Do(func() {
		if err := a.jobs.FollowUnfinished(context.WithoutCancel(ctx)); err != nil {
			a.d.Logger.Warn("listforge: taking up unfinished research jobs", "err", err)
		}
	})
	created, err := a.st.EnsureMember(ctx, whoOf(p))
	if err != nil || !created || a.o.NoDemo {
		return err
	}
	for _, it := range catalog.DemoItems(a.cat) {
		if _, err := a.st.CreateItem(ctx, whoOf(p), it); err != nil {
			return err
		}
	}
	return nil
}

var _ http.Handler = (*http.ServeMux)(nil)

// ebayFromSettings is the real eBay API when the app's settings give its keys
// (TRELLIS_APP_LISTFORGE_EBAY_CLIENT_ID and _EBAY_CLIENT_SECRET, with _EBAY_BASE_URL,
// _EBAY_TOKEN_URL and _EBAY_MARKETPLACE to change the defaults); nil (the generated
// catalogue) otherwise.
func ebayFromSettings(s server.AppSettings) *ebay.Config {
	id, secret := s.Get("ebay_client_id"), s.Get("ebay_client_secret")
	if id == "" && secret == "" {
		return nil
	}
	return &ebay.Config{ClientID: id, ClientSecret: secret, BaseURL: s.Get("ebay_base_url"),
		TokenURL: s.Get("ebay_token_url"), Marketplace: s.Get("ebay_marketplace")}
}

// limitsFromSettings fills the search limits Options leave at zero from the app's settings
// (search_sold_limit, search_active_limit, refine_sold_limit); a setting that is not a number
// from 1 to 200 is an error naming it.
func limitsFromSettings(s server.AppSettings, l research.Limits) (research.Limits, error) {
	for _, x := range []struct {
		key string
		dst *int
	}{{"search_sold_limit", &l.Sold}, {"search_active_limit", &l.Active}, {"refine_sold_limit", &l.Refine}} {
		v := s.Get(x.key)
		if *x.dst != 0 || v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			return l, fmt.Errorf("listforge: setting %s is %q: give a number of listings from 1 to 200", x.key, v)
		}
		*x.dst = n
	}
	return l, l.Check()
}
