package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/encrypt"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/provider"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
)

func init() {
	register("serve", "serve the assistants over the Agent Protocol (LangGraph API)", runServe)
}

// selectApps keeps the applications named in list (comma-separated names; "all" keeps every one).
func selectApps(all []server.App, list string) ([]server.App, error) {
	if list == "" || list == "all" {
		return all, nil
	}
	var out []server.App
	var known []string
	for _, a := range all {
		known = append(known, a.Name)
	}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, a := range all {
			if a.Name == name {
				out, found = append(out, a), true
			}
		}
		if !found {
			return nil, &UsageError{Msg: fmt.Sprintf("--apps names %q, which is not an app (known: %s, or all)", name, strings.Join(known, ", "))}
		}
	}
	return out, nil
}

// appSettings reads the applications' own settings: the --app-config file, then the
// TRELLIS_APP_<APP>_<KEY> variables over it. It keeps those of the served apps.
func appSettings(all, served []server.App, file string) (map[string]server.AppSettings, error) {
	names := make([]string, len(all))
	for i, a := range all {
		names[i] = a.Name
	}
	out := map[string]server.AppSettings{}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, &UsageError{Msg: fmt.Sprintf("--app-config: %v", err)}
		}
		var byApp map[string]map[string]string
		if err := json.Unmarshal(data, &byApp); err != nil {
			return nil, &UsageError{Msg: fmt.Sprintf(`--app-config %s: %v; write {"<app>": {"<key>": "<value>"}} with string values`, file, err)}
		}
		for app, kv := range byApp {
			if !slices.Contains(names, app) {
				return nil, &UsageError{Msg: fmt.Sprintf("--app-config %s names app %q, which is not an app (known: %s)", file, app, strings.Join(names, ", "))}
			}
			out[app] = server.AppSettings{}
			for k, v := range kv {
				out[app][server.SettingKey(k)] = v
			}
		}
	}
	fromEnv, err := server.AppSettingsFromEnv(names, os.Environ())
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	for app, kv := range fromEnv {
		if out[app] == nil {
			out[app] = server.AppSettings{}
		}
		maps.Copy(out[app], kv)
	}
	for app := range out {
		if !slices.ContainsFunc(served, func(a server.App) bool { return a.Name == app }) {
			delete(out, app)
		}
	}
	return out, nil
}

// models reads the models by role from TRELLIS_MODEL and TRELLIS_MODEL_<ROLE>, once, for every
// application (the offline model when they are unset).
func models() (*model.Roles, error) {
	roles, err := provider.FromEnviron(os.Environ(), nil)
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	return roles, nil
}

// envOr reads TRELLIS_<name>, or def.
func envOr(name, def string) string { return EnvOr(name, def) }

// EnvOr reads the environment variable TRELLIS_<name>, or def when it is not set: the default of
// a flag the environment may give ("-url", TRELLIS_URL). trellis's commands and the apps' own
// programs (apps/*/cmd) use it, so that an app's code never reads the environment itself.
func EnvOr(name, def string) string {
	if v, ok := os.LookupEnv("TRELLIS_" + name); ok {
		return v
	}
	return def
}

func envBool(name string) bool {
	b, _ := strconv.ParseBool(os.Getenv("TRELLIS_" + name))
	return b
}

// parseAPIKeys reads TRELLIS_API_KEYS: entries "KEY=USER@TENANT" or "KEY=USER@TENANT:perm1|perm2",
// separated by commas or newlines.
func parseAPIKeys(s string) (map[string]server.Principal, error) {
	out := map[string]server.Principal{}
	for _, entry := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		key, who, ok := strings.Cut(entry, "=")
		user, rest, ok2 := strings.Cut(who, "@")
		if !ok || !ok2 || key == "" || user == "" {
			return nil, &UsageError{Msg: "TRELLIS_API_KEYS: an entry is not KEY=USER@TENANT[:perm|perm] (the key itself is not shown)"}
		}
		tenant, perms, _ := strings.Cut(rest, ":")
		p := server.Principal{User: user, Tenant: tenant}
		if perms != "" {
			p.Permissions = strings.Split(perms, "|")
		}
		out[key] = p
	}
	return out, nil
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func runServe(ctx context.Context, env Env) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: trellis serve [flags]\n\nServes the Agent Protocol API, the applications and the web UI.\n\nFlags:")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), appSettingsHelp(env.Apps))
	}
	dev := fs.Bool("dev", envBool("DEV"), "no authentication; listen on 127.0.0.1 only (TRELLIS_DEV)")
	addr := fs.String("addr", envOr("ADDR", ""), "address to listen on (TRELLIS_ADDR); default 127.0.0.1:2024")
	dataDir := fs.String("data-dir", envOr("DATA_DIR", server.DefaultDataDir), "directory of the SQLite database (TRELLIS_DATA_DIR)")
	dbURL := fs.String("database-url", envOr("DATABASE_URL", ""), "Postgres URL; SQLite in --data-dir when empty (TRELLIS_DATABASE_URL)")
	redisURL := fs.String("redis-url", envOr("REDIS_URL", ""), "Redis URL for stream events and cancellations between replicas; Postgres LISTEN/NOTIFY when empty (TRELLIS_REDIS_URL)")
	issuer := fs.String("jwt-issuer", envOr("JWT_ISSUER", ""), "required iss of tokens (TRELLIS_JWT_ISSUER)")
	audience := fs.String("jwt-audience", envOr("JWT_AUDIENCE", ""), "required aud of tokens (TRELLIS_JWT_AUDIENCE)")
	jwksURL := fs.String("jwks-url", envOr("JWKS_URL", ""), "JWKS of the identity provider whose RS/PS/ES/EdDSA tokens are accepted (TRELLIS_JWKS_URL)")
	tenantClaim := fs.String("jwt-tenant-claim", envOr("JWT_TENANT_CLAIM", ""), "claim naming a token's tenant, dotted for a nested one; tenant when empty (TRELLIS_JWT_TENANT_CLAIM)")
	userClaim := fs.String("jwt-user-claim", envOr("JWT_USER_CLAIM", ""), "claim naming a token's user; sub when empty (TRELLIS_JWT_USER_CLAIM)")
	permsClaim := fs.String("jwt-permissions-claim", envOr("JWT_PERMISSIONS_CLAIM", ""), "claim listing a token's permissions; permissions (then scope) when empty (TRELLIS_JWT_PERMISSIONS_CLAIM)")
	defaultTenant := fs.String("default-tenant", envOr("DEFAULT_TENANT", ""), "tenant of tokens without a tenant claim; such tokens are refused when empty (TRELLIS_DEFAULT_TENANT)")
	perUser := fs.Bool("per-user", envBool("PER_USER"), "scope threads, runs, crons and store items to their user inside a tenant, for tokens and API keys alike; a key with the permission tenant-wide (KEY=svc@acme:tenant-wide) sees every user's (TRELLIS_PER_USER)")
	maxBody := fs.Int64("max-body-bytes", 0, "largest request body; 10 MiB when 0 (TRELLIS_MAX_BODY_BYTES)")
	maxRuns := fs.Int("max-runs", 0, "runs executing at once; 64 when 0 (TRELLIS_MAX_RUNS)")
	corsOrigins := fs.String("cors-origins", envOr("CORS_ORIGINS", ""), "comma-separated origins whose web pages may call the API (https://app.example.com, https://*.example.com, or *); no CORS when empty (TRELLIS_CORS_ORIGINS)")
	corsHeaders := fs.String("cors-headers", envOr("CORS_HEADERS", ""), "comma-separated request headers such pages may send; the API's own when empty (TRELLIS_CORS_HEADERS)")
	corsCreds := fs.Bool("cors-credentials", envBool("CORS_CREDENTIALS"), "let such pages send cookies and HTTP auth (TRELLIS_CORS_CREDENTIALS)")
	origins := fs.String("ws-origins", envOr("WS_ORIGINS", ""), "comma-separated Origin patterns allowed for WebSockets (TRELLIS_WS_ORIGINS)")
	eventBytes := fs.Int64("event-log-bytes", 0, "bytes the stream event logs of recent runs hold in memory; past it the oldest finished runs' logs go; 64 MiB when 0, no bound when negative (TRELLIS_EVENT_LOG_BYTES)")
	grace := fs.Duration("shutdown-grace", 0, "how long shutdown waits for running runs; 30s when 0 (TRELLIS_SHUTDOWN_GRACE)")
	level := fs.String("log-level", envOr("LOG_LEVEL", "info"), "debug, info, warn or error (TRELLIS_LOG_LEVEL)")
	logFormat := fs.String("log-format", envOr("LOG_FORMAT", ""), "text (readable lines) or json; text when the log goes to a terminal, json otherwise (TRELLIS_LOG_FORMAT)")
	perTenant := fs.Int("max-runs-per-tenant", 0, "runs of one tenant executing at once across the replicas; no bound when 0 (TRELLIS_MAX_RUNS_PER_TENANT)")
	runTimeout := fs.Duration("run-timeout", 0, "a run executing longer fails; none when 0 (TRELLIS_RUN_TIMEOUT)")
	heartbeat := fs.Duration("heartbeat", 0, "how often a worker renews its run's lease; 5s when 0 (TRELLIS_HEARTBEAT)")
	attempts := fs.Int("max-run-attempts", 0, "times a run is started after worker deaths or transient errors; 5 when 0 (TRELLIS_MAX_RUN_ATTEMPTS)")
	rateLimit := fs.Float64("rate-limit", 0, "requests per second per tenant; no limit when 0 (TRELLIS_RATE_LIMIT)")
	rateBurst := fs.Int("rate-burst", 0, "requests a tenant may make at once; twice --rate-limit when 0 (TRELLIS_RATE_BURST)")
	maxStreams := fs.Int("max-streams-per-tenant", 0, "SSE streams and WebSockets one tenant holds open; no limit when 0 (TRELLIS_MAX_STREAMS_PER_TENANT)")
	maxSteps := fs.Int("max-run-steps", 0, "step budget of a run (supersteps); none when 0 (TRELLIS_MAX_RUN_STEPS)")
	maxTokens := fs.Int("max-run-tokens", 0, "token budget of a run; none when 0 (TRELLIS_MAX_RUN_TOKENS)")
	otlp := fs.String("otlp-endpoint", envOr("OTLP_ENDPOINT", ""), "OTLP/HTTP collector for traces; OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT when empty (TRELLIS_OTLP_ENDPOINT)")
	localQueue := fs.Bool("local-queue", envBool("LOCAL_QUEUE"), "keep the run queue in memory instead of River in the database (TRELLIS_LOCAL_QUEUE)")
	encryptStore := fs.Bool("encrypt-store", envBool("ENCRYPT_STORE"), "also seal the long-term store's values with TRELLIS_ENCRYPTION_KEYS (an encrypted store refuses searches by meaning) (TRELLIS_ENCRYPT_STORE)")
	webhookPrivate := fs.Bool("webhook-allow-private", envBool("WEBHOOK_ALLOW_PRIVATE"), "let run webhooks reach loopback, private and link-local addresses (TRELLIS_WEBHOOK_ALLOW_PRIVATE)")
	metricsToken := fs.String("metrics-token", envOr("METRICS_TOKEN", ""), "bearer token GET /metrics requires; none when empty (TRELLIS_METRICS_TOKEN)")
	appList := fs.String("apps", envOr("APPS", "all"), "comma-separated applications to serve, or all (TRELLIS_APPS)")
	appConfig := fs.String("app-config", envOr("APP_CONFIG", ""), `a JSON file of the applications' own settings, {"<app>": {"<key>": "<value>"}}; TRELLIS_APP_<APP>_<KEY> variables override it (TRELLIS_APP_CONFIG)`)
	mapTiles := fs.String("map-tiles", envOr("MAP_TILES", ""), "URL template of the web UI's map tiles, such as https://tile.openstreetmap.org/{z}/{x}/{y}.png; none when empty: markers on a blank map, nothing leaves the machine (TRELLIS_MAP_TILES)")
	mapAttribution := fs.String("map-attribution", envOr("MAP_ATTRIBUTION", ""), "credit shown on the web UI's maps for their tiles (TRELLIS_MAP_ATTRIBUTION)")
	if err := fs.Parse(env.Args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &UsageError{Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: fmt.Sprintf("serve takes no arguments, got %q", fs.Args())}
	}
	for name, dst := range map[string]*int64{"MAX_BODY_BYTES": maxBody, "EVENT_LOG_BYTES": eventBytes} {
		if v := os.Getenv("TRELLIS_" + name); v != "" && *dst == 0 {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return &UsageError{Msg: fmt.Sprintf("TRELLIS_%s is %q, not a number", name, v)}
			}
			*dst = n
		}
	}
	if v := os.Getenv("TRELLIS_MAX_RUNS"); v != "" && *maxRuns == 0 {
		n, err := strconv.Atoi(v)
		if err != nil {
			return &UsageError{Msg: fmt.Sprintf("TRELLIS_MAX_RUNS is %q, not a number", v)}
		}
		*maxRuns = n
	}
	if v := os.Getenv("TRELLIS_RATE_LIMIT"); v != "" && *rateLimit == 0 {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return &UsageError{Msg: fmt.Sprintf("TRELLIS_RATE_LIMIT is %q, not a number", v)}
		}
		*rateLimit = f
	}
	for name, dst := range map[string]*int{"MAX_RUNS_PER_TENANT": perTenant, "MAX_RUN_ATTEMPTS": attempts, "RATE_BURST": rateBurst, "MAX_STREAMS_PER_TENANT": maxStreams, "MAX_RUN_STEPS": maxSteps, "MAX_RUN_TOKENS": maxTokens} {
		if v := os.Getenv("TRELLIS_" + name); v != "" && *dst == 0 {
			n, err := strconv.Atoi(v)
			if err != nil {
				return &UsageError{Msg: fmt.Sprintf("TRELLIS_%s is %q, not a number", name, v)}
			}
			*dst = n
		}
	}
	for name, dst := range map[string]*time.Duration{"SHUTDOWN_GRACE": grace, "RUN_TIMEOUT": runTimeout, "HEARTBEAT": heartbeat} {
		if v := os.Getenv("TRELLIS_" + name); v != "" && *dst == 0 {
			d, err := time.ParseDuration(v)
			if err != nil {
				return &UsageError{Msg: fmt.Sprintf("TRELLIS_%s is %q, not a duration such as 30s", name, v)}
			}
			*dst = d
		}
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return &UsageError{Msg: fmt.Sprintf("--log-level %q: use debug, info, warn or error", *level)}
	}
	logger, err := newLogger(env.Stderr, *logFormat, lvl)
	if err != nil {
		return err
	}
	if why := server.TuneGC(); why != "" {
		logger.Debug("garbage collector", "settings", why)
	}

	if *mapTiles != "" || *mapAttribution != "" {
		m, ok := env.UI.(interface {
			WithMap(tiles, attribution string) (http.Handler, error)
		})
		if !ok {
			return &UsageError{Msg: "--map-tiles and --map-attribution: this program serves no web UI with maps"}
		}
		h, err := m.WithMap(*mapTiles, *mapAttribution)
		if err != nil {
			return &UsageError{Msg: "--map-tiles (TRELLIS_MAP_TILES): " + err.Error()}
		}
		env.UI = h
	}
	apps, err := selectApps(env.Apps, *appList)
	if err != nil {
		return err
	}
	settings, err := appSettings(env.Apps, apps, *appConfig)
	if err != nil {
		return err
	}
	roles, err := models()
	if err != nil {
		return err
	}
	emb, dims, _, err := embed.FromEnv()
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	cfg := server.Config{StoreIndex: &store.IndexConfig{Embedder: emb, Dims: dims}, AppSettings: settings,
		Apps: apps, Models: roles, UI: env.UI, DataDir: *dataDir, WebhookAllowPrivate: *webhookPrivate, MetricsToken: *metricsToken, DatabaseURL: *dbURL, RedisURL: *redisURL, Dev: *dev,
		MaxBodyBytes: *maxBody, EventLogBytes: *eventBytes, MaxConcurrentRuns: *maxRuns, ShutdownGrace: *grace, Logger: logger,
		MaxRunsPerTenant: *perTenant, RunTimeout: *runTimeout, Heartbeat: *heartbeat, MaxRunAttempts: *attempts,
		RateLimit: *rateLimit, RateBurst: *rateBurst, MaxStreamsPerTenant: *maxStreams,
		MaxRunSteps: *maxSteps, MaxRunTokens: *maxTokens, Tracing: server.TracingConfig{Endpoint: *otlp},
	}
	if keys := os.Getenv("TRELLIS_ENCRYPTION_KEYS"); keys != "" {
		kr, err := encrypt.ParseKeys(keys)
		if err != nil {
			return &UsageError{Msg: "TRELLIS_ENCRYPTION_KEYS: " + err.Error()}
		}
		cfg.Encryption = kr
	}
	cfg.EncryptStore = *encryptStore
	if *localQueue {
		cfg.Queue = server.NewLocalQueue(*maxRuns)
	}
	if *corsOrigins != "" {
		cfg.CORS = &server.CORSConfig{AllowOrigins: splitList(*corsOrigins), AllowHeaders: splitList(*corsHeaders), AllowCredentials: *corsCreds}
	}
	if *origins != "" {
		cfg.WebSocketOrigins = strings.Split(*origins, ",")
	}
	if !*dev {
		if secret := os.Getenv("TRELLIS_JWT_SECRET"); secret != "" {
			cfg.Auth.JWTSecret = []byte(secret)
			cfg.Auth.Issuer, cfg.Auth.Audience = *issuer, *audience
		}
		if *jwksURL != "" {
			cfg.Auth.JWKSURL = *jwksURL
			cfg.Auth.Issuer, cfg.Auth.Audience = *issuer, *audience
		}
		cfg.Auth.TenantClaim, cfg.Auth.UserClaim, cfg.Auth.PermissionsClaim = *tenantClaim, *userClaim, *permsClaim
		cfg.Auth.DefaultTenant, cfg.Auth.PerUser = *defaultTenant, *perUser
		keys, err := parseAPIKeys(os.Getenv("TRELLIS_API_KEYS"))
		if err != nil {
			return err
		}
		cfg.Auth.APIKeys = keys
	}
	listen := *addr
	if listen == "" {
		listen = "127.0.0.1:2024"
	}
	if *dev {
		host, _, err := net.SplitHostPort(listen)
		if err != nil {
			return &UsageError{Msg: fmt.Sprintf("--addr %q: %v", listen, err)}
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return &UsageError{Msg: fmt.Sprintf("--dev has no authentication and listens on loopback only; --addr %q is not a loopback address", listen)}
		}
	}
	s, err := server.New(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another server running? choose another --addr)", listen, err)
	}
	where := "SQLite in " + *dataDir
	if *dbURL != "" {
		where = "Postgres (" + redactURL(*dbURL) + ")"
	}
	fmt.Fprint(env.Stdout, startSummary(summary{URL: "http://" + ln.Addr().String(), Dev: *dev, Database: where,
		Model: roles.Spec(model.RoleDefault), Fast: roles.Spec(model.RoleFast), Apps: s.Apps(), UI: env.UI != nil}))
	return s.Serve(ctx, ln)
}

// localGraph builds the graph id of the program's applications in this process, on an
// in-memory saver and store. Applications are built in order until one offers it; the others
// are closed again.
func localGraph(ctx context.Context, env Env, id string) (graph.Runnable, error) {
	roles, err := models()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, app := range env.Apps {
		st, err := memstore.New(nil)
		if err != nil {
			return nil, err
		}
		saver := checkpoint.NewMemorySaver()
		parts, err := app.Build(ctx, server.AppDeps{
			Deps: server.Deps{Saver: saver, Store: st, DataDir: server.DefaultDataDir}, Models: roles,
			Compile: graph.CompileOptions{Saver: saver, Store: st}, Logger: slog.New(slog.DiscardHandler), Dev: true,
			Authenticate: func(*http.Request) (server.Principal, error) { return server.DevPrincipal, nil },
		})
		if err != nil {
			return nil, fmt.Errorf("app %q: %w", app.Name, err)
		}
		for _, g := range parts.Graphs {
			ids = append(ids, g.ID)
			if g.ID == id || server.AssistantID(g.ID) == id {
				return g.Graph, nil
			}
		}
		if parts.Close != nil {
			parts.Close()
		}
	}
	return nil, &UsageError{Msg: fmt.Sprintf("unknown assistant %q (known: %s)", id, strings.Join(ids, ", "))}
}
