package rehab_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/server"
)

// The listing site's base URL is the app's setting listing_base_url, as `trellis serve` reads
// it from TRELLIS_APP_REHAB_LISTING_BASE_URL: a server configured so reads its listings from
// that site (here a local one serving the demo listings; the demo seed reads them at start).
func TestListingSiteSettingTakesEffect(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var paths []string
	demo := listing.Demo()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		demo.ServeHTTP(w, r)
	}))
	t.Cleanup(site.Close)
	settings, err := server.AppSettingsFromEnv([]string{"rehab"}, []string{"TRELLIS_APP_REHAB_LISTING_BASE_URL=" + site.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, server.Config{Dev: true, AppSettings: settings})
	mu.Lock()
	defer mu.Unlock()
	listings := 0
	for _, p := range paths {
		if strings.HasPrefix(p, "/imovel/") {
			listings++
		}
	}
	if listings == 0 {
		t.Fatalf("the configured listing site was not read: requests %q", paths)
	}
}
