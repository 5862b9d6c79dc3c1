package rehab_test

import (
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/rehab"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server"
)

func TestSettings(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	r, err := rehab.ReadSettings(server.AppSettings{
		"orchestrator__model":                         "offline",
		"orchestrator__summary_model":                 "openai-compatible:llama3.1@http://127.0.0.1:9/v1",
		"orchestrator__session_timeout_minutes":       "45",
		"orchestrator__context_budget_tokens":         "6000",
		"orchestrator__min_lines_for_partial_read":    "10",
		"orchestrator__summary_trigger_message_count": "12",
		"listing_base_url":                            "http://127.0.0.1:9/",
	}, rehab.Config{}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Config
	if c.SessionTimeout() != 45*time.Minute || c.ContextBudgetTokens != 6000 || c.MinLinesForPartialRead != 10 || c.SummaryTrigger() != 12 ||
		c.Model != "offline" || r.ListingBaseURL != "http://127.0.0.1:9" || r.Model == nil || r.Summary == nil {
		t.Fatalf("%+v", r)
	}
	if p, _ := model.IdentityOf(r.Model); p != "offline" {
		t.Errorf("model %s", p)
	}
	// The specification's defaults when nothing is set.
	r, err = rehab.ReadSettings(server.AppSettings{}, rehab.Config{}, getenv)
	if err != nil || r.Config.SessionTimeout() != 30*time.Minute || r.Config.SummaryTrigger() != 20 || r.Model != nil {
		t.Fatalf("defaults: %v %+v", err, r)
	}
	for key, bad := range map[string]string{
		"orchestrator__session_timeout_minutes":       "soon",
		"orchestrator__context_budget_tokens":         "12.5",
		"orchestrator__min_lines_for_partial_read":    "0",
		"orchestrator__summary_trigger_message_count": "-3",
		"orchestrator__model":                         "gpt-4o",
		"orchestrator__summary_model":                 "openai:gpt-4o-mini", // no OPENAI_API_KEY
		"orchestrator__sesion_timeout_minutes":        "30",                 // misspelt
		"listing_base_url":                            "www.idealista.pt",
	} {
		_, err := rehab.ReadSettings(server.AppSettings{key: bad}, rehab.Config{}, getenv)
		if err == nil || !strings.Contains(err.Error(), strings.ToUpper(key)) || !strings.Contains(err.Error(), "TRELLIS_APP_REHAB_"+strings.ToUpper(key)) {
			t.Errorf("%s=%s: %v", key, bad, err)
		}
	}
}

// A wrong setting stops the start, and the error names it.
func TestStartRefusesABadSetting(t *testing.T) {
	t.Parallel()
	_, err := server.New(server.Config{Dev: true, DataDir: t.TempDir(), Apps: []server.App{rehab.App()},
		AppSettings: map[string]server.AppSettings{"rehab": {"orchestrator__summary_trigger_message_count": "many"}}})
	if err == nil || !strings.Contains(err.Error(), "ORCHESTRATOR__SUMMARY_TRIGGER_MESSAGE_COUNT") {
		t.Fatalf("%v", err)
	}
}

// The session timeout comes from the settings; the sweeper ends an idle conversation without a
// new message, and the next conversation starts with its summary.
func TestSweeperEndsIdleSessions(t *testing.T) {
	t.Parallel()
	ended := make(chan int, 100)
	app := rehab.New(rehab.Options{Swept: func(n int, err error) {
		if err == nil && n > 0 {
			ended <- n
		}
	}})
	hs := serve(t, server.Config{Dev: true, Apps: []server.App{app},
		AppSettings: map[string]server.AppSettings{"rehab": {"orchestrator__session_timeout_minutes": "0.03"}}}) // 1.8 s: longer than a turn takes on a loaded machine
	_, _, evs := chat(t, hs.URL, "", `{"message":"Procuro um T2 em Alfama"}`)
	first := convOf(evs)
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the idle session was not ended")
	}
	var convs []struct {
		ID      string     `json:"id"`
		EndedAt *time.Time `json:"ended_at"`
		Summary string     `json:"summary"`
	}
	code := getJSON(t, hs.URL+"/apps/rehab/api/v1/conversations", "", &convs)
	found := false
	for _, c := range convs {
		if c.ID == first {
			found = c.EndedAt != nil && strings.Contains(c.Summary, "Alfama")
		}
	}
	if code != 200 || !found {
		t.Fatalf("%d %+v", code, convs)
	}
	_, _, evs = chat(t, hs.URL, "", `{"message":"olá"}`)
	if next := convOf(evs); next == first || !strings.Contains(answerOf(evs), "Da última vez") {
		t.Errorf("the next conversation (%s after %s) does not start from the summary: %s", next, first, answerOf(evs))
	}
}
