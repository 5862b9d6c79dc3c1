package listforge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
)

// API paths under the app's prefix (/apps/listforge).
const (
	APIPrefix    = "/api/v1"
	ChatWSPath   = "/ws/chat"
	ResearchPath = "/ws/research"
)

func (a *app) routes() http.Handler {
	mux := http.NewServeMux()
	h := func(pattern string, fn func(w http.ResponseWriter, r *http.Request, p server.Principal)) {
		mux.Handle(pattern, appkit.Guard(a.d)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := server.PrincipalFrom(r.Context())
			if !ok || p.Tenant == "" {
				appkit.Fail(w, http.StatusUnauthorized, "listforge: no organisation in the credentials", "send a token or API key of your organisation")
				return
			}
			if err := a.member(r.Context(), p); err != nil {
				fail(w, err)
				return
			}
			fn(w, r, p)
		})))
	}
	h("GET "+APIPrefix+"/items", a.listItems)
	h("POST "+APIPrefix+"/items", a.createItem)
	h("GET "+APIPrefix+"/items/{itemId}", a.getItem)
	h("PATCH "+APIPrefix+"/items/{itemId}", a.patchItem)
	h("DELETE "+APIPrefix+"/items/{itemId}", a.deleteItem)
	h("GET "+APIPrefix+"/items/{itemId}/audit", a.audit)
	h("GET "+APIPrefix+"/items/{itemId}/evidence", a.evidence)
	h("POST "+APIPrefix+"/items/{itemId}/research", a.startResearch)
	h("GET "+APIPrefix+"/items/{itemId}/research/latest", a.latestResearch)
	h("GET "+APIPrefix+"/items/{itemId}/research/history", a.researchHistory)
	h("GET "+APIPrefix+"/items/{itemId}/research/jobs", a.listJobs)
	h("GET "+APIPrefix+"/items/{itemId}/research/jobs/{jobId}", a.jobStatus)
	h("GET "+APIPrefix+"/items/{itemId}/chat/sessions", a.listSessions)
	h("POST "+APIPrefix+"/items/{itemId}/chat/sessions", a.createSession)
	h("GET "+APIPrefix+"/items/{itemId}/chat/sessions/{sessionId}/messages", a.sessionMessages)
	mux.Handle("GET "+ChatWSPath, a.socket(a.chatSocket)) // on the appstream kit, which guards it
	mux.Handle("GET "+ResearchPath, a.socket(a.researchSocket))
	return mux
}

// fail answers an error in the API's shape (detail, hint): 400 naming the field, 404, 409, or
// 500.
func fail(w http.ResponseWriter, err error) {
	var fe *store.FieldError
	var ae *server.APIError
	switch {
	case errors.As(err, &fe):
		appkit.Fail(w, http.StatusBadRequest, err.Error(), "send "+fe.Field+" as "+fe.Hint)
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrNotYours):
		appkit.Fail(w, http.StatusNotFound, err.Error(), "check the ID; only your organisation's records are visible")
	case errors.Is(err, store.ErrAlreadyApplied):
		appkit.Fail(w, http.StatusConflict, err.Error(), "")
	case errors.As(err, &ae):
		appkit.Error(w, ae)
	default:
		appkit.Fail(w, http.StatusInternalServerError, "listforge: "+err.Error(), "")
	}
}

// MaxBody is the largest request body the API reads: 1 MiB.
const MaxBody = 1 << 20

// errTooLarge is a body over MaxBody: the API answers 413 naming the limit.
var errTooLarge = &server.APIError{Status: http.StatusRequestEntityTooLarge,
	Message: fmt.Sprintf("listforge: the request body is over the limit of 1 MiB (%d bytes)", MaxBody),
	Hint:    "send a smaller body: photos go in media as URLs, not inline files"}

// readBody reads a request body of at most MaxBody bytes; a larger one is errTooLarge.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, &store.FieldError{Field: "body", Hint: "a JSON object of at most 1 MiB (" + err.Error() + ")"}
	}
	return body, nil
}

// decode reads a JSON body into dst, naming what is wrong.
func decode(w http.ResponseWriter, r *http.Request, dst any) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &store.FieldError{Field: te.Field, Hint: "a JSON " + te.Type.String()}
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return &store.FieldError{Field: strings.Trim(f, `"`), Hint: "nothing: it is not a field of this request"}
		}
		return &store.FieldError{Field: "body", Hint: "valid JSON (" + err.Error() + ")"}
	}
	return nil
}

func pageOf(r *http.Request) (int, int, error) {
	q := r.URL.Query()
	page, limit := 1, 20
	var err error
	if v := q.Get("page"); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 1 {
			return 0, 0, &store.FieldError{Field: "page", Hint: "a page number from 1"}
		}
	}
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > 100 {
			return 0, 0, &store.FieldError{Field: "limit", Hint: "a page size from 1 to 100"}
		}
	}
	return page, limit, nil
}

func (a *app) listItems(w http.ResponseWriter, r *http.Request, p server.Principal) {
	page, limit, err := pageOf(r)
	if err != nil {
		fail(w, err)
		return
	}
	out, err := a.st.ListItems(r.Context(), whoOf(p), page, limit)
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, out)
}

// itemInput is what POST /items takes.
type itemInput struct {
	Title           string         `json:"title"`
	Description     string         `json:"description"`
	Condition       string         `json:"condition"`
	Attributes      map[string]any `json:"attributes"`
	Media           []store.Media  `json:"media"`
	DefaultPrice    *float64       `json:"defaultPrice"`
	Currency        string         `json:"currency"`
	LifecycleStatus string         `json:"lifecycleStatus"`
	AIReviewState   string         `json:"aiReviewState"`
}

func (a *app) createItem(w http.ResponseWriter, r *http.Request, p server.Principal) {
	var in itemInput
	if err := decode(w, r, &in); err != nil {
		fail(w, err)
		return
	}
	it, err := a.st.CreateItem(r.Context(), whoOf(p), store.Item{Title: in.Title, Description: in.Description, Condition: in.Condition,
		Attributes: in.Attributes, Media: in.Media, DefaultPrice: in.DefaultPrice, Currency: in.Currency, LifecycleStatus: in.LifecycleStatus,
		AIReviewState: in.AIReviewState})
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusCreated, it)
}

func (a *app) getItem(w http.ResponseWriter, r *http.Request, p server.Principal) {
	it, err := a.st.GetItem(r.Context(), whoOf(p), r.PathValue("itemId"))
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, it)
}

// patchItem applies each field given as an audited single-field update; "reason" is recorded
// with them.
func (a *app) patchItem(w http.ResponseWriter, r *http.Request, p server.Principal) {
	var in map[string]any
	body, err := readBody(w, r)
	if err != nil {
		fail(w, err)
		return
	}
	if err := json.Unmarshal(body, &in); err != nil {
		fail(w, &store.FieldError{Field: "body", Hint: `a JSON object of fields to change, e.g. {"defaultPrice": 120, "reason": "..."}`})
		return
	}
	reason, _ := in["reason"].(string)
	delete(in, "reason")
	for k := range in {
		known := false
		for _, f := range store.Fields {
			known = known || f == k
		}
		if !known {
			fail(w, &store.FieldError{Field: k, Hint: "one of the item's fields: " + strings.Join(store.Fields, ", ")})
			return
		}
	}
	if reason == "" {
		reason = "edited by " + p.User
	}
	it, err := a.st.UpdateFields(r.Context(), whoOf(p), r.PathValue("itemId"), in, reason)
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, it)
}

func (a *app) deleteItem(w http.ResponseWriter, r *http.Request, p server.Principal) {
	unfinished, err := a.st.DeleteItem(r.Context(), whoOf(p), r.PathValue("itemId"))
	if err != nil {
		fail(w, err)
		return
	}
	// The rows are gone; the item's running and queued jobs are stopped (their writes would
	// find no item anyway) and whoever follows them is told.
	for _, j := range unfinished {
		a.jobs.Cancelled(r.Context(), p, j)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *app) audit(w http.ResponseWriter, r *http.Request, p server.Principal) {
	if _, err := a.st.GetItem(r.Context(), whoOf(p), r.PathValue("itemId")); err != nil {
		fail(w, err)
		return
	}
	out, err := a.st.AuditTrail(r.Context(), whoOf(p), r.PathValue("itemId"))
	if err != nil {
		fail(w, err)
		return
	}
	if out == nil {
		out = []store.Audit{}
	}
	appkit.JSON(w, http.StatusOK, out)
}

func (a *app) evidence(w http.ResponseWriter, r *http.Request, p server.Principal) {
	if _, err := a.st.GetItem(r.Context(), whoOf(p), r.PathValue("itemId")); err != nil {
		fail(w, err)
		return
	}
	b, err := a.st.LatestEvidence(r.Context(), whoOf(p), r.PathValue("itemId"), 100)
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, b)
}

// startResearchInput is the specification's StartResearchDto.
type startResearchInput struct {
	Type     string `json:"type"`
	Priority string `json:"priority"`
}

func (a *app) startResearch(w http.ResponseWriter, r *http.Request, p server.Principal) {
	var in startResearchInput
	if err := decode(w, r, &in); err != nil {
		fail(w, err)
		return
	}
	job, err := a.jobs.Start(r.Context(), p, r.PathValue("itemId"), in.Type, in.Priority)
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusAccepted, map[string]string{"jobId": job.ID})
}

func (a *app) latestResearch(w http.ResponseWriter, r *http.Request, p server.Principal) {
	if _, err := a.st.GetItem(r.Context(), whoOf(p), r.PathValue("itemId")); err != nil {
		fail(w, err)
		return
	}
	res, err := a.st.LatestResearch(r.Context(), whoOf(p), r.PathValue("itemId"))
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, res) // null when there is none yet
}

func (a *app) researchHistory(w http.ResponseWriter, r *http.Request, p server.Principal) {
	page, limit, err := pageOf(r)
	if err != nil {
		fail(w, err)
		return
	}
	if _, err := a.st.GetItem(r.Context(), whoOf(p), r.PathValue("itemId")); err != nil {
		fail(w, err)
		return
	}
	out, err := a.st.ResearchHistory(r.Context(), whoOf(p), r.PathValue("itemId"), page, limit)
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, out)
}

func (a *app) job(r *http.Request, p server.Principal, itemID, jobID string) (*store.ResearchRun, error) {
	job, err := a.st.GetRun(r.Context(), whoOf(p), jobID)
	if err != nil {
		return nil, err
	}
	if itemID != "" && job.ItemID != itemID {
		return nil, fmt.Errorf("research job %s of item %s: %w", jobID, itemID, store.ErrNotFound)
	}
	if !job.Done() {
		a.jobs.Follow(p, job.ID)
	}
	return job, nil
}

func (a *app) jobStatus(w http.ResponseWriter, r *http.Request, p server.Principal) {
	job, err := a.job(r, p, r.PathValue("itemId"), r.PathValue("jobId"))
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, job)
}

func (a *app) createSession(w http.ResponseWriter, r *http.Request, p server.Principal) {
	ss, err := a.st.CreateSession(r.Context(), whoOf(p), r.PathValue("itemId"))
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusCreated, map[string]any{"sessionId": ss.ID, "session": ss})
}

func (a *app) sessionMessages(w http.ResponseWriter, r *http.Request, p server.Principal) {
	page, limit, err := pageOf(r)
	if err != nil {
		fail(w, err)
		return
	}
	ss, err := a.st.GetSession(r.Context(), whoOf(p), r.PathValue("sessionId"))
	if err == nil && ss.ItemID != r.PathValue("itemId") {
		err = fmt.Errorf("session %s of item %s: %w", ss.ID, r.PathValue("itemId"), store.ErrNotFound)
	}
	if err != nil {
		fail(w, err)
		return
	}
	out, err := a.st.Messages(r.Context(), whoOf(p), ss.ID, page, limit)
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, out)
}

// Lists the web page needs to come back to an item: the caller's chat sessions and the item's
// research jobs.

// listSessions answers GET /items/{itemId}/chat/sessions: {items} of the caller's sessions
// about the item, the most recently used first.
func (a *app) listSessions(w http.ResponseWriter, r *http.Request, p server.Principal) {
	out, err := a.st.ListSessions(r.Context(), whoOf(p), r.PathValue("itemId"))
	if err != nil {
		fail(w, err)
		return
	}
	appkit.JSON(w, http.StatusOK, map[string]any{"items": out})
}

// listJobs answers GET /items/{itemId}/research/jobs?limit=: {items} of the item's research
// jobs, newest first (20 unless limit says otherwise, at most 100). A job not finished is
// followed, as GET .../jobs/{jobId} does.
func (a *app) listJobs(w http.ResponseWriter, r *http.Request, p server.Principal) {
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			fail(w, &store.FieldError{Field: "limit", Hint: "a number of jobs from 1 to 100"})
			return
		}
		limit = n
	}
	out, err := a.st.ListRuns(r.Context(), whoOf(p), r.PathValue("itemId"), limit)
	if err != nil {
		fail(w, err)
		return
	}
	for _, j := range out {
		if !j.Done() {
			a.jobs.Follow(p, j.ID)
		}
	}
	appkit.JSON(w, http.StatusOK, map[string]any{"items": out})
}
