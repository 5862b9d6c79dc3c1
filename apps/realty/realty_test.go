package realty_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/server"
)

func serve(t *testing.T) (*httptest.Server, string) { return serveB(t) }

func serveB(t testing.TB) (*httptest.Server, string) {
	t.Helper()
	s, err := server.New(server.Config{Apps: []server.App{realty.App()}, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	return hs, hs.URL + "/apps/realty"
}

// request sends method to url with body (JSON, when not empty) and key as a bearer token (when
// not empty), and decodes the answer into out when out is set and the answer is a 200 (or any
// answer, with anyStatus). It returns the status.
func request(t testing.TB, key, method, url, body string, out any, anyStatus bool) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && (anyStatus || resp.StatusCode == http.StatusOK) {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %s", err, b)
		}
	}
	return resp.StatusCode
}

func post(t *testing.T, url, body string, out any) int {
	t.Helper()
	return request(t, "", http.MethodPost, url, body, out, true)
}

func get(t *testing.T, url string, out any) int {
	t.Helper()
	return request(t, "", http.MethodGet, url, "", out, false)
}

// events reads an SSE stream's events.
func events(t *testing.T, url, body string) []realty.Event {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var out []realty.Event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var e realty.Event
			if err := json.Unmarshal([]byte(d), &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
	}
	return out
}

func TestOfflineFlow(t *testing.T) {
	t.Parallel()
	hs, base := serve(t)

	// The registry's check: the assistant answers hello through the API.
	var waited map[string]any
	if code := post(t, hs.URL+"/runs/wait", `{"assistant_id":"realty","input":{"messages":[{"role":"user","content":"hello"}]}}`, &waited); code != 200 {
		t.Fatalf("/runs/wait %d %v", code, waited)
	}
	if b, _ := json.Marshal(waited); strings.Contains(string(b), "__error__") {
		t.Fatalf("hello: %s", b)
	}

	var skills []string
	if get(t, base+"/skills", &skills); len(skills) != 1 || skills[0] != "property" {
		t.Errorf("skills %v", skills)
	}

	var r realty.ChatResponse
	if code := post(t, base+"/chat", `{"message": "Find 3 bedroom homes in Denver under $900k"}`, &r); code != 200 {
		t.Fatalf("chat %d %+v", code, r)
	}
	if r.SessionID == "" || r.Data == nil || r.Data.Type != "listings" || len(r.Data.Items) == 0 {
		t.Fatalf("chat %+v", r)
	}
	for _, l := range r.Data.Items {
		if !strings.Contains(l.Address, "Denver") || *l.Beds < 3 || *l.Price > 900000 || l.PhotoURL == "" {
			t.Errorf("listing %+v", l)
		}
	}
	t.Logf("answer: %s", r.Message)

	// Details of the first listing, in the same session, streamed.
	zpid := r.Data.Items[0].ZPID
	evs := events(t, base+"/chat/stream", `{"session_id": "`+r.SessionID+`", "message": "Show me the details of zpid `+zpid+`"}`)
	var kinds []string
	for _, e := range evs {
		if len(kinds) == 0 || kinds[len(kinds)-1] != e.Type {
			kinds = append(kinds, e.Type)
		}
	}
	if got := strings.Join(kinds, ","); got != "token,data,hints,done" {
		t.Fatalf("event order %s: %+v", got, evs)
	}
	var data *realty.Data
	for _, e := range evs {
		if e.Type == "data" {
			data = e.Data
		}
		if e.Type == "hints" && len(e.Hints) != 3 {
			t.Errorf("hints %v", e.Hints)
		}
		if e.Type == "done" && e.SessionID != r.SessionID {
			t.Errorf("done %+v", e)
		}
	}
	if data.Type != "detail" || data.Items[0].ZPID != zpid || data.Items[0].Lat == nil || data.Items[0].YearBuilt == nil {
		t.Errorf("detail %+v", data)
	}

	var ids []string
	get(t, base+"/sessions", &ids)
	if len(ids) != 1 || ids[0] != r.SessionID {
		t.Errorf("sessions %v", ids)
	}
	var hist []realty.WireMessage
	get(t, base+"/sessions/"+r.SessionID, &hist)
	if len(hist) < 6 || hist[0].Role != "user" {
		t.Errorf("history %+v", hist)
	}
	var title struct{ Title string }
	get(t, base+"/sessions/"+r.SessionID+"/title", &title)
	if title.Title == "" {
		t.Errorf("no title")
	}
	t.Logf("title: %s", title.Title)

	// Bad input is a 400 naming the field.
	var e map[string]string
	if code := post(t, base+"/chat", `{"message": "  "}`, &e); code != 400 || !strings.Contains(e["detail"], `"message"`) {
		t.Errorf("empty message: %d %v", code, e)
	}
	if code := post(t, base+"/chat", `{"message": "hi", "session_id": "../x"}`, &e); code != 400 || !strings.Contains(e["detail"], `"session_id"`) {
		t.Errorf("bad session: %d %v", code, e)
	}
	if code := get(t, base+"/sessions/nope", nil); code != 404 {
		t.Errorf("unknown session: %d", code)
	}

	// The session is a thread of the server; deleting the session deletes the thread.
	tid := realty.ThreadID(r.SessionID)
	if code := get(t, hs.URL+"/threads/"+tid, nil); code != 200 {
		t.Fatalf("GET /threads/%s before the delete: %d", tid, code)
	}
	var found []map[string]any
	if post(t, hs.URL+"/threads/search", `{"ids": ["`+tid+`"]}`, &found); len(found) != 1 {
		t.Fatalf("search before the delete: %v", found)
	}
	req, _ := http.NewRequest(http.MethodDelete, base+"/sessions/"+r.SessionID, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("delete %v %v", resp, err)
	}
	resp.Body.Close()
	get(t, base+"/sessions", &ids)
	if len(ids) != 0 {
		t.Errorf("sessions after delete %v", ids)
	}
	if code := get(t, hs.URL+"/threads/"+tid, nil); code != 404 {
		t.Errorf("GET /threads/%s after the delete: %d, want 404", tid, code)
	}
	if post(t, hs.URL+"/threads/search", `{"ids": ["`+tid+`"]}`, &found); len(found) != 0 {
		t.Errorf("search after the delete still finds the thread: %v", found)
	}
	// Deleting it again is a 404: the session is gone.
	req, _ = http.NewRequest(http.MethodDelete, base+"/sessions/"+r.SessionID, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != 404 {
		t.Errorf("second delete: %d, want 404", resp.StatusCode)
	}
}

func TestSavedCriteriaReachALaterSession(t *testing.T) {
	t.Parallel()
	_, base := serve(t)
	var r realty.ChatResponse
	if code := post(t, base+"/chat", `{"message": "Save my search criteria: I want to live in Seattle, at least 2 bedrooms, under $1,200,000"}`, &r); code != 200 {
		t.Fatalf("%d %+v", code, r)
	}
	t.Logf("saved: %s", r.Message)
	var r2 realty.ChatResponse
	if code := post(t, base+"/chat", `{"message": "Find me homes for sale"}`, &r2); code != 200 {
		t.Fatalf("%d %+v", code, r2)
	}
	if r2.SessionID == r.SessionID || r2.Data == nil || len(r2.Data.Items) == 0 {
		t.Fatalf("second session %+v", r2)
	}
	for _, l := range r2.Data.Items {
		if !strings.Contains(l.Address, "Seattle") || *l.Beds < 2 || *l.Price > 1200000 {
			t.Errorf("listing %+v ignores the saved criteria", l)
		}
	}
}

func TestWorkerCommandPrefersTheSmallWorker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe := filepath.Join(dir, "trellis")
	if got := realty.WorkerCommand(exe); len(got) != 1 || got[0] != exe {
		t.Errorf("without a propertyworker beside it: %v, want the executable itself", got)
	}
	small := filepath.Join(dir, "propertyworker")
	if err := os.WriteFile(small, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := realty.WorkerCommand(exe); got[0] != exe {
		t.Errorf("a propertyworker that is not executable was taken: %v", got)
	}
	if err := os.Chmod(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := realty.WorkerCommand(exe); len(got) != 1 || got[0] != small {
		t.Errorf("with an executable propertyworker beside it: %v, want %s", got, small)
	}
}

// Offline, through the server: details by an address as people write it (the street alone),
// by reference, a refinement and a comparison of listings shown earlier.
func TestOfflineUnderstandingThroughTheServer(t *testing.T) {
	t.Parallel()
	_, base := serve(t)
	var r realty.ChatResponse
	if code := post(t, base+"/chat", `{"session_id": "u-1", "message": "Find homes for sale in Denver under $900k"}`, &r); code != 200 || r.Data == nil || len(r.Data.Items) < 3 {
		t.Fatalf("search: %d %+v", code, r)
	}
	items := r.Data.Items
	street, _, _ := strings.Cut(items[1].Address, ",")
	first, _, _ := strings.Cut(items[0].Address, ",")
	if len(r.Hints) != 3 || r.Hints[0] != "Tell me more about "+first {
		t.Errorf("hints after the search: %q", r.Hints)
	}
	var d realty.ChatResponse
	post(t, base+"/chat", `{"session_id": "u-1", "message": "Show me the details of the house at `+street+`"}`, &d)
	if d.Data == nil || d.Data.Type != "detail" || d.Data.Items[0].ZPID != items[1].ZPID {
		t.Errorf("details of %q: %+v", street, d)
	}
	if len(d.Hints) != 3 || !strings.HasPrefix(d.Hints[0], "Compare "+street+" with ") {
		t.Errorf("hints after the details: %q", d.Hints)
	}
	cheapest := items[0]
	for _, l := range items {
		if *l.Price < *cheapest.Price {
			cheapest = l
		}
	}
	post(t, base+"/chat", `{"session_id": "u-1", "message": "tell me about the cheapest one"}`, &d)
	if d.Data == nil || d.Data.Type != "detail" || d.Data.Items[0].ZPID != cheapest.ZPID {
		t.Errorf("the cheapest: %+v, want %s", d.Data, cheapest.ZPID)
	}
	post(t, base+"/chat", `{"session_id": "u-1", "message": "compare the first two"}`, &d)
	if !strings.Contains(d.Message, "Here is how they compare") || !strings.Contains(d.Message, strings.Split(items[0].Address, ",")[0]) || !strings.Contains(d.Message, strings.Split(items[1].Address, ",")[0]) {
		t.Errorf("comparison: %q", d.Message)
	}
	post(t, base+"/chat", `{"session_id": "u-1", "message": "anything cheaper?"}`, &d)
	if d.Data == nil || d.Data.Type != "listings" || len(d.Data.Items) == 0 {
		t.Fatalf("cheaper: %+v", d)
	}
	top := 0.0
	for _, l := range items {
		top = max(top, *l.Price)
	}
	for _, l := range d.Data.Items {
		if *l.Price >= top || !strings.Contains(l.Address, "Denver") {
			t.Errorf("a cheaper listing %+v (the first search's dearest was %.0f)", l, top)
		}
	}
	post(t, base+"/chat", `{"session_id": "u-1", "message": "what about Seattle instead?"}`, &d)
	if d.Data == nil || len(d.Data.Items) == 0 || !strings.Contains(d.Data.Items[0].Address, "Seattle") {
		t.Errorf("another city: %+v", d.Data)
	}
}
