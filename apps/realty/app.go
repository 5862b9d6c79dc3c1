// Package realty is the skill-based property search agent as a trellis application: skills
// discovered from skills/*/SKILL.md (tool/skills), each skill's tools run in a warm pool of
// isolated workers replaced after every call (tool/worker; the property skill's worker is the Go
// program in propertyworker), every result sanitized and labelled as external data
// (tool/sanitize), a layered memory on the trellis store (preferences.md per skill, scored
// history per skill, episodes per session), and the agent loop as the assistant "realty", whose
// sessions are trellis threads run through AppDeps.Runs.
//
// Routes under /apps/realty/: POST /chat, POST /chat/stream (SSE: token, data, hints, done),
// GET /skills, GET /sessions, GET|DELETE /sessions/{id}, GET /sessions/{id}/title, and the
// offline listings' photos at GET /photos/{zpid}.svg.
//
// With no RealtyAPI key, the app serves its generated listings (realtyapi.Offline) on a loopback
// port in RealtyAPI's wire format and points the property worker's client there.
package realty

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/apps/realty/pack"
	"github.com/trellis-go/trellis/apps/realty/propertyworker"
	"github.com/trellis-go/trellis/apps/realty/realtyapi"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/sanitize"
	"github.com/trellis-go/trellis/tool/skills"
	"github.com/trellis-go/trellis/tool/worker"
)

// Name is the app's name and its assistant's ID.
const Name = "realty"

// SkillProperty is the property skill.
const SkillProperty = propertyworker.Name

//go:embed skills
var builtinSkills embed.FS

// Options configure the app; the zero value is the offline demo.
type Options struct {
	// SkillsDir holds skills/*/SKILL.md; empty means the built-in skills, written to
	// <data dir>/realty/skills at start.
	SkillsDir string
	// RealtyAPIKey and RealtyAPIBase point the property worker at the real RealtyAPI; empty
	// fields take the app's settings realty_api_key and realty_api_base
	// (TRELLIS_APP_REALTY_REALTY_API_KEY, --app-config). An empty key means the offline
	// listings, unless the property skill's own env file sets REALTY_API_KEY.
	RealtyAPIKey, RealtyAPIBase string
	// Runtime runs the workers; nil means subprocesses of this executable.
	Runtime worker.Runtime
	// Secrets are values to hide in tool results besides the built-in shapes and the keys above.
	Secrets []string
	// LLMTimeout bounds one model call; zero means 120 seconds.
	LLMTimeout time.Duration
	// Model calls: FirstToken bounds the wait for a call's first token, connecting included
	// (zero: 8 seconds); transient failures (refused, reset, timed out, HTTP 408/429/5xx) are
	// retried up to ModelAttempts times (zero: 3) with backoff from ModelBackoff (zero: 200 ms),
	// all within ModelBudget (zero: 20 seconds). Then the turn ends with an error that says the
	// model is unavailable: an `error` event, or 503 (502 for a bad answer) with Retry-After
	// (ModelRetryAfter, zero: 10 seconds).
	FirstToken, ModelBudget, ModelBackoff, ModelRetryAfter time.Duration
	ModelAttempts                                          int
	// TimeZone is the user's; nil means the host's.
	TimeZone *time.Location
	// Clock, when set, gives the current time (tests).
	Clock func() time.Time
}

// Realty is a built realty app.
type Realty struct {
	reg   *skills.Registry
	pool  *worker.Pool
	mem   *Memory
	graph *graph.Compiled[react.State]
	model model.Model
	fast  model.Model
	san   *sanitize.Sanitizer
	runs  *server.Runs
	saver interface {
		DeleteThreads(ctx context.Context, threadIDs []string) error
	}
	log     *slog.Logger
	tz      string
	loc     *time.Location
	clock   func() time.Time
	close   []func() error
	outages sync.Map // thread ID → *model.UnavailableError of its latest run
}

// App returns the app: the offline demo data unless the property skill's env file has a key.
func App() server.App { return New(Options{}) }

// New returns the app with options.
func New(o Options) server.App {
	return server.App{
		Name:        Name,
		Pack:        pack.Pack,
		Description: "Realty: a property search agent whose skills run in isolated tool workers, with layered memory.",
		Settings: []server.AppSetting{
			{Key: SettingAPIKey, Doc: "the RealtyAPI key; the offline listings when empty"},
			{Key: SettingAPIBase, Doc: "the RealtyAPI's base URL (its own when empty)"},
			{Key: SettingFirstToken, Doc: "how long a model call may wait for its first token, connecting included (a Go duration; 8s)"},
			{Key: SettingModelBudget, Doc: "the time a model call's retries may take in all (a Go duration; 20s)"},
			{Key: SettingModelAttempts, Doc: "how many times a model call is tried on a transient failure (3)"},
			{Key: SettingModelRetryAfter, Doc: "the Retry-After a client is told when the model is unavailable (a Go duration; 10s)"},
		},
		Build: func(ctx context.Context, d server.AppDeps) (*server.AppParts, error) {
			a, err := build(ctx, d, o)
			if err != nil {
				return nil, err
			}
			return &server.AppParts{
				Graphs:  []server.AppGraph{{ID: Name, Description: "Searches homes for sale, shows a listing's details and remembers the buyer's criteria (offline listings unless a RealtyAPI key is configured).", Graph: a.graph.Runnable()}},
				Handler: a.Handler(d),
				Close:   a.Close,
			}, nil
		},
	}
}

// The app's settings (server.AppSettings keys): TRELLIS_APP_REALTY_<KEY> or --app-config.
const (
	// SettingAPIKey is the RealtyAPI key; without one the app serves its offline listings.
	SettingAPIKey = "realty_api_key"
	// SettingAPIBase is the RealtyAPI's base URL (the worker's default when empty).
	SettingAPIBase = "realty_api_base"
	// The model calls' timeouts and retries (Options.FirstToken, ModelBudget, ModelAttempts,
	// ModelRetryAfter); the connect timeout is the providers' (TRELLIS_MODEL_CONNECT_TIMEOUT).
	SettingFirstToken      = "first_token_timeout"
	SettingModelBudget     = "model_retry_budget"
	SettingModelAttempts   = "model_attempts"
	SettingModelRetryAfter = "model_retry_after"
)

// withSettings fills the options the caller left empty from the app's settings.
func withSettings(o Options, s server.AppSettings) (Options, error) {
	if o.RealtyAPIKey == "" {
		o.RealtyAPIKey = strings.TrimSpace(s.Get(SettingAPIKey))
	}
	if o.RealtyAPIBase == "" {
		o.RealtyAPIBase = strings.TrimRight(strings.TrimSpace(s.Get(SettingAPIBase)), "/")
	}
	for _, d := range []struct {
		key string
		to  *time.Duration
	}{{SettingFirstToken, &o.FirstToken}, {SettingModelBudget, &o.ModelBudget}, {SettingModelRetryAfter, &o.ModelRetryAfter}} {
		v := strings.TrimSpace(s.Get(d.key))
		if v == "" || *d.to != 0 {
			continue
		}
		dur, err := time.ParseDuration(v)
		if err != nil || dur <= 0 {
			return o, fmt.Errorf("realty: setting %s is %q, not a positive duration: write it like 5s or 1500ms (TRELLIS_APP_REALTY_%s)", d.key, v, strings.ToUpper(d.key))
		}
		*d.to = dur
	}
	if v := strings.TrimSpace(s.Get(SettingModelAttempts)); v != "" && o.ModelAttempts == 0 {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10 {
			return o, fmt.Errorf("realty: setting %s is %q: give a number of attempts from 1 to 10 (TRELLIS_APP_REALTY_%s)", SettingModelAttempts, v, strings.ToUpper(SettingModelAttempts))
		}
		o.ModelAttempts = n
	}
	if o.RealtyAPIBase != "" {
		if u, err := url.Parse(o.RealtyAPIBase); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return o, fmt.Errorf("realty: setting %s %q is not an http(s) URL: give the RealtyAPI's base URL, e.g. https://realty-api.example.com (TRELLIS_APP_REALTY_REALTY_API_BASE)", SettingAPIBase, o.RealtyAPIBase)
		}
	}
	return o, nil
}

// build starts the app: the skills' workers, the offline API when no key is set, and the graph.
func build(ctx context.Context, d server.AppDeps, o Options) (a *Realty, err error) {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	if o, err = withSettings(o, d.Settings); err != nil {
		return nil, err
	}
	a = &Realty{log: log, runs: d.Runs, clock: o.Clock, loc: o.TimeZone}
	defer func() {
		if err != nil {
			_ = a.Close()
			a = nil
		}
	}()
	if a.loc == nil {
		a.loc = time.Local
	}
	a.tz = a.loc.String()
	if a.tz == "Local" {
		a.tz, _ = time.Now().Zone()
	}
	if d.Saver != nil {
		a.saver = d.Saver
	}
	dir := d.DataDir
	if dir == "" {
		dir = server.DefaultDataDir
	}
	appDir := filepath.Join(dir, "realty")
	if err := os.MkdirAll(appDir, 0o755); err != nil {
		return nil, fmt.Errorf("realty: %w", err)
	}
	skillsDir := o.SkillsDir
	if skillsDir == "" {
		if skillsDir, err = writeBuiltinSkills(appDir); err != nil {
			return nil, err
		}
	}
	ms, err := skills.Discover(skillsDir)
	if err != nil {
		return nil, err
	}
	// The property worker's environment: the skill's env file, and the API's address and key.
	secrets := append([]string{}, o.Secrets...)
	for i, m := range ms {
		if m.Name != SkillProperty {
			continue
		}
		env, err := skills.ReadEnvFile(m.EnvFile)
		if err != nil {
			return nil, err
		}
		hasKey := false
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			if k == "REALTY_API_KEY" && v != "" {
				hasKey = true
				secrets = append(secrets, v)
			}
		}
		switch {
		case o.RealtyAPIKey != "":
			env = append(env, "REALTY_API_KEY="+o.RealtyAPIKey)
			if o.RealtyAPIBase != "" {
				env = append(env, "REALTY_API_BASE="+o.RealtyAPIBase)
			}
			secrets = append(secrets, o.RealtyAPIKey)
		case !hasKey:
			base, stop, err := serveOffline()
			if err != nil {
				return nil, err
			}
			a.close = append(a.close, stop)
			env = append(env, "REALTY_API_BASE="+base)
		}
		file := filepath.Join(appDir, m.Name+".env")
		if err := os.WriteFile(file, []byte(strings.Join(env, "\n")+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("realty: writing the worker's env file: %w", err)
		}
		ms[i].EnvFile = file
	}
	// One sanitizer for every path out of a worker: tool results, the memory's rows, model
	// requests, events, errors and the app's log lines (the pool's included).
	a.san = sanitize.New(append(secrets, sanitize.ProcessSecrets()...)...)
	a.log = slog.New(&redactingHandler{inner: log.Handler(), san: a.san})
	rt := o.Runtime
	if rt == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("realty: finding this executable to run the workers: %w", err)
		}
		self := WorkerCommand(exe)
		rt = &worker.Subprocess{Command: func(spec worker.Spec) ([]string, error) {
			if len(spec.Command) > 0 {
				return spec.Command, nil
			}
			return self, nil
		}}
	}
	a.pool = worker.NewPool(rt, &worker.Options{Logger: a.log})
	a.close = append(a.close, func() error { return a.pool.StopAll(context.Background()) })
	if a.reg, err = skills.LoadManifests(ctx, ms, a.pool); err != nil {
		return nil, err
	}
	a.model = &guard{inner: model.Resilient(d.Models.For(model.RoleDefault), &model.ResilientOptions{
		FirstToken: o.FirstToken, Attempts: o.ModelAttempts, Budget: o.ModelBudget, Backoff: o.ModelBackoff, RetryAfter: o.ModelRetryAfter}), san: a.san}
	a.fast = &guard{inner: d.Models.For(model.RoleFast), san: a.san}
	if d.Store == nil {
		return nil, errors.New("realty: the server has no store")
	}
	a.mem = &Memory{Store: d.Store, Model: a.fast, Sanitize: a.san.Sanitize}
	tools := make([]tool.Tool, 0, len(a.reg.Tools())+1)
	for _, t := range a.reg.Tools() {
		owner, _ := a.reg.Owner(t.Spec().Name)
		tools = append(tools, &routed{Tool: t, skill: owner, a: a})
	}
	crit, err := a.criteriaTool()
	if err != nil {
		return nil, err
	}
	tools = append(tools, crit)
	timeout := o.LLMTimeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	l := &loop{timeout: timeout, hints: a.hints, outage: a.recordOutage, offline: isOffline(a.model)}
	a.graph, err = react.New(a.model, &react.Options{
		Name:       Name,
		Middleware: []react.Middleware{l.middleware()},
		Tools:      tools,
		Executor:   &tool.ExecutorOptions{Timeout: 45 * time.Second, Filters: []tool.Filter{a.san}, Logger: a.log},
		Context:    a.buildContext,
		MaxTurns:   MaxToolIterations,
		// Reactive compaction: a call refused for its length is retried once on a summary of
		// the older turns, never splitting a tool call from its result.
		Compaction: &conversation.CompactOptions{Model: a.fast, MaxTokens: 24000, KeepTurns: VerbatimTurns},
		Compile:    compileOptions(d.Compile),
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// isOffline reports the offline model (through any wrapper).
func isOffline(m model.Model) bool { return model.IsOffline(m) }

// WorkerCommand is the program the property skill's workers run when its SKILL.md names none:
// a "propertyworker" executable beside exe (what `go build ./apps/realty/cmd/propertyworker`
// writes; it starts in a third of the CPU the server's own executable takes), else exe itself,
// which becomes the worker through worker.ServeIfChild.
func WorkerCommand(exe string) []string {
	small := filepath.Join(filepath.Dir(exe), "propertyworker")
	if st, err := os.Stat(small); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 && small != exe {
		return []string{small}
	}
	return []string{exe}
}

// Close stops the workers and the offline API.
func (a *Realty) Close() error {
	var errs []error
	for i := len(a.close) - 1; i >= 0; i-- {
		errs = append(errs, a.close[i]())
	}
	a.close = nil
	return errors.Join(errs...)
}

// Skills returns the loaded skills.
func (a *Realty) Skills() []skills.Skill { return a.reg.Skills() }

// Pool is the workers' pool.
func (a *Realty) Pool() *worker.Pool { return a.pool }

// Memory is the app's memory.
func (a *Realty) Memory() *Memory { return a.mem }

func writeBuiltinSkills(appDir string) (string, error) {
	dst := filepath.Join(appDir, "skills")
	err := fs.WalkDir(builtinSkills, "skills", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(appDir, filepath.FromSlash(p))
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := builtinSkills.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("realty: writing the built-in skills: %w", err)
	}
	return dst, nil
}

// PhotoBase is where the offline listings' photos are served, under the app's prefix.
const PhotoBase = "/apps/realty/photos"

// serveOffline serves the offline listings in RealtyAPI's wire format on a loopback port.
func serveOffline() (string, func() error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("realty: the offline listings server: %w", err)
	}
	srv := &http.Server{Handler: realtyapi.Handler(realtyapi.Offline(PhotoBase), ""), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), srv.Close, nil
}
