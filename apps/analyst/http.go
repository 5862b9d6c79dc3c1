package analyst

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
)

// Handler serves the analyst's routes under /apps/analyst, behind the API's authentication
// (the caller is the authenticated principal; there is no parameter to act as another user):
//
//	GET /api/v1/reports             the caller's saved reports, newest first
//	GET /api/v1/reports/{id}        one of them, with its content and chunk count
//	GET /api/v1/reports/{id}/pdf    one of them as a PDF
//	GET /api/v1/reports/{id}/docx   one of them as a Word document
//	GET /api/v1/search?q=&top_k=&project=&document_type=   rag_tool over the knowledge base
//	GET /api/v1/memory              the caller's four memory namespaces
func (a *Analyst) Handler(d server.AppDeps) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/reports", func(w http.ResponseWriter, r *http.Request) {
		p, ok := appkit.Caller(w, r)
		if !ok {
			return
		}
		list, err := a.Reports(r.Context(), p.Tenant, p.User)
		if err != nil {
			appkit.Error(w, err)
			return
		}
		appkit.JSON(w, http.StatusOK, list)
	})
	mux.HandleFunc("GET /api/v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		rep, ok := a.callersReport(w, r)
		if !ok {
			return
		}
		appkit.JSON(w, http.StatusOK, rep)
	})
	mux.HandleFunc("GET /api/v1/reports/{id}/pdf", func(w http.ResponseWriter, r *http.Request) {
		rep, ok := a.callersReport(w, r)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="report-`+rep.ID+`.pdf"`)
		_, _ = w.Write(ReportPDF(rep))
	})
	mux.HandleFunc("GET /api/v1/reports/{id}/docx", func(w http.ResponseWriter, r *http.Request) {
		rep, ok := a.callersReport(w, r)
		if !ok {
			return
		}
		doc, err := ReportDOCX(rep)
		if err != nil {
			appkit.Error(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
		w.Header().Set("Content-Disposition", `attachment; filename="report-`+rep.ID+`.docx"`)
		_, _ = w.Write(doc)
	})
	mux.HandleFunc("GET /api/v1/search", func(w http.ResponseWriter, r *http.Request) {
		p, ok := appkit.Caller(w, r)
		if !ok {
			return
		}
		q := r.URL.Query()
		k := 5
		if s := q.Get("top_k"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 50 {
				appkit.Fail(w, http.StatusBadRequest, "top_k "+strconv.Quote(s)+" is not a number from 1 to 50", "send ?top_k= from 1 to 50, or leave it out for 5")
				return
			}
			k = n
		}
		filter := map[string]any{}
		for _, f := range []string{"project", "document_type"} {
			if v := q.Get(f); v != "" {
				filter[f] = v
			}
		}
		if err := a.kb.EnsureCorpus(r.Context(), p.Tenant); err != nil {
			appkit.Error(w, err)
			return
		}
		res, err := a.kb.Search(r.Context(), p.Tenant, q.Get("q"), k, filter, 0)
		if errors.Is(err, ErrBadArgs) {
			appkit.Fail(w, http.StatusBadRequest, "q is required", "send ?q=<what to search for>")
			return
		}
		if err != nil {
			appkit.Error(w, err)
			return
		}
		if res == nil {
			res = []Chunk{}
		}
		appkit.JSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("GET /api/v1/memory", func(w http.ResponseWriter, r *http.Request) {
		p, ok := appkit.Caller(w, r)
		if !ok {
			return
		}
		mem, err := a.mem.LoadAll(r.Context(), p.User)
		if err != nil {
			appkit.Error(w, err)
			return
		}
		appkit.JSON(w, http.StatusOK, mem)
	})
	return appkit.Guard(d)(mux)
}

// callersReport is the caller's report of the path's {id}, or false with the answer written
// (401, 404 naming the ID, 500).
func (a *Analyst) callersReport(w http.ResponseWriter, r *http.Request) (Report, bool) {
	p, ok := appkit.Caller(w, r)
	if !ok {
		return Report{}, false
	}
	rep, found, err := a.GetReport(r.Context(), p.Tenant, p.User, r.PathValue("id"))
	if err != nil {
		appkit.Error(w, err)
		return rep, false
	}
	if !found {
		appkit.Fail(w, http.StatusNotFound, "no report "+strconv.Quote(r.PathValue("id"))+" of yours", "GET /apps/analyst/api/v1/reports lists yours")
		return rep, false
	}
	return rep, true
}
