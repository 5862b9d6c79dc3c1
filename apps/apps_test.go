package apps_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
	"github.com/trellis-go/trellis/server"
)

// Every registered application starts in one server as `trellis serve --dev` starts them (SQLite,
// the offline model), lists itself under GET /apps, and answers a question through the API.
func TestEveryAppServes(t *testing.T) {
	all := apps.All()
	dir := t.TempDir()
	warehousetest.SeedDataDir(t, dir) // vesper's data, loaded once per machine
	s, err := server.New(server.Config{Apps: all, DataDir: dir, Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()

	resp, err := http.Get(hs.URL + "/apps")
	if err != nil {
		t.Fatal(err)
	}
	var listed []server.AppInfo
	if err := json.NewDecoder(resp.Body).Decode(&listed); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(listed) != len(all) {
		t.Fatalf("GET /apps lists %d apps, want %d", len(listed), len(all))
	}
	for i, a := range listed {
		if a.Name != all[i].Name || len(a.Graphs) == 0 {
			t.Errorf("app %d: %+v", i, a)
		}
		for _, g := range a.Graphs {
			body := `{"assistant_id":"` + g + `","input":{"messages":[{"role":"user","content":"hello"}]}}`
			resp, err := http.Post(hs.URL+"/runs/wait", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || strings.Contains(string(out), "__error__") {
				t.Errorf("app %s, graph %s: %d %s", a.Name, g, resp.StatusCode, out)
			}
		}
	}
}
