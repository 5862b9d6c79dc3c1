package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/telemetry"
)

// App is an application served by trellis: graphs offered as assistants, HTTP routes of its own
// under /apps/<Name>/, and resources to close. An application reads nothing from the process's
// environment: everything it needs arrives in [AppDeps].
//
//	var App = server.App{Name: "notes", Build: func(ctx context.Context, d server.AppDeps) (*server.AppParts, error) {
//		g, err := buildGraph(d.Models.For(model.RoleFast), d.Compile)
//		if err != nil {
//			return nil, err
//		}
//		return &server.AppParts{Graphs: []server.AppGraph{{ID: "notes", Graph: g.Runnable()}}, Handler: routes(d)}, nil
//	}}
type App struct {
	// Name is lower case (letters, digits, '-'): the prefix of the app's routes, /apps/<Name>/,
	// and of its pages in the web UI, /ui/apps/<Name>. Required.
	Name string
	// Description is one sentence for lists of applications.
	Description string
	// Build opens what the app needs (its tables, its data) and returns its parts. It runs once,
	// when the server starts; ctx ends when start-up gives up. Required.
	Build func(ctx context.Context, deps AppDeps) (*AppParts, error)
	// Pack is the app's domain pack for the offline model (its words, intents, identifiers,
	// references: see offline.Pack). When a role's model is the offline model, the app's
	// AppDeps.Models hold it extended with Pack; real models are left as they are. May be nil.
	Pack *offline.Pack
	// Settings lists the app's own settings (AppDeps.Settings: its external APIs' base URLs and
	// keys), which `trellis serve --help` shows. May be empty.
	Settings []AppSetting
}

// AppDeps is what the server hands an application.
type AppDeps struct {
	// Deps holds the checkpoint saver, the store, and where the server keeps its data (DataDir
	// for SQLite, DatabaseURL for Postgres), for apps that keep tables of their own beside it.
	Deps
	// Models gives a model per role (model.RoleDefault, RoleFast, RoleStrong, RoleVision); every
	// role is the offline model when none is configured, extended with the app's App.Pack. Every
	// role is wrapped with telemetry (telemetry.Model): each call is a span, and a run's token
	// budget (max_tokens) applies to it. An app does not wrap them again.
	Models *model.Roles
	// Compile has Saver and Store set: pass it to the app's graphs' Compile.
	Compile graph.CompileOptions
	// Logger is the server's, with the app's name attached.
	Logger *slog.Logger
	// Authenticate checks a request's credentials (a bearer token or an API key, or ?token= for
	// a WebSocket) as the API does, and returns the principal. In dev mode every request is
	// DevPrincipal.
	Authenticate func(r *http.Request) (Principal, error)
	// Dev is true when the server runs without authentication.
	Dev bool
	// Runs starts, follows, cancels and waits for runs through the same machinery as the
	// Agent Protocol's run routes (queue, leases, limits, budgets, resumable streams, recovery
	// after a crash). Use it from the app's handlers, once the server has started.
	Runs *Runs
	// Guard wraps an app's handler as the API's routes are wrapped: the caller is authenticated
	// (401 otherwise; ?token= is taken for WebSockets), the tenant's request rate limit applies
	// (429 with Retry-After), and the principal is in the request's context (PrincipalFrom).
	Guard func(http.Handler) http.Handler
	// OpenStream counts a long-lived connection (a WebSocket, an SSE stream) against the
	// tenant's limit of open streams: an error (an *APIError 429) when the tenant is at it;
	// otherwise call done when the connection ends.
	OpenStream func(tenant string) (done func(), err error)
	// Name is the app's name (App.Name), for names the app shares with others on the server
	// (the appstream kit's rooms).
	Name string
	// Fanout carries messages on topics to subscribers in every replica (Redis pub/sub or
	// Postgres LISTEN/NOTIFY, in-process on SQLite): the appstream kit's rooms.
	Fanout *Fanout
	// WebSocketOrigins is Config.WebSocketOrigins (--ws-origins): the Origin host patterns
	// allowed besides the request's own host. The appstream kit uses it unless told otherwise.
	WebSocketOrigins []string
	// Settings are the app's own settings (Config.AppSettings[Name]): external APIs' base URLs
	// and keys, read by `trellis serve` from TRELLIS_APP_<APP>_<KEY> and --app-config. Never nil.
	Settings AppSettings
	// RedisURL is the server's Redis, when it has one (Config.RedisURL), for caches an app
	// shares across replicas; empty otherwise.
	RedisURL string
}

// AppParts is what an application's Build returns.
type AppParts struct {
	// Graphs are offered as assistants; each ID is a graph_id, unique across the server.
	Graphs []AppGraph
	// Handler serves the app's own routes, mounted at /apps/<Name>/ with "/apps/<Name>" stripped
	// (a request for /apps/notes/api/v1/items reaches it as /api/v1/items). May be nil.
	Handler http.Handler
	// Close releases what Build opened; the server calls it once when it closes. May be nil.
	Close func() error
}

// AppGraph is one graph of an application.
type AppGraph struct {
	ID          string
	Description string
	// Graph is the compiled graph's Runnable view ([graph.Compiled.Runnable]).
	Graph graph.Runnable
}

// builtApp is an application after Build.
type builtApp struct {
	app   App
	parts AppParts
}

var appNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)

// AppStartTimeout bounds an application's Build (an app loading its data on first start).
const AppStartTimeout = 5 * time.Minute

// buildApps runs every app's Build and registers its graphs as assistants.
func (s *Server) buildApps(deps Deps, now time.Time) error {
	seen := map[string]bool{}
	models := s.cfg.Models
	if models == nil {
		models = model.NewRoles(offline.New(nil), "offline")
	}
	fanout := newFanout(s) // one for every app: its rooms reach all of them
	for name := range s.cfg.AppSettings {
		if !slices.ContainsFunc(s.cfg.Apps, func(a App) bool { return a.Name == name }) {
			return &ConfigError{Field: "AppSettings", Problem: fmt.Sprintf("names app %q, which is not served", name), Hint: "give settings only for the apps the server runs (see GET /apps)"}
		}
	}
	for _, app := range s.cfg.Apps {
		if !appNameRE.MatchString(app.Name) {
			return &ConfigError{Field: "Apps", Problem: fmt.Sprintf("app name %q is not lower-case letters, digits and '-'", app.Name), Hint: "name it like \"vesper\" or \"list-forge\""}
		}
		if seen[app.Name] {
			return &ConfigError{Field: "Apps", Problem: fmt.Sprintf("app %q is listed twice", app.Name), Hint: "list each application once"}
		}
		seen[app.Name] = true
		if app.Build == nil {
			return &ConfigError{Field: "Apps", Problem: fmt.Sprintf("app %q has no Build function", app.Name)}
		}
		if app.Pack != nil {
			if err := app.Pack.Validate(); err != nil {
				return &ConfigError{Field: "Apps", Problem: fmt.Sprintf("app %q: %v", app.Name, err), Hint: "fix the app's offline pack (see offline.Pack)"}
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), AppStartTimeout)
		parts, err := app.Build(ctx, AppDeps{
			Deps: deps, Models: appModels(models, app.Pack), Compile: graph.CompileOptions{Saver: deps.Saver, Store: deps.Store},
			Logger: s.log.With("app", app.Name), Authenticate: s.authenticateRequest, Dev: s.cfg.Dev,
			Runs: &Runs{s: s}, Guard: s.guard, OpenStream: s.openAppStream,
			Name: app.Name, Fanout: fanout, WebSocketOrigins: s.cfg.WebSocketOrigins,
			Settings: settingsOf(s.cfg.AppSettings[app.Name]), RedisURL: s.cfg.RedisURL,
		})
		cancel()
		if err != nil {
			return fmt.Errorf("server: app %q: %w", app.Name, err)
		}
		if parts == nil {
			return fmt.Errorf("server: app %q: Build returned no parts", app.Name)
		}
		if parts.Close != nil {
			closeApp, name := parts.Close, app.Name
			s.closers = append(s.closers, func() {
				if err := closeApp(); err != nil {
					s.log.Warn("closing an app failed", "app", name, "error", err.Error())
				}
			})
		}
		for _, g := range parts.Graphs {
			if err := s.addAssistant(GraphSpec{ID: g.ID, Description: g.Description}, g.Graph, now); err != nil {
				return fmt.Errorf("server: app %q: %w", app.Name, err)
			}
		}
		s.apps = append(s.apps, builtApp{app: app, parts: *parts})
	}
	return nil
}

// appModels are the models an app gets: the offline model extended with the app's pack, and
// every role wrapped with telemetry, so spans and a run's token budget apply to each call.
func appModels(models *model.Roles, pack *offline.Pack) *model.Roles {
	return models.Map(func(m model.Model) model.Model {
		if pack != nil {
			if ext, ok, err := offline.Extend(m, pack); ok && err == nil {
				m = ext
			}
		}
		return telemetry.Model(m, telemetry.ModelInfo{})
	})
}

// addAssistant offers a built graph as the default assistant of its graph ID.
func (s *Server) addAssistant(spec GraphSpec, g graph.Runnable, now time.Time) error {
	if g == nil {
		return fmt.Errorf("graph %q: Build returned nil", spec.ID)
	}
	if !graphIDPattern.MatchString(spec.ID) {
		return &ConfigError{Field: "Graphs", Problem: fmt.Sprintf("graph ID %q has characters other than letters, digits, '-', '_' and '.'", spec.ID)}
	}
	if _, dup := s.byID[spec.ID]; dup {
		return &ConfigError{Field: "Graphs", Problem: fmt.Sprintf("graph ID %q is registered twice", spec.ID), Hint: "give each graph its own ID"}
	}
	a := &Assistant{AssistantID: AssistantID(spec.ID), GraphID: spec.ID, Name: spec.ID,
		Config: map[string]any{}, Context: map[string]any{}, Metadata: map[string]any{"created_by": "system"},
		Version: 1, CreatedAt: now, UpdatedAt: now, graph: wrapGraph(g)}
	if spec.Description != "" {
		d := spec.Description
		a.Description = &d
	}
	s.assistants = append(s.assistants, a)
	s.byID[a.AssistantID] = a
	s.byID[spec.ID] = a
	return nil
}

// mountApps adds each app's handler under /apps/<name>/ and the web UI at / and /ui/.
func (s *Server) mountApps(mux *http.ServeMux) {
	for _, b := range s.apps {
		if b.parts.Handler == nil {
			continue
		}
		prefix := "/apps/" + b.app.Name
		mux.Handle(prefix+"/", s.instrument(prefix+"/", http.StripPrefix(prefix, b.parts.Handler)))
	}
	if s.cfg.UI != nil {
		mux.Handle("GET /{$}", s.cfg.UI)
		mux.Handle("/ui/", s.cfg.UI)
	}
}

// Apps lists the applications the server runs, with the graph IDs each offers.
func (s *Server) Apps() []AppInfo {
	out := make([]AppInfo, 0, len(s.apps))
	for _, b := range s.apps {
		info := AppInfo{Name: b.app.Name, Description: b.app.Description, HasRoutes: b.parts.Handler != nil}
		for _, g := range b.parts.Graphs {
			info.Graphs = append(info.Graphs, g.ID)
		}
		out = append(out, info)
	}
	return out
}

// AppInfo describes a running application (GET /apps).
type AppInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Graphs      []string `json:"graphs"`
	// HasRoutes says whether the app serves routes under /apps/<name>/.
	HasRoutes bool `json:"has_routes"`
}

// authenticateRequest checks a request as the API does; a WebSocket may give its token as
// ?token= since browsers cannot set its headers.
func (s *Server) authenticateRequest(r *http.Request) (Principal, error) {
	if s.cfg.Dev {
		return DevPrincipal, nil
	}
	if r.Header.Get("Authorization") == "" && r.Header.Get("X-Api-Key") == "" {
		if tok := r.URL.Query().Get("token"); tok != "" {
			return s.authenticateToken(r.Context(), tok)
		}
	}
	return s.cfg.Auth.authenticate(r)
}

// guard authenticates an app's request and applies the tenant's rate limit, as authed does for
// the API's routes.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticateRequest(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="trellis"`)
			writeError(w, err)
			return
		}
		if ok, wait := s.limits.allow(p.Tenant); !ok {
			retryAfter(w, wait)
			writeError(w, s.limits.rateError(p.Tenant, wait))
			return
		}
		h.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), p)))
	})
}

func (s *Server) openAppStream(tenant string) (func(), error) {
	return s.limits.openStream(tenant)
}

// storeIndex is the store's vector index: Config.StoreIndex, or the local embedder.
func (c Config) storeIndex() *store.IndexConfig {
	if c.StoreIndex != nil {
		return c.StoreIndex
	}
	e := embed.NewLocal(nil)
	return &store.IndexConfig{Embedder: e, Dims: e.Dims()}
}

// settingsOf returns s, or empty settings when there are none.
func settingsOf(s AppSettings) AppSettings {
	if s == nil {
		return AppSettings{}
	}
	return s
}
