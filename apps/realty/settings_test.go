package realty_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/apps/realty/realtyapi"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/servertest"
)

// The RealtyAPI's key and base URL are the app's settings, as `trellis serve` reads them from
// TRELLIS_APP_REALTY_<KEY>: a server configured so sends the search to that API with that key.
func TestRealtyAPISettingsTakeEffect(t *testing.T) {
	t.Parallel()
	const key = "settings-key-0123456789"
	var withKey, without atomic.Int32
	api := realtyapi.Handler(realtyapi.Offline(realty.PhotoBase), key)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(realtyapi.KeyHeader) == key {
			withKey.Add(1)
		} else {
			without.Add(1)
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
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
