// Package realtyapi is the RealtyAPI (Zillow data) client of the realty app: search by a
// natural-language prompt (/search/byaiprompt), details by Zillow property ID (/pro/byzpid) and by
// address (/pro/byaddress), on package httpclient with a configurable base URL and key.
//
// The detail endpoints wrap the property in propertyDetails and answer a missing property with
// HTTP 200 and an empty propertyDetails (a soft 404, [IsSoft404]); [ParseListing] maps Zillow's
// fields to a [Listing] (price as an object or a number, the first original photo or the medium
// photo link, lotSize in square feet, the zestimate as a whole number). Search results carry no
// coordinates; details do.
//
// [Offline] is a generated data set of listings in four US cities and [Handler] serves it in the
// same wire format, so the offline demo runs through this same client.
package realtyapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/httpclient"
)

// DefaultBaseURL is RealtyAPI's Zillow endpoint.
const DefaultBaseURL = "https://zillow.realtyapi.io"

// KeyHeader carries the API key.
const KeyHeader = "x-realtyapi-key"

// Listing is a property as the app shows it.
type Listing struct {
	ZPID         string   `json:"zpid"`
	Address      string   `json:"address"`
	Price        *float64 `json:"price,omitempty"`
	Beds         *float64 `json:"beds,omitempty"`
	Baths        *float64 `json:"baths,omitempty"`
	Sqft         *float64 `json:"sqft,omitempty"`
	PropertyType string   `json:"property_type,omitempty"`
	PhotoURL     string   `json:"photo_url,omitempty"`
	Lat          *float64 `json:"lat,omitempty"`
	Lng          *float64 `json:"lng,omitempty"`
	YearBuilt    *int     `json:"year_built,omitempty"`
	LotSize      *float64 `json:"lot_size,omitempty"`
	HOAFee       *float64 `json:"hoa_fee,omitempty"`
	Zestimate    *int64   `json:"zestimate,omitempty"`
	URL          string   `json:"url,omitempty"`
}

// Client calls RealtyAPI.
type Client struct {
	c *httpclient.Client
}

// Options configure [New].
type Options struct {
	// Key is the API key, sent as x-realtyapi-key; empty sends none (the offline server).
	Key string
	// Transport, Timeout and Retries are passed to httpclient (zero values are its defaults).
	Transport http.RoundTripper
	Timeout   time.Duration
	Retries   int
}

// New returns a client of the API at baseURL (empty means DefaultBaseURL).
func New(baseURL string, o *Options) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	if o == nil {
		o = &Options{}
	}
	ho := &httpclient.Options{Name: "realtyapi", Transport: o.Transport, Timeout: o.Timeout, Retries: o.Retries}
	if o.Key != "" {
		ho.Auth = httpclient.APIKey(KeyHeader, o.Key)
	}
	c, err := httpclient.New(baseURL, ho)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// SearchParams is a search; Prompt is used as given when set, otherwise one is written from
// the other fields.
type SearchParams struct {
	Prompt       string
	Location     string
	MinPrice     float64
	MaxPrice     float64
	MinBeds      float64
	MinBaths     float64
	PropertyType string
	Page         int
}

// PromptText is the natural-language prompt a search sends.
func (p SearchParams) PromptText() string {
	if strings.TrimSpace(p.Prompt) != "" {
		return strings.TrimSpace(p.Prompt)
	}
	var b strings.Builder
	kind := "homes"
	switch strings.ToUpper(p.PropertyType) {
	case "CONDO":
		kind = "condos"
	case "TOWNHOUSE":
		kind = "townhouses"
	case "SINGLE_FAMILY", "HOUSE":
		kind = "houses"
	case "MULTI_FAMILY":
		kind = "multi-family homes"
	}
	b.WriteString(kind + " for sale")
	if p.Location != "" {
		b.WriteString(" in " + p.Location)
	}
	if p.MinBeds > 0 {
		fmt.Fprintf(&b, " with at least %g bedrooms", p.MinBeds)
	}
	if p.MinBaths > 0 {
		fmt.Fprintf(&b, " and at least %g bathrooms", p.MinBaths)
	}
	if p.MinPrice > 0 {
		fmt.Fprintf(&b, " over $%.0f", p.MinPrice)
	}
	if p.MaxPrice > 0 {
		fmt.Fprintf(&b, " under $%.0f", p.MaxPrice)
	}
	return b.String()
}

// Search calls GET /search/byaiprompt.
func (c *Client) Search(ctx context.Context, p SearchParams) ([]Listing, error) {
	q := url.Values{"ai_search_prompt": {p.PromptText()}}
	if p.Page > 1 {
		q.Set("page", strconv.Itoa(p.Page))
	}
	var out struct {
		SearchResults []struct {
			Property map[string]any `json:"property"`
		} `json:"searchResults"`
	}
	if err := c.c.GetJSON(ctx, "/search/byaiprompt", q, &out); err != nil {
		return nil, err
	}
	listings := make([]Listing, 0, len(out.SearchResults))
	for _, r := range out.SearchResults {
		if r.Property == nil {
			continue
		}
		l := ParseListing(r.Property)
		if l.ZPID == "" {
			continue
		}
		listings = append(listings, l)
	}
	return listings, nil
}

// ErrNotFound is a property the API does not know (a soft 404).
var ErrNotFound = errors.New("realtyapi: no such property")

// GetDetails calls GET /pro/byzpid; a soft 404 is (nil, nil).
func (c *Client) GetDetails(ctx context.Context, zpid string) (*Listing, error) {
	zpid = strings.TrimSpace(zpid)
	if zpid == "" {
		return nil, errors.New("realtyapi: a property ID is required")
	}
	return c.details(ctx, "/pro/byzpid", url.Values{"zpid": {zpid}})
}

// GetDetailsByAddress calls GET /pro/byaddress; a soft 404 is (nil, nil).
func (c *Client) GetDetailsByAddress(ctx context.Context, address string) (*Listing, error) {
	address = strings.TrimSpace(address)
	if address == "" {
		return nil, errors.New("realtyapi: an address is required")
	}
	return c.details(ctx, "/pro/byaddress", url.Values{"propertyaddress": {address}})
}

func (c *Client) details(ctx context.Context, path string, q url.Values) (*Listing, error) {
	var body map[string]any
	err := c.c.GetJSON(ctx, path, q, &body)
	var se *httpclient.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if IsSoft404(body) {
		return nil, nil
	}
	pd, _ := body["propertyDetails"].(map[string]any)
	l := ParseListing(pd)
	if u, ok := body["zillowURL"].(string); ok && u != "" {
		l.URL = u
	}
	return &l, nil
}

// IsSoft404 reports an HTTP 200 answer that means "not found": its propertyDetails is missing
// or empty, or holds no zpid.
func IsSoft404(body map[string]any) bool {
	pd, ok := body["propertyDetails"].(map[string]any)
	if !ok || len(pd) == 0 {
		return true
	}
	z, ok := pd["zpid"]
	return !ok || z == nil || fmt.Sprint(z) == ""
}

// ParseListing maps a Zillow property object to a Listing.
func ParseListing(p map[string]any) Listing {
	var l Listing
	if p == nil {
		return l
	}
	switch z := p["zpid"].(type) {
	case string:
		l.ZPID = z
	case float64:
		l.ZPID = strconv.FormatFloat(z, 'f', -1, 64)
	case json.Number:
		l.ZPID = z.String()
	}
	switch a := p["address"].(type) {
	case map[string]any:
		var parts []string
		for _, k := range []string{"streetAddress", "city", "state", "zipcode"} {
			if s, ok := a[k].(string); ok && strings.TrimSpace(s) != "" {
				parts = append(parts, strings.TrimSpace(s))
			}
		}
		l.Address = strings.Join(parts, ", ")
	case string:
		l.Address = a
	}
	switch pr := p["price"].(type) {
	case map[string]any:
		l.Price = num(pr["value"])
	default:
		l.Price = num(pr)
	}
	l.Beds = num(p["bedrooms"])
	l.Baths = num(p["bathrooms"])
	l.Sqft = num(p["livingArea"])
	if s, ok := p["homeType"].(string); ok {
		l.PropertyType = s
	}
	l.PhotoURL = photo(p)
	l.Lat = num(p["latitude"])
	l.Lng = num(p["longitude"])
	if y := num(p["yearBuilt"]); y != nil {
		v := int(*y)
		l.YearBuilt = &v
	}
	l.LotSize = num(p["lotSize"])
	l.HOAFee = num(p["monthlyHoaFee"])
	if z := num(p["zestimate"]); z != nil {
		v := int64(math.Round(*z))
		l.Zestimate = &v
	}
	if u, ok := p["hdpUrl"].(string); ok && u != "" {
		if strings.HasPrefix(u, "/") {
			u = "https://www.zillow.com" + u
		}
		l.URL = u
	}
	if l.URL == "" && l.ZPID != "" {
		l.URL = "https://www.zillow.com/homedetails/" + l.ZPID + "_zpid/"
	}
	return l
}

// photo is originalPhotos[0].mixedSources.jpeg[0].url, else media.propertyPhotoLinks.mediumSizeLink.
func photo(p map[string]any) string {
	if ph, ok := p["originalPhotos"].([]any); ok && len(ph) > 0 {
		if first, ok := ph[0].(map[string]any); ok {
			if ms, ok := first["mixedSources"].(map[string]any); ok {
				if jp, ok := ms["jpeg"].([]any); ok && len(jp) > 0 {
					if j, ok := jp[0].(map[string]any); ok {
						if u, ok := j["url"].(string); ok && u != "" {
							return u
						}
					}
				}
			}
		}
	}
	if m, ok := p["media"].(map[string]any); ok {
		if links, ok := m["propertyPhotoLinks"].(map[string]any); ok {
			if u, ok := links["mediumSizeLink"].(string); ok {
				return u
			}
		}
	}
	return ""
}

// num reads a number given as a JSON number or a numeric string ("$1,200" included).
func num(v any) *float64 {
	switch n := v.(type) {
	case float64:
		return &n
	case json.Number:
		if f, err := n.Float64(); err == nil {
			return &f
		}
	case string:
		s := strings.NewReplacer("$", "", ",", "", " ", "").Replace(n)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return &f
		}
	}
	return nil
}

var (
	punct       = regexp.MustCompile(`[^A-Z0-9 ,#]+`)
	spaces      = regexp.MustCompile(`\s+`)
	zipRE       = regexp.MustCompile(`^\d{5}$`)
	zipPlus4    = regexp.MustCompile(`\b(\d{5})-\d{4}\b`)
	streetWords = map[string]string{
		"STREET": "ST", "AVENUE": "AVE", "ROAD": "RD", "DRIVE": "DR", "BOULEVARD": "BLVD", "LANE": "LN",
		"COURT": "CT", "PLACE": "PL", "TERRACE": "TER", "PARKWAY": "PKWY", "CIRCLE": "CIR", "HIGHWAY": "HWY",
		"NORTH": "N", "SOUTH": "S", "EAST": "E", "WEST": "W", "NORTHEAST": "NE", "NORTHWEST": "NW",
		"SOUTHEAST": "SE", "SOUTHWEST": "SW", "APARTMENT": "APT", "SUITE": "STE", "WAY": "WAY",
	}
	states = map[string]string{"TEXAS": "TX", "COLORADO": "CO", "WASHINGTON": "WA", "FLORIDA": "FL", "CALIFORNIA": "CA", "NEW YORK": "NY"}
)

// NormalizeAddress returns a pipe-delimited key for an address: "LINE1|CITY|STATE|ZIP", upper
// case, punctuation dropped, street suffixes and directions abbreviated ("123 Main Street,
// Austin, Texas 78701" and "123 main st austin tx 78701" give the same key where the commas allow).
func NormalizeAddress(address string) string {
	s := strings.ToUpper(address)
	s = zipPlus4.ReplaceAllString(s, "$1")
	s = punct.ReplaceAllString(s, " ")
	parts := strings.Split(s, ",")
	for i, p := range parts {
		words := strings.Fields(p)
		for j, w := range words {
			if a, ok := streetWords[w]; ok {
				words[j] = a
			}
		}
		parts[i] = spaces.ReplaceAllString(strings.Join(words, " "), " ")
	}
	var clean []string
	for _, p := range parts {
		if p != "" {
			clean = append(clean, p)
		}
	}
	// "CITY STATE ZIP" in one part, or "STATE ZIP": split them out.
	var line, city, state, zip string
	if len(clean) > 0 {
		line = clean[0]
	}
	tail := strings.Fields(strings.Join(clean[min(1, len(clean)):], " "))
	if n := len(tail); n > 0 && zipRE.MatchString(tail[n-1]) {
		zip, tail = tail[n-1], tail[:n-1]
	}
	if n := len(tail); n > 0 {
		if len(tail[n-1]) == 2 {
			state, tail = tail[n-1], tail[:n-1]
		} else if n > 1 {
			if st, ok := states[tail[n-2]+" "+tail[n-1]]; ok {
				state, tail = st, tail[:n-2]
			}
		}
		if state == "" {
			if st, ok := states[tail[len(tail)-1]]; ok {
				state, tail = st, tail[:len(tail)-1]
			}
		}
	}
	city = strings.Join(tail, " ")
	return strings.Join([]string{line, city, state, zip}, "|")
}
