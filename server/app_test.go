package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/model"
)

// notesApp is a small application: one graph and routes that answer with the path they got and
// the principal the request authenticated as.
func notesApp(closed *atomic.Int32, got *AppDeps) App {
	return App{Name: "notes", Description: "Notes.", Build: func(ctx context.Context, d AppDeps) (*AppParts, error) {
		if got != nil {
			*got = d
		}
		g, err := buildFlow(d.Deps)
		if err != nil {
			return nil, err
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET /api/v1/whoami", func(w http.ResponseWriter, r *http.Request) {
			p, err := d.Authenticate(r)
			if err != nil {
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
			fmt.Fprintf(w, "%s %s@%s", r.URL.Path, p.User, p.Tenant)
		})
		return &AppParts{Graphs: []AppGraph{{ID: "notes", Description: "take notes", Graph: g}}, Handler: mux,
			Close: func() error { closed.Add(1); return nil }}, nil
	}}
}

func get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// An application's graphs become assistants, its routes are served under /apps/<name>/ with the
// prefix stripped and the API's authentication available, GET /apps lists it, and Close closes it.
func TestAppContract(t *testing.T) {
	t.Parallel()
	var closed atomic.Int32
	var deps AppDeps
	key := "notes-key-0123456789abcdef"
	cfg := Config{Apps: []App{notesApp(&closed, &deps)}, DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler),
		Auth: AuthConfig{APIKeys: map[string]Principal{key: {User: "ann", Tenant: "acme", Permissions: []string{"*"}}}},
		UI:   http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ui "+r.URL.Path) })}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()

	if deps.Models == nil || deps.Saver == nil || deps.Store == nil || deps.Compile.Saver == nil || deps.Logger == nil || deps.DataDir == "" {
		t.Fatalf("the app got incomplete deps: %+v", deps)
	}
	if !model.IsOffline(deps.Models.For(model.RoleVision)) {
		t.Errorf("with no models configured, the vision role is %T, want the offline model", deps.Models.For(model.RoleVision))
	}
	if code, body := get(t, hs.URL+"/apps/notes/api/v1/whoami", "X-Api-Key", key); code != 200 || body != "/api/v1/whoami ann@acme" {
		t.Errorf("app route: %d %q", code, body)
	}
	if code, _ := get(t, hs.URL+"/apps/notes/api/v1/whoami"); code != 401 {
		t.Errorf("app route without credentials: %d, want 401", code)
	}
	code, body := get(t, hs.URL+"/apps", "X-Api-Key", key)
	var apps []AppInfo
	if code != 200 || json.Unmarshal([]byte(body), &apps) != nil || len(apps) != 1 || apps[0].Name != "notes" || apps[0].Graphs[0] != "notes" || !apps[0].HasRoutes {
		t.Errorf("GET /apps: %d %s", code, body)
	}
	code, body = get(t, hs.URL+"/assistants/notes", "X-Api-Key", key)
	if code != 200 || !strings.Contains(body, `"graph_id":"notes"`) || !strings.Contains(body, "take notes") {
		t.Errorf("the app's graph is not an assistant: %d %s", code, body)
	}
	for _, p := range []string{"/", "/ui/", "/ui/apps/notes"} {
		if code, body := get(t, hs.URL+p); code != 200 || body != "ui "+p {
			t.Errorf("UI at %s: %d %q", p, code, body)
		}
	}
	if code, body := get(t, hs.URL+"/nope", "X-Api-Key", key); code != 404 || !strings.Contains(body, "no route") {
		t.Errorf("an unknown route: %d %q", code, body)
	}
	s.Close()
	if n := closed.Load(); n != 1 {
		t.Errorf("the app was closed %d times, want once", n)
	}
}

// A bad application is refused at start with what is wrong.
func TestAppContractErrors(t *testing.T) {
	t.Parallel()
	ok := func(ctx context.Context, d AppDeps) (*AppParts, error) {
		g, err := buildFlow(d.Deps)
		return &AppParts{Graphs: []AppGraph{{ID: "flow", Graph: g}}}, err
	}
	for _, tc := range []struct {
		name string
		apps []App
		want string
	}{
		{"bad name", []App{{Name: "Notes App", Build: ok}}, "lower-case"},
		{"twice", []App{{Name: "a", Build: ok}, {Name: "a", Build: ok}}, "listed twice"},
		{"no build", []App{{Name: "a"}}, "no Build"},
		{"build fails", []App{{Name: "a", Build: func(context.Context, AppDeps) (*AppParts, error) {
			return nil, errors.New("the data directory is read-only")
		}}}, `app "a": the data directory is read-only`},
		{"graph ID taken", []App{{Name: "a", Build: ok}, {Name: "b", Build: ok}}, `"flow" is registered twice`},
		{"nil graph", []App{{Name: "a", Build: func(context.Context, AppDeps) (*AppParts, error) {
			return &AppParts{Graphs: []AppGraph{{ID: "x"}}}, nil
		}}}, "Build returned nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Apps: tc.apps, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler), ShutdownGrace: time.Second})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}
