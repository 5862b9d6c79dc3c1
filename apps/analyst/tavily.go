package analyst

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/analyst/corpus"
	"github.com/trellis-go/trellis/httpclient"
	"github.com/trellis-go/trellis/server/appkit"
)

// TavilyURL is the Tavily Search API's base URL.
const TavilyURL = "https://api.tavily.com"

// Tavily is a client of the Tavily Search API (POST /search).
type Tavily struct {
	c   *httpclient.Client
	key string
}

// TavilyRequest is the body of POST /search.
type TavilyRequest struct {
	APIKey        string `json:"api_key,omitempty"`
	Query         string `json:"query"`
	SearchDepth   string `json:"search_depth,omitempty"`
	Topic         string `json:"topic,omitempty"`
	MaxResults    int    `json:"max_results,omitempty"`
	IncludeAnswer bool   `json:"include_answer"`
}

// TavilyResult is one result of a search.
type TavilyResult struct {
	Title         string  `json:"title"`
	URL           string  `json:"url"`
	Content       string  `json:"content"`
	Score         float64 `json:"score"`
	PublishedDate string  `json:"published_date,omitempty"`
}

// TavilyResponse is the answer of POST /search.
type TavilyResponse struct {
	Query        string         `json:"query"`
	Answer       *string        `json:"answer"`
	Images       []any          `json:"images"`
	Results      []TavilyResult `json:"results"`
	ResponseTime float64        `json:"response_time"`
}

// NewTavily returns a client of the Tavily API at baseURL (TavilyURL in production); key is sent
// as a bearer token when not empty. transport, when not nil, replaces the HTTP transport.
func NewTavily(baseURL, key string, transport http.RoundTripper) (*Tavily, error) {
	opts := &httpclient.Options{Name: "tavily", RetryUnsafe: true, Timeout: 20 * time.Second, Transport: transport}
	if key != "" {
		opts.Auth = httpclient.Bearer(key)
	}
	c, err := httpclient.New(baseURL, opts)
	if err != nil {
		return nil, err
	}
	return &Tavily{c: c, key: key}, nil
}

// Search asks for at most maxResults (1 to 20) results for query.
func (t *Tavily) Search(ctx context.Context, query string, maxResults int) ([]TavilyResult, error) {
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("%w: query is empty; send what to search the web for", ErrBadArgs)
	}
	if maxResults <= 0 {
		maxResults = 5
	}
	if maxResults > 20 {
		return nil, fmt.Errorf("%w: max_results is %d; send 1 to 20", ErrBadArgs, maxResults)
	}
	var out TavilyResponse
	if err := t.c.PostJSON(ctx, "/search", TavilyRequest{Query: query, MaxResults: maxResults, SearchDepth: "basic", Topic: "general"}, &out); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// OfflineWeb is a handler that speaks the Tavily Search API over the shipped web corpus. A result
// needs a share of the query's content words of at least MinShare.
type OfflineWeb struct {
	pages    []corpus.WebPage
	MinShare float64
	// Delay holds every answer back (a slow search engine, for tests).
	Delay time.Duration
}

// NewOfflineWeb loads the shipped web corpus.
func NewOfflineWeb() (*OfflineWeb, error) {
	pages, err := corpus.Web()
	if err != nil {
		return nil, err
	}
	return &OfflineWeb{pages: pages, MinShare: 0.34}, nil
}

func (o *OfflineWeb) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.Method != http.MethodPost || r.URL.Path != "/search" {
		appkit.JSON(w, http.StatusNotFound, map[string]any{"detail": map[string]string{"error": "not found: use POST /search"}})
		return
	}
	var req TavilyRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil || strings.TrimSpace(req.Query) == "" {
		appkit.JSON(w, http.StatusBadRequest, map[string]any{"detail": map[string]string{"error": "query is required"}})
		return
	}
	if o.Delay > 0 {
		select {
		case <-time.After(o.Delay):
		case <-r.Context().Done():
			return
		}
	}
	max := req.MaxResults
	if max <= 0 {
		max = 5
	}
	terms := contentWords(req.Query)
	var res []TavilyResult
	for _, p := range o.pages {
		s := share(terms, p.Title+" "+p.Content)
		if s >= o.MinShare && len(terms) > 0 {
			res = append(res, TavilyResult{Title: p.Title, URL: p.URL, Content: p.Content, Score: s, PublishedDate: p.PublishedDate})
		}
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].Score > res[j].Score })
	if len(res) > max {
		res = res[:max]
	}
	appkit.JSON(w, http.StatusOK, TavilyResponse{Query: req.Query, Results: res, Images: []any{}, ResponseTime: time.Since(start).Seconds()})
}

// Transport routes a client's requests to the handler in process, so the offline web goes
// through the real client's URL building and parsing.
func (o *OfflineWeb) Transport() http.RoundTripper { return handlerTransport{o} }

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// stopwords are the words a search drops: the pack's stopwords (function words, the words of
// the questions the planner writes) and the firm's name (from the corpus).
var stopwords = map[string]bool{}

func init() {
	for _, w := range words.Stopwords {
		stopwords[w] = true
	}
	// The firm's own name is in most of its documents: it tells none of them apart.
	if d, err := loadDomain(); err == nil {
		for _, w := range strings.Fields(strings.ToLower(d.Company)) {
			stopwords[w] = true
		}
	}
}

// contentWords are the lower-case words of s that carry meaning.
func contentWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}) {
		if len(w) < 2 || stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// share is the share of terms found in text (as words or word prefixes of 5+ letters).
func share(terms []string, text string) float64 {
	if len(terms) == 0 {
		return 0
	}
	words := contentWords(text)
	n := 0
	for _, t := range terms {
		for _, w := range words {
			if w == t || (len(t) >= 5 && len(w) >= 5 && (strings.HasPrefix(w, t[:5]) && strings.HasPrefix(t, w[:5]))) {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(terms))
}
