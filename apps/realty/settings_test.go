package realty_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/apps/realty/realtyapi"
	"github.com/trellis-go/trellis/cli"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/servertest"
)

// keyedAPI is a local RealtyAPI serving the offline listings, counting the requests that carry
// key and those that do not.
func keyedAPI(t *testing.T, key string) (hs *httptest.Server, withKey, without *atomic.Int32) {
	withKey, without = new(atomic.Int32), new(atomic.Int32)
	api := realtyapi.Handler(realtyapi.Offline(realty.PhotoBase), key)
	hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(realtyapi.KeyHeader) == key {
			withKey.Add(1)
		} else {
			without.Add(1)
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs, withKey, without
}

// The RealtyAPI's key and base URL are the app's settings, as `trellis serve` reads them from
// TRELLIS_APP_REALTY_<KEY>: a server configured so sends the search to that API with that key.
func TestRealtyAPISettingsTakeEffect(t *testing.T) {
	t.Parallel()
	const key = "settings-key-0123456789"
	hs, withKey, without := keyedAPI(t, key)
	settings, err := server.AppSettingsFromEnv([]string{"realty"}, []string{
		"TRELLIS_APP_REALTY_REALTY_API_KEY=" + key,
		"TRELLIS_APP_REALTY_REALTY_API_BASE=" + hs.URL,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := servertest.Start(t, server.Config{Dev: true, Apps: []server.App{realty.App()}, AppSettings: settings})
	var out realty.ChatResponse
	if code := post(t, s.URL+"/apps/realty/chat", `{"message": "Find homes for sale in Austin, TX"}`, &out); code != 200 {
		t.Fatalf("chat: %d %+v", code, out)
	}
	if withKey.Load() == 0 || without.Load() != 0 {
		t.Fatalf("the configured RealtyAPI got %d requests with the key and %d without", withKey.Load(), without.Load())
	}
	if out.Data == nil || len(out.Data.Items) == 0 {
		t.Fatalf("no listings from the configured API: %+v", out)
	}
}

// A base URL that is not one is refused at start, naming the setting.
func TestRealtyAPIBaseSettingChecked(t *testing.T) {
	t.Parallel()
	_, err := server.New(server.Config{Dev: true, DataDir: t.TempDir(), Apps: []server.App{realty.App()},
		AppSettings: map[string]server.AppSettings{"realty": {"realty_api_key": "k-0123456789", "realty_api_base": "realty.example"}}})
	if err == nil || !strings.Contains(err.Error(), "realty_api_base") || !strings.Contains(err.Error(), "TRELLIS_APP_REALTY_REALTY_API_BASE") {
		t.Fatalf("a bad base URL: %v", err)
	}
}

// The same settings reach the app through `trellis serve` itself: the command's configuration
// (flags, TRELLIS_APP_REALTY_<KEY> read from its environment) is what the app receives, and its
// search goes to the configured API with the configured key.
func TestServeCommandPassesRealtySettings(t *testing.T) {
	const key = "serve-key-0123456789"
	hs, withKey, without := keyedAPI(t, key)
	t.Setenv("TRELLIS_APP_REALTY_REALTY_API_KEY", key)
	t.Setenv("TRELLIS_APP_REALTY_REALTY_API_BASE", hs.URL)
	t.Setenv("TRELLIS_MODEL", "")

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := cli.Program{Apps: []server.App{realty.App()}}.Run(ctx,
			[]string{"serve", "--dev", "--apps", "realty", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-format", "json"},
			nil, pw, io.Discard)
		pw.CloseWithError(err)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	// The start-up summary's first line names the address.
	var url string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "trellis is ready on "); ok {
			url = strings.TrimSpace(u)
			break
		}
	}
	if url == "" {
		t.Fatalf("serve printed no ready line: %v", sc.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	var out realty.ChatResponse
	if code := post(t, url+"/apps/realty/chat", `{"message": "Find homes for sale in Denver, CO"}`, &out); code != 200 {
		t.Fatalf("chat: %d %+v", code, out)
	}
	if withKey.Load() == 0 || without.Load() != 0 {
		t.Fatalf("the API set by TRELLIS_APP_REALTY_REALTY_API_BASE got %d requests with the key and %d without", withKey.Load(), without.Load())
	}
	if out.Data == nil || len(out.Data.Items) == 0 {
		t.Fatalf("no listings from the configured API: %+v", out)
	}
}
