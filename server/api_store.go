package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/store"
)

// Store items of a tenant live under a first namespace label of their own, which the API
// adds on the way in and strips on the way out: a tenant sees only its items.
const tenantLabelPrefix = "tenant:"

func tenantNS(p Principal, ns []string) []string {
	if p.PerUser {
		// A per-user principal's items live under a label of its user's (owner.go).
		return append([]string{tenantLabelPrefix + p.Tenant, userLabelPrefix + p.User}, ns...)
	}
	return append([]string{tenantLabelPrefix + p.Tenant}, ns...)
}

func stripTenant(ns []string) []string {
	if len(ns) > 0 && strings.HasPrefix(ns[0], tenantLabelPrefix) {
		return ns[1:]
	}
	return ns
}

// stripScope removes the labels tenantNS added for p: the tenant's, and a per-user principal's
// user label after it.
func stripScope(p Principal, ns []string) []string {
	ns = stripTenant(ns)
	if p.PerUser && len(ns) > 0 && ns[0] == userLabelPrefix+p.User {
		ns = ns[1:]
	}
	return ns
}

type itemJSON struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	Score     *float64       `json:"score,omitempty"`
}

func itemOut(it store.Item) itemJSON {
	return itemJSON{Namespace: stripTenant(it.Namespace), Key: it.Key, Value: it.Value, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
}

// itemOutFor is itemOut for p, whose user label (a per-user principal's) is stripped too.
func itemOutFor(p Principal, it store.Item) itemJSON {
	j := itemOut(it)
	j.Namespace = stripScope(p, it.Namespace)
	return j
}

// storeError maps the store's input errors to 400 and a missing item to 404.
// checkLabels refuses namespace labels that could not be read back: GET /store/items joins a
// namespace's labels with '.', so a label may not hold one, nor be empty.
func checkLabels(field string, labels []string) error {
	for i, l := range labels {
		switch {
		case l == "":
			return badRequest("give every label some text", "field %q: label %d is empty", field, i)
		case strings.Contains(l, "."):
			return badRequest("use labels without '.' (GET /store/items joins the labels with '.'); split it into two labels, or use '-' or '_'", "field %q: label %q holds a '.'", field, l)
		}
	}
	return nil
}

func storeError(err error) error {
	var ie *store.InputError
	switch {
	case errors.As(err, &ie), errors.Is(err, store.ErrInvalidNamespace), errors.Is(err, store.ErrInvalidKey),
		errors.Is(err, store.ErrInvalidValue), errors.Is(err, store.ErrInvalidFilter):
		return badRequest("", "%s", strings.TrimPrefix(err.Error(), "store: "))
	case errors.Is(err, store.ErrValueTooLarge):
		return &APIError{Status: http.StatusRequestEntityTooLarge, Message: err.Error()}
	case errors.Is(err, store.ErrNotFound):
		return &APIError{Status: http.StatusNotFound, Message: "item not found", kind: ErrNotFound}
	case errors.Is(err, store.ErrUnavailable):
		return &APIError{Status: http.StatusServiceUnavailable, Message: err.Error(), Hint: "the database is unreachable; retry later"}
	}
	return err
}

func (s *Server) handleStorePut(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Namespace []string       `json:"namespace"`
		Key       string         `json:"key"`
		Value     map[string]any `json:"value"`
		Index     any            `json:"index"`
		TTL       *float64       `json:"ttl"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if len(req.Namespace) == 0 {
		writeError(w, badRequest("give at least one label", "field \"namespace\" is empty"))
		return
	}
	if err := checkLabels("namespace", req.Namespace); err != nil {
		writeError(w, err)
		return
	}
	if req.Value == nil {
		writeError(w, badRequest("send the item as a JSON object", "field \"value\" is required"))
		return
	}
	put := store.PutRequest{Namespace: tenantNS(principal(r), req.Namespace), Key: req.Key, Value: req.Value}
	switch ix := req.Index.(type) {
	case nil:
	case bool:
		put.NoIndex = !ix
	case []any:
		for _, f := range ix {
			fs, ok := f.(string)
			if !ok {
				writeError(w, badRequest("list field paths as strings", "field \"index\" must be false or a list of strings"))
				return
			}
			put.Index = append(put.Index, fs)
		}
	default:
		writeError(w, badRequest("send false or a list of field paths", "field \"index\" must be false or a list of strings"))
		return
	}
	if req.TTL != nil {
		if *req.TTL < 0 {
			writeError(w, badRequest("give minutes, or leave it out", "field \"ttl\" is negative"))
			return
		}
		put.TTL = time.Duration(*req.TTL * float64(time.Minute))
	}
	if err := s.store.Put(r.Context(), put); err != nil {
		writeError(w, storeError(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleStoreGet(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ns := q.Get("namespace")
	if ns == "" {
		writeError(w, badRequest("pass the namespace's labels joined by '.'", "query parameter \"namespace\" is required"))
		return
	}
	req := store.GetRequest{Namespace: tenantNS(principal(r), strings.Split(ns, ".")), Key: q.Get("key")}
	if v := q.Get("refresh_ttl"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, badRequest("use true or false", "query parameter \"refresh_ttl\" is %q", v))
			return
		}
		req.RefreshTTL = &b
	}
	it, err := s.store.Get(r.Context(), req)
	if errors.Is(err, store.ErrNotFound) {
		// The SDK's getItem answers null for a missing item, as LangGraph's server does.
		writeJSON(w, 200, nil)
		return
	}
	if err != nil {
		writeError(w, storeError(err))
		return
	}
	writeJSON(w, 200, itemOutFor(principal(r), *it))
}

func (s *Server) handleStoreDelete(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Namespace []string `json:"namespace"`
		Key       string   `json:"key"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if len(req.Namespace) == 0 {
		writeError(w, badRequest("give at least one label", "field \"namespace\" is empty"))
		return
	}
	if err := s.store.Delete(r.Context(), store.DeleteRequest{Namespace: tenantNS(principal(r), req.Namespace), Key: req.Key}); err != nil {
		writeError(w, storeError(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleStoreSearch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		NamespacePrefix []string       `json:"namespace_prefix"`
		Filter          map[string]any `json:"filter"`
		Limit           int            `json:"limit"`
		Offset          int            `json:"offset"`
		Query           string         `json:"query"`
		RefreshTTL      *bool          `json:"refresh_ttl"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Limit < 0 || req.Offset < 0 {
		writeError(w, badRequest("use non-negative numbers", "fields \"limit\" and \"offset\" may not be negative"))
		return
	}
	items, err := s.store.Search(r.Context(), store.SearchRequest{NamespacePrefix: tenantNS(principal(r), req.NamespacePrefix),
		Filter: req.Filter, Query: req.Query, Limit: req.Limit, Offset: req.Offset, RefreshTTL: req.RefreshTTL})
	if err != nil {
		writeError(w, storeError(err))
		return
	}
	out := make([]itemJSON, 0, len(items))
	for _, it := range items {
		j := itemOutFor(principal(r), it.Item)
		if req.Query != "" {
			sc := it.Score
			j.Score = &sc
		}
		out = append(out, j)
	}
	writeJSON(w, 200, map[string]any{"items": out})
}

func (s *Server) handleStoreNamespaces(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prefix   []string `json:"prefix"`
		Suffix   []string `json:"suffix"`
		MaxDepth int      `json:"max_depth"`
		Limit    int      `json:"limit"`
		Offset   int      `json:"offset"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.MaxDepth < 0 || req.Limit < 0 || req.Offset < 0 {
		writeError(w, badRequest("use non-negative numbers", "fields \"max_depth\", \"limit\" and \"offset\" may not be negative"))
		return
	}
	depth := req.MaxDepth
	if depth > 0 {
		depth++ // the tenant label
	}
	nss, err := s.store.ListNamespaces(r.Context(), store.ListNamespacesRequest{Prefix: tenantNS(principal(r), req.Prefix), Suffix: req.Suffix, MaxDepth: depth, Limit: req.Limit, Offset: req.Offset})
	if err != nil {
		writeError(w, storeError(err))
		return
	}
	out := make([][]string, 0, len(nss))
	for _, ns := range nss {
		out = append(out, stripScope(principal(r), ns))
	}
	writeJSON(w, 200, map[string]any{"namespaces": out})
}
