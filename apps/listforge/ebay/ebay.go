// Package ebay is a client for the parts of eBay's APIs that pricing research needs: an
// application token by OAuth client credentials, the Browse API (active listings, GTIN lookup,
// an item's details) and the Marketplace Insights API (sold listings), which most applications
// are not granted: when it answers 403 or 404 the client falls back to active listings and
// says so. Every base URL is configurable, so tests and the offline demo point it at a local
// server speaking the same wire format (package catalog).
package ebay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/httpclient"
	"github.com/trellis-go/trellis/internal/netguard"
)

// Config configures a Client. ClientID and ClientSecret are required.
type Config struct {
	// BaseURL is the API root; empty means https://api.ebay.com.
	BaseURL string
	// TokenURL is the OAuth token endpoint; empty means BaseURL + /identity/v1/oauth2/token.
	TokenURL string
	// ClientID and ClientSecret are the application's keys.
	ClientID, ClientSecret string
	// Scopes are requested with the token; empty means https://api.ebay.com/oauth/api_scope
	// and the Marketplace Insights scope.
	Scopes []string
	// Marketplace is sent as X-EBAY-C-MARKETPLACE-ID; empty means EBAY_US.
	Marketplace string
	// Transport carries every request (the offline demo routes it to an in-process handler);
	// nil means the address-guarded default.
	Transport http.RoundTripper
	// Timeout bounds one attempt (zero: 15 s); Retries and Backoff are httpclient's (zero: 3
	// retries from 250 ms).
	Timeout time.Duration
	Retries int
	Backoff time.Duration
}

// Listing is one listing, active or sold, as research uses it.
type Listing struct {
	ItemID      string
	Title       string
	Price       float64
	Currency    string
	Condition   string
	ConditionID string
	URL         string
	ImageURL    string
	EPID        string
	Category    string
	Sold        bool
	// SoldAt is when a sold listing last sold; ListedAt when a listing was created (zero if
	// the API did not say).
	SoldAt, ListedAt time.Time
}

// Item is an item's details from the Browse API.
type Item struct {
	ItemID, Title, Brand, MPN, GTIN, EPID, Color, Condition, CategoryPath string
	Price                                                                 float64
	Currency                                                              string
	Aspects                                                               map[string]string
}

// Client calls eBay. It is safe for concurrent use.
type Client struct {
	api         *httpclient.Client
	marketplace string
}

// DefaultScopes are requested when Config.Scopes is empty.
var DefaultScopes = []string{"https://api.ebay.com/oauth/api_scope", "https://api.ebay.com/oauth/api_scope/buy.marketplace.insights"}

// New returns a client.
func New(cfg Config) (*Client, error) {
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("ebay: Config.ClientID and ClientSecret are required (the application keys from developer.ebay.com)")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.ebay.com"
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.TokenURL == "" {
		cfg.TokenURL = cfg.BaseURL + "/identity/v1/oauth2/token"
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = DefaultScopes
	}
	if cfg.Marketplace == "" {
		cfg.Marketplace = "EBAY_US"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 15 * time.Second
	}
	base := cfg.Transport
	if base == nil {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("ebay: base URL %q: %w", cfg.BaseURL, err)
		}
		base = netguard.Policy{AllowPrivate: isLoopback(u.Hostname())}.Transport()
	}
	tu, err := url.Parse(cfg.TokenURL)
	if err != nil || tu.Host == "" {
		return nil, fmt.Errorf("ebay: token URL %q: want an absolute URL", cfg.TokenURL)
	}
	tokenPath := tu.Path
	tu.Path, tu.RawQuery = "", ""
	tok, err := httpclient.New(tu.String(), &httpclient.Options{Auth: httpclient.Basic(cfg.ClientID, cfg.ClientSecret),
		Transport: base, Timeout: cfg.Timeout, Retries: cfg.Retries, Backoff: cfg.Backoff, RetryUnsafe: true, Name: "ebay oauth"})
	if err != nil {
		return nil, fmt.Errorf("ebay: %w", err)
	}
	ts := &tokenSource{client: tok, path: tokenPath, scopes: strings.Join(cfg.Scopes, " ")}
	api, err := httpclient.New(cfg.BaseURL, &httpclient.Options{
		Transport: &bearer{base: base, tokens: ts}, Timeout: cfg.Timeout, Retries: cfg.Retries, Backoff: cfg.Backoff,
		Header: http.Header{"X-EBAY-C-MARKETPLACE-ID": {cfg.Marketplace}}, Name: "ebay",
	})
	if err != nil {
		return nil, fmt.Errorf("ebay: %w", err)
	}
	return &Client{api: api, marketplace: cfg.Marketplace}, nil
}

func isLoopback(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// tokenSource fetches application tokens (client credentials grant) and caches them. eBay's
// token_type is "Application Access Token", which is a bearer token.
type tokenSource struct {
	client  *httpclient.Client
	path    string
	scopes  string
	mu      sync.Mutex
	token   string
	expires time.Time
}

func (ts *tokenSource) get(ctx context.Context) (string, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.token != "" && time.Until(ts.expires) > 60*time.Second {
		return ts.token, nil
	}
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		TokenType   string `json:"token_type"`
	}
	if err := ts.client.Form(ctx, ts.path, url.Values{"grant_type": {"client_credentials"}, "scope": {ts.scopes}}, &out); err != nil {
		return "", fmt.Errorf("ebay: fetching an application token: %w", err)
	}
	if out.AccessToken == "" {
		return "", errors.New("ebay: the token endpoint answered without an access_token")
	}
	life := time.Duration(out.ExpiresIn) * time.Second
	if life <= 0 {
		life = 2 * time.Hour
	}
	ts.token, ts.expires = out.AccessToken, time.Now().Add(life)
	return ts.token, nil
}

func (ts *tokenSource) forget() {
	ts.mu.Lock()
	ts.token = ""
	ts.mu.Unlock()
}

// bearer adds the application token to each request, and fetches a new one once on a 401.
type bearer struct {
	base   http.RoundTripper
	tokens *tokenSource
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		tok, err := b.tokens.get(req.Context())
		if err != nil {
			return nil, err
		}
		r := req.Clone(req.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
		resp, err := b.base.RoundTrip(r)
		if err != nil || resp.StatusCode != http.StatusUnauthorized || attempt > 0 || req.Body != nil && req.GetBody == nil {
			return resp, err
		}
		resp.Body.Close()
		b.tokens.forget()
		if req.GetBody != nil {
			if req.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
	}
}

// wire types: the fields of eBay's answers that research reads.
type amount struct {
	Value    string `json:"value"`
	Currency string `json:"currency"`
}

type image struct {
	ImageURL string `json:"imageUrl"`
}

type category struct {
	CategoryID   string `json:"categoryId"`
	CategoryName string `json:"categoryName"`
}

type itemSummary struct {
	ItemID           string     `json:"itemId"`
	Title            string     `json:"title"`
	Price            amount     `json:"price"`
	Condition        string     `json:"condition"`
	ConditionID      string     `json:"conditionId"`
	ItemWebURL       string     `json:"itemWebUrl"`
	Image            image      `json:"image"`
	EPID             string     `json:"epid"`
	ItemCreationDate string     `json:"itemCreationDate"`
	Categories       []category `json:"categories"`
}

// SearchResponse is the Browse API's item_summary/search answer.
type SearchResponse struct {
	Href          string        `json:"href"`
	Total         int           `json:"total"`
	Limit         int           `json:"limit"`
	Offset        int           `json:"offset"`
	ItemSummaries []itemSummary `json:"itemSummaries"`
}

type itemSale struct {
	ItemID            string     `json:"itemId"`
	Title             string     `json:"title"`
	LastSoldDate      string     `json:"lastSoldDate"`
	LastSoldPrice     amount     `json:"lastSoldPrice"`
	Condition         string     `json:"condition"`
	ConditionID       string     `json:"conditionId"`
	ItemWebURL        string     `json:"itemWebUrl"`
	Image             image      `json:"image"`
	EPID              string     `json:"epid"`
	TotalSoldQuantity int        `json:"totalSoldQuantity"`
	ItemCreationDate  string     `json:"itemCreationDate,omitempty"`
	Categories        []category `json:"categories"`
}

// SalesResponse is the Marketplace Insights API's item_sales/search answer.
type SalesResponse struct {
	Href      string     `json:"href"`
	Total     int        `json:"total"`
	Limit     int        `json:"limit"`
	Offset    int        `json:"offset"`
	ItemSales []itemSale `json:"itemSales"`
}

type itemDetail struct {
	ItemID           string `json:"itemId"`
	Title            string `json:"title"`
	Brand            string `json:"brand"`
	MPN              string `json:"mpn"`
	GTIN             string `json:"gtin"`
	EPID             string `json:"epid"`
	Color            string `json:"color"`
	Condition        string `json:"condition"`
	CategoryPath     string `json:"categoryPath"`
	Price            amount `json:"price"`
	LocalizedAspects []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"localizedAspects"`
}

// Wire types, exported for servers that speak the format (the offline catalogue, tests).
type (
	// ItemSummary is one result of a Browse search.
	ItemSummary = itemSummary
	// ItemSale is one result of an Insights search.
	ItemSale = itemSale
	// ItemDetail is the Browse API's getItem answer.
	ItemDetail = itemDetail
	// Amount is a price on the wire (the value is a decimal string).
	Amount = amount
	// Image is an image on the wire.
	Image = image
	// Category is a category on the wire.
	Category = category
)

// Paths of the endpoints, under the base URL.
const (
	TokenPath    = "/identity/v1/oauth2/token"
	SearchPath   = "/buy/browse/v1/item_summary/search"
	ItemPath     = "/buy/browse/v1/item/"
	SalesPath    = "/buy/marketplace_insights/v1_beta/item_sales/search"
	maxPageLimit = 200
)

func limitOf(n int) string {
	if n <= 0 {
		n = 20
	}
	if n > maxPageLimit {
		n = maxPageLimit
	}
	return strconv.Itoa(n)
}

// SearchActive returns active listings matching the keywords.
func (c *Client) SearchActive(ctx context.Context, query string, limit int) ([]Listing, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("ebay: search needs keywords")
	}
	var out SearchResponse
	if err := c.api.GetJSON(ctx, SearchPath, url.Values{"q": {query}, "limit": {limitOf(limit)}}, &out); err != nil {
		return nil, err
	}
	return summaries(out.ItemSummaries), nil
}

// SearchGTIN returns active listings of the product with this GTIN (UPC, EAN or ISBN).
func (c *Client) SearchGTIN(ctx context.Context, gtin string, limit int) ([]Listing, error) {
	gtin = strings.TrimSpace(gtin)
	if gtin == "" {
		return nil, errors.New("ebay: GTIN lookup needs a GTIN")
	}
	var out SearchResponse
	if err := c.api.GetJSON(ctx, SearchPath, url.Values{"gtin": {gtin}, "limit": {limitOf(limit)}}, &out); err != nil {
		return nil, err
	}
	return summaries(out.ItemSummaries), nil
}

// GetItem returns an item's details (brand, MPN, GTIN, aspects).
func (c *Client) GetItem(ctx context.Context, itemID string) (*Item, error) {
	if itemID == "" || strings.ContainsAny(itemID, "/?#") {
		return nil, fmt.Errorf("ebay: item ID %q is not valid", itemID)
	}
	var d itemDetail
	if err := c.api.GetJSON(ctx, ItemPath+url.PathEscape(itemID), nil, &d); err != nil {
		return nil, err
	}
	it := &Item{ItemID: d.ItemID, Title: d.Title, Brand: d.Brand, MPN: d.MPN, GTIN: d.GTIN, EPID: d.EPID, Color: d.Color,
		Condition: d.Condition, CategoryPath: d.CategoryPath, Currency: d.Price.Currency, Aspects: map[string]string{}}
	it.Price, _ = strconv.ParseFloat(d.Price.Value, 64)
	for _, a := range d.LocalizedAspects {
		it.Aspects[a.Name] = a.Value
	}
	return it, nil
}

// SearchSold returns sold listings of the last 90 days from Marketplace Insights. When the
// application has no access to it (403, or 404 where it is not offered) it returns active
// listings instead, with fellBack true.
func (c *Client) SearchSold(ctx context.Context, query string, limit int) (_ []Listing, fellBack bool, err error) {
	if strings.TrimSpace(query) == "" {
		return nil, false, errors.New("ebay: search needs keywords")
	}
	var out SalesResponse
	err = c.api.GetJSON(ctx, SalesPath, url.Values{"q": {query}, "limit": {limitOf(limit)}}, &out)
	var se *httpclient.StatusError
	if errors.As(err, &se) && (se.Status == http.StatusForbidden || se.Status == http.StatusNotFound) {
		active, err := c.SearchActive(ctx, query, limit)
		return active, true, err
	}
	if err != nil {
		return nil, false, err
	}
	ls := make([]Listing, 0, len(out.ItemSales))
	for _, s := range out.ItemSales {
		l := Listing{ItemID: s.ItemID, Title: s.Title, Currency: s.LastSoldPrice.Currency, Condition: s.Condition, ConditionID: s.ConditionID,
			URL: s.ItemWebURL, ImageURL: s.Image.ImageURL, EPID: s.EPID, Sold: true}
		l.Price, _ = strconv.ParseFloat(s.LastSoldPrice.Value, 64)
		l.SoldAt, _ = time.Parse(time.RFC3339, s.LastSoldDate)
		l.ListedAt, _ = time.Parse(time.RFC3339, s.ItemCreationDate)
		if len(s.Categories) > 0 {
			l.Category = s.Categories[0].CategoryName
		}
		ls = append(ls, l)
	}
	return ls, false, nil
}

func summaries(in []itemSummary) []Listing {
	ls := make([]Listing, 0, len(in))
	for _, s := range in {
		l := Listing{ItemID: s.ItemID, Title: s.Title, Currency: s.Price.Currency, Condition: s.Condition, ConditionID: s.ConditionID,
			URL: s.ItemWebURL, ImageURL: s.Image.ImageURL, EPID: s.EPID}
		l.Price, _ = strconv.ParseFloat(s.Price.Value, 64)
		l.ListedAt, _ = time.Parse(time.RFC3339, s.ItemCreationDate)
		if len(s.Categories) > 0 {
			l.Category = s.Categories[0].CategoryName
		}
		ls = append(ls, l)
	}
	return ls
}

// Transient reports whether err is worth trying again later (a timeout, a refused connection,
// eBay overloaded) rather than a mistake in the request.
func Transient(err error) bool {
	var te *httpclient.TransportError
	if errors.As(err, &te) {
		return true
	}
	var se *httpclient.StatusError
	if errors.As(err, &se) {
		return se.Status == 429 || se.Status >= 500
	}
	return errors.Is(err, context.DeadlineExceeded)
}
