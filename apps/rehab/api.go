package rehab

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/apps/rehab/data"
	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/apps/rehab/orchestrator"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
	"github.com/trellis-go/trellis/server/appstream"
)

// API serves the app's routes.
type API struct {
	Parts
	Runs *server.Runs
	// Logger records the internal errors the user is spared (may be nil).
	Logger *slog.Logger
}

// Routes are the app's HTTP routes (under /apps/rehab), behind the API's authentication: the
// chat's SSE stream is the appstream kit's, which guards it itself (the API's credentials, the
// Origin, the tenant's rate and open streams, heartbeats, write deadlines); d.Guard guards the
// rest.
func (a *API) Routes(d server.AppDeps) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/profile", a.profile)
	mux.HandleFunc("GET /api/v1/portfolio", a.portfolio)
	mux.HandleFunc("GET /api/v1/portfolio/compare", a.compare)
	mux.HandleFunc("GET /api/v1/actions", a.actions)
	mux.HandleFunc("GET /api/v1/conversations", a.conversations)
	mux.HandleFunc("GET /api/v1/conversations/{id}/messages", a.messages)
	mux.HandleFunc("GET /api/v1/conversations/{id}/state", a.state)
	mux.HandleFunc("GET /api/v1/properties/{id}/analysis", a.analysis)
	mux.HandleFunc("GET /api/v1/properties/{id}/report.pdf", a.report)
	mux.HandleFunc("GET /api/v1/listings", func(w http.ResponseWriter, r *http.Request) { appkit.JSON(w, http.StatusOK, listing.DemoList()) })
	root := http.NewServeMux()
	root.Handle("POST "+ChatPath, appstream.New(d, nil).EventStream(a.openChat))
	root.Handle("/", appkit.Guard(d)(mux))
	return root
}

// fail answers an error in the API's shape: data.ErrNotFound 404, anything else as
// appkit.Error does.
func fail(w http.ResponseWriter, err error) {
	if errors.Is(err, data.ErrNotFound) {
		appkit.Fail(w, http.StatusNotFound, err.Error(), "")
		return
	}
	appkit.Error(w, err)
}

// badField answers 400 naming the field that was wrong.
func badField(w http.ResponseWriter, field, problem string) {
	appkit.Fail(w, http.StatusBadRequest, "rehab: field "+strconv.Quote(field)+": "+problem, `send {"message": "...", "conversation_id": "optional"} to the chat; see docs/apps/rehab.md for the other routes`)
}

// caller is the request's principal (the server's guard put it there) and its user, or a 401
// answered.
func (a *API) caller(w http.ResponseWriter, r *http.Request) (server.Principal, data.Who, bool) {
	p, ok := appkit.Caller(w, r)
	return p, data.Who{Tenant: p.Tenant, User: p.User}, ok
}

// ProfileView is GET /api/v1/profile.
type ProfileView struct {
	Name      string                    `json:"name"`
	Location  string                    `json:"location"`
	Summary   string                    `json:"summary"`
	Sections  map[string]map[string]any `json:"sections"`
	Summaries map[string]string         `json:"section_summaries"`
	Memory    data.Memory               `json:"memory"`
	Exists    bool                      `json:"exists"`
}

func (a *API) profile(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	p, err := a.Data.Profile(r.Context(), u)
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, ProfileView{Name: p.Name, Location: p.Location, Summary: kb.MasterSummary(p), Sections: p.Sections,
		Summaries: p.Summaries, Memory: p.Memory, Exists: p.Exists})
}

func (a *API) portfolio(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	archived := false
	if v := r.URL.Query().Get("archived"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			badField(w, "archived", "send true or false")
			return
		}
		archived = b
	}
	items, err := a.Data.Portfolio(r.Context(), u, archived)
	if err != nil {
		fail(w, err)
		return
	}
	if items == nil {
		items = []data.PortfolioItem{}
	}
	appkit.JSON(w, http.StatusOK, items)
}

func (a *API) compare(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	ids := strings.Split(r.URL.Query().Get("ids"), ",")
	if len(ids) < 2 || len(ids) > 3 {
		badField(w, "ids", "send 2 or 3 property ids separated by commas")
		return
	}
	var items []data.PortfolioItem
	for _, id := range ids {
		it, err := a.Data.Item(r.Context(), u, strings.TrimSpace(id))
		if err != nil {
			fail(w, err)
			return
		}
		items = append(items, *it)
	}
	appkit.JSON(w, http.StatusOK, map[string]any{"items": items, "table": orchestrator.CompareTable(items)})
}

func limitParam(w http.ResponseWriter, r *http.Request, def int) (int, bool) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 500 {
		badField(w, "limit", "send a whole number from 1 to 500")
		return 0, false
	}
	return n, true
}

func (a *API) actions(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	n, ok := limitParam(w, r, 50)
	if !ok {
		return
	}
	acts, err := a.Data.Actions(r.Context(), u, n)
	if err != nil {
		fail(w, err)
		return
	}
	if acts == nil {
		acts = []data.Action{}
	}
	appkit.JSON(w, http.StatusOK, acts)
}

func (a *API) conversations(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	n, ok := limitParam(w, r, 20)
	if !ok {
		return
	}
	cs, err := a.Data.Conversations(r.Context(), u, n)
	if err != nil {
		fail(w, err)
		return
	}
	if cs == nil {
		cs = []data.Conversation{}
	}
	appkit.JSON(w, http.StatusOK, cs)
}

func (a *API) messages(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if _, err := a.Data.Conversation(r.Context(), u, id); err != nil {
		fail(w, err)
		return
	}
	ms, err := a.Data.Messages(r.Context(), u, id)
	if err != nil {
		fail(w, err)
		return
	}
	if ms == nil {
		ms = []data.Message{}
	}
	appkit.JSON(w, http.StatusOK, ms)
}

// StateView is GET /api/v1/conversations/{id}/state: what the UI's todo list and focus show.
type StateView struct {
	ConversationID string     `json:"conversation_id"`
	Todos          []kb.Todo  `json:"todos"`
	Focus          *kb.Focus  `json:"current_focus,omitempty"`
	Context        string     `json:"context_block"`
	Pending        *Interrupt `json:"pending_consent,omitempty"`
}

// Interrupt is a question waiting for the user's consent.
type Interrupt struct {
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// threadID is the thread of a user's conversation.
func threadID(u data.Who, conv string) string {
	return server.ThreadIDFor(Name, u.User+"\x00"+conv)
}

func (a *API) state(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if _, err := a.Data.Conversation(r.Context(), u, id); err != nil {
		fail(w, err)
		return
	}
	view := StateView{ConversationID: id, Todos: []kb.Todo{}}
	snap, err := a.Orchestrator.Graph.State(r.Context(), checkpoint.Ref{ThreadID: threadID(u, id)})
	if err == nil && snap != nil {
		if snap.Values.Todos != nil {
			view.Todos = snap.Values.Todos
		}
		view.Focus = snap.Values.CurrentFocus
		for _, m := range snap.Values.Messages {
			if m.Name == kb.ContextRefresh {
				view.Context = m.Content
			}
		}
		for _, in := range snap.Interrupts() {
			view.Pending = &Interrupt{ID: in.ID, Value: in.Value}
		}
	}
	appkit.JSON(w, http.StatusOK, view)
}

func (a *API) analysis(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	it, err := a.Data.Item(r.Context(), u, r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	an, err := a.Data.LatestAnalysis(r.Context(), u, it.PropertyID, "renovation")
	if err != nil {
		fail(w, err)
		return
	}
	rooms, err := a.Data.RoomFeatures(r.Context(), u, it.PropertyID)
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, map[string]any{"item": it, "analysis": an, "rooms": rooms})
}
