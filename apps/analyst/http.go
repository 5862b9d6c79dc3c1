package analyst

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/trellis-go/trellis/server"
)

// Handler serves the analyst's routes under /apps/analyst, behind the API's authentication:
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
		p := principal(r)
		list, err := a.Reports(r.Context(), p.Tenant, p.User)
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, list)
	})
	mux.HandleFunc("GET /api/v1/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		rep, found, err := a.GetReport(r.Context(), p.Tenant, p.User, r.PathValue("id"))
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if !found {
			httpError(w, http.StatusNotFound, "no report "+strconv.Quote(r.PathValue("id"))+" of yours")
			return
		}
		writeJSON(w, http.StatusOK, rep)
	})
	mux.HandleFunc("GET /api/v1/reports/{id}/pdf", func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		rep, found, err := a.GetReport(r.Context(), p.Tenant, p.User, r.PathValue("id"))
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if !found {
			httpError(w, http.StatusNotFound, "no report "+strconv.Quote(r.PathValue("id"))+" of yours")
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="report-`+rep.ID+`.pdf"`)
		_, _ = w.Write(ReportPDF(rep))
	})
	mux.HandleFunc("GET /api/v1/reports/{id}/docx", func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		rep, found, err := a.GetReport(r.Context(), p.Tenant, p.User, r.PathValue("id"))
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if !found {
			httpError(w, http.StatusNotFound, "no report "+strconv.Quote(r.PathValue("id"))+" of yours")
			return
		}
		doc, err := ReportDOCX(rep)
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
		w.Header().Set("Content-Disposition", `attachment; filename="report-`+rep.ID+`.docx"`)
		_, _ = w.Write(doc)
	})
	mux.HandleFunc("GET /api/v1/search", func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		q := r.URL.Query()
		k := 5
		if s := q.Get("top_k"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 50 {
				httpError(w, http.StatusBadRequest, "top_k must be a number from 1 to 50")
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
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		res, err := a.kb.Search(r.Context(), p.Tenant, q.Get("q"), k, filter, 0)
		if errors.Is(err, ErrBadArgs) {
			httpError(w, http.StatusBadRequest, "q is required: send ?q=<what to search for>")
			return
		}
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if res == nil {
			res = []Chunk{}
		}
		writeJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("GET /api/v1/memory", func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		mem, err := a.mem.LoadAll(r.Context(), p.User)
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, mem)
	})
	var h http.Handler = mux
	if d.Guard != nil {
		h = d.Guard(h)
	}
	return h
}

// principal is the caller; in dev mode (the dev principal) ?user_id= picks the user, as the
// graph's user_id input does.
func principal(r *http.Request) server.Principal {
	p, ok := server.PrincipalFrom(r.Context())
	if !ok {
		p = server.DevPrincipal
	}
	if u := r.URL.Query().Get("user_id"); u != "" && p.User == server.DevPrincipal.User {
		p.User = u
	}
	return p
}

func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
