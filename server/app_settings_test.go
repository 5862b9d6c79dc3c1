package server

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestAppSettingsFromEnv(t *testing.T) {
	t.Parallel()
	apps := []string{"list", "list-forge", "vesper"}
	got, err := AppSettingsFromEnv(apps, []string{
		"PATH=/bin",
		"TRELLIS_APP_LIST_FORGE_EBAY_CLIENT_ID=abc",
		"TRELLIS_APP_LIST_KEY=1=2",
		"TRELLIS_APP_VESPER_POWERBI_TENANT_ID=t",
		"TRELLIS_MODEL=offline",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got["list-forge"].Get("ebay_client_id") != "abc" || got["list"].Get("key") != "1=2" ||
		got["vesper"].Get("powerbi_tenant_id") != "t" || len(got) != 3 {
		t.Fatalf("settings %v", got)
	}
	_, err = AppSettingsFromEnv(apps, []string{"TRELLIS_APP_VESPR_KEY=x"})
	if err == nil || !strings.Contains(err.Error(), "TRELLIS_APP_VESPR_KEY names no application") || !strings.Contains(err.Error(), "TRELLIS_APP_VESPER_<KEY>") {
		t.Fatalf("a misspelt app: %v", err)
	}
	if v := (AppSettings{}).Or("base_url", "http://127.0.0.1:1"); v != "http://127.0.0.1:1" {
		t.Fatalf("Or = %q", v)
	}
}

// Each app gets its own settings and the server's Redis URL; settings for an app the server does
// not serve are refused at start.
func TestAppsGetTheirSettings(t *testing.T) {
	t.Parallel()
	var seen = map[string]AppSettings{}
	app := func(name string) App {
		return App{Name: name, Build: func(_ context.Context, d AppDeps) (*AppParts, error) {
			seen[name] = d.Settings
			return &AppParts{}, nil
		}}
	}
	s, err := New(Config{Dev: true, DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler),
		Apps:        []App{app("one"), app("two")},
		AppSettings: map[string]AppSettings{"one": {"api_key": "k1"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if seen["one"].Get("api_key") != "k1" || seen["two"] == nil || len(seen["two"]) != 0 {
		t.Fatalf("settings seen %v", seen)
	}
	_, err = New(Config{Dev: true, DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler),
		Apps: []App{app("one")}, AppSettings: map[string]AppSettings{"three": {}}})
	if err == nil || !strings.Contains(err.Error(), `"three"`) {
		t.Fatalf("settings for an app not served: %v", err)
	}
}
