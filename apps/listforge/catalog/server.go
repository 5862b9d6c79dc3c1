package catalog

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/apps/listforge/ebay"
	"github.com/trellis-go/trellis/server/appkit"
)

// Server answers in eBay's wire format from a catalogue. The zero Options answer everything.
type Server struct {
	Cat *Catalogue
	// ClientID and ClientSecret are the keys the token endpoint accepts; empty accepts any.
	ClientID, ClientSecret string
	// NoInsights answers the Marketplace Insights search 403, as eBay does for an application
	// without access, so the client falls back to active listings.
	NoInsights bool
	// Delay holds every API answer back (a slow API), or until the request is cancelled.
	Delay time.Duration

	mu     sync.Mutex
	tokens map[string]time.Time
	// fail holds statuses to answer the next API requests with (tests: timeouts, overload).
	fail []int
	// Hits counts requests by path; queries keeps their query parameters.
	hits    map[string]int
	queries map[string][]url.Values
}

// NewServer returns a server for the catalogue.
func NewServer(c *Catalogue) *Server {
	return &Server{Cat: c, tokens: map[string]time.Time{}, hits: map[string]int{}, queries: map[string][]url.Values{}}
}

// FailNext makes the next API requests (not token requests) answer these statuses, in order.
func (s *Server) FailNext(statuses ...int) {
	s.mu.Lock()
	s.fail = append(s.fail, statuses...)
	s.mu.Unlock()
}

// Hits returns how many requests reached path.
func (s *Server) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// Queries returns the query parameters of the requests that reached path, in order.
func (s *Server) Queries(path string) []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.queries[path]...)
}

// Transport serves requests with the handler in process: a client given it reaches no network.
func (s *Server) Transport() http.RoundTripper { return roundTripper{s} }

type roundTripper struct{ h http.Handler }

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	rt.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// ebayError writes eBay's error shape.
func ebayError(w http.ResponseWriter, code int, id int, msg string) {
	appkit.JSON(w, code, map[string]any{"errors": []map[string]any{{"errorId": id, "domain": "API_BROWSE", "category": "REQUEST", "message": msg}}})
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.queries[r.URL.Path] = append(s.queries[r.URL.Path], r.URL.Query())
	s.mu.Unlock()
	if r.URL.Path == ebay.TokenPath {
		s.token(w, r)
		return
	}
	if s.Delay > 0 {
		select {
		case <-time.After(s.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if !s.authorised(r) {
		ebayError(w, http.StatusUnauthorized, 1001, "Invalid access token. Check the value of the Authorization HTTP request header.")
		return
	}
	s.mu.Lock()
	var fail int
	if len(s.fail) > 0 {
		fail, s.fail = s.fail[0], s.fail[1:]
	}
	s.mu.Unlock()
	if fail != 0 {
		ebayError(w, fail, 10001, "injected failure")
		return
	}
	switch {
	case r.URL.Path == ebay.SearchPath:
		s.search(w, r)
	case strings.HasPrefix(r.URL.Path, ebay.ItemPath):
		s.item(w, r, strings.TrimPrefix(r.URL.Path, ebay.ItemPath))
	case r.URL.Path == ebay.SalesPath:
		if s.NoInsights {
			ebayError(w, http.StatusForbidden, 1100, "Access denied. Insufficient permissions to fulfill the request.")
			return
		}
		s.sales(w, r)
	default:
		ebayError(w, http.StatusNotFound, 2002, "Resource not found: "+r.URL.Path)
	}
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if r.Method != http.MethodPost || !ok || (s.ClientID != "" && (id != s.ClientID || secret != s.ClientSecret)) {
		appkit.JSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "client authentication failed"})
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		appkit.JSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type", "error_description": "grant type in request is not supported by the authorization server"})
		return
	}
	s.mu.Lock()
	tok := fmt.Sprintf("v^1.1#i^1#offline-%d", len(s.tokens)+1)
	s.tokens[tok] = time.Now().Add(2 * time.Hour)
	s.mu.Unlock()
	appkit.JSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": 7200, "token_type": "Application Access Token"})
}

func (s *Server) authorised(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[tok]
	return ok && time.Now().Before(exp)
}

func page(r *http.Request) (limit, offset int) {
	limit, _ = strconv.Atoi(r.URL.Query().Get("limit"))
	offset, _ = strconv.Atoi(r.URL.Query().Get("offset"))
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	if offset < 0 {
		offset = 0
	}
	return limit, offset
}

func (s *Server) summary(l Listing) ebay.ItemSummary {
	p := s.Cat.Products[l.ProductID]
	return ebay.ItemSummary{ItemID: l.ID, Title: l.Title, Price: ebay.Amount{Value: strconv.FormatFloat(l.Price, 'f', 2, 64), Currency: "USD"},
		Condition: l.Condition, ConditionID: l.CondID, ItemWebURL: "https://www.ebay.com/itm/" + itemNumber(l.ID),
		Image: ebay.Image{ImageURL: "https://i.ebayimg.com/images/g/" + itemNumber(l.ID) + "/s-l500.jpg"},
		EPID:  epid(p, l), ItemCreationDate: l.ListedAt.UTC().Format(time.RFC3339),
		Categories: []ebay.Category{{CategoryID: fmt.Sprint(9000 + len(p.Category)), CategoryName: p.Category}}}
}

func epid(p Product, l Listing) string {
	if l.Kind == "decoy" {
		return ""
	}
	return fmt.Sprint(24000000 + p.ID)
}

func itemNumber(id string) string {
	parts := strings.Split(id, "|")
	if len(parts) == 3 {
		return parts[1]
	}
	return id
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, offset := page(r)
	var found []Listing
	switch {
	case q.Get("gtin") != "":
		if p, ok := s.Cat.ProductByUPC(q.Get("gtin")); ok {
			for _, l := range s.Cat.Listings {
				if l.ProductID == p.ID && !l.Sold && l.Kind != "decoy" {
					found = append(found, l)
				}
			}
		}
	case strings.TrimSpace(q.Get("q")) != "":
		found = s.Cat.Search(q.Get("q"), false)
	default:
		ebayError(w, http.StatusBadRequest, 12001, "The call must have a valid 'q', 'category_ids', 'epid', 'gtin' or 'charity_ids' query parameter.")
		return
	}
	out := ebay.SearchResponse{Href: r.URL.String(), Total: len(found), Limit: limit, Offset: offset}
	for i := offset; i < len(found) && i < offset+limit; i++ {
		out.ItemSummaries = append(out.ItemSummaries, s.summary(found[i]))
	}
	appkit.JSON(w, http.StatusOK, out)
}

func (s *Server) sales(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		ebayError(w, http.StatusBadRequest, 145001, "The 'q' or 'category_ids' or 'epid' or 'gtin' parameter is required.")
		return
	}
	limit, offset := page(r)
	found := s.Cat.Search(q, true)
	out := ebay.SalesResponse{Href: r.URL.String(), Total: len(found), Limit: limit, Offset: offset}
	for i := offset; i < len(found) && i < offset+limit; i++ {
		l := found[i]
		sm := s.summary(l)
		out.ItemSales = append(out.ItemSales, ebay.ItemSale{ItemID: l.ID, Title: l.Title, LastSoldDate: l.SoldAt.UTC().Format(time.RFC3339),
			LastSoldPrice: sm.Price, Condition: l.Condition, ConditionID: l.CondID, ItemWebURL: sm.ItemWebURL, Image: sm.Image,
			EPID: sm.EPID, TotalSoldQuantity: 1, ItemCreationDate: sm.ItemCreationDate, Categories: sm.Categories})
	}
	appkit.JSON(w, http.StatusOK, out)
}

func (s *Server) item(w http.ResponseWriter, r *http.Request, id string) {
	i, ok := s.Cat.byItem[id]
	if !ok {
		ebayError(w, http.StatusNotFound, 11001, "The specified item ID was not found.")
		return
	}
	l := s.Cat.Listings[i]
	p := s.Cat.Products[l.ProductID]
	sm := s.summary(l)
	d := ebay.ItemDetail{ItemID: l.ID, Title: l.Title, Brand: p.Brand, MPN: p.MPN, GTIN: p.UPC, EPID: sm.EPID, Condition: l.Condition,
		CategoryPath: p.Category, Price: sm.Price}
	if l.Kind == "decoy" {
		d.MPN, d.GTIN = "", ""
	}
	d.LocalizedAspects = append(d.LocalizedAspects,
		struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		}{"Model", p.Family},
		struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		}{"Variant", p.Variant})
	appkit.JSON(w, http.StatusOK, d)
}
