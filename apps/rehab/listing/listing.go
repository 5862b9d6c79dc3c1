// Package listing reads Idealista listing pages through httpclient: the client fetches a
// listing's detail page (https://www.idealista.pt/imovel/<id>/) from a configurable base URL
// and parses the fields of the site's page (title, place, price, area, typology, features,
// description and photos), and fetches the photos. Demo serves at least ten Lisbon and Porto
// listings with labelled photos in the same page format, for the offline quick start and the
// tests; the client reads them exactly as it reads the site.
package listing

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/httpclient"
	"github.com/trellis-go/trellis/numfmt"
)

// DefaultBaseURL is Idealista Portugal.
const DefaultBaseURL = "https://www.idealista.pt"

// Listing is what a detail page says.
type Listing struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Title       string   `json:"title"`
	Location    string   `json:"location"`
	Price       float64  `json:"price"`
	AreaM2      float64  `json:"area_m2"`
	Typology    string   `json:"typology"`
	Features    []string `json:"features"`
	Description string   `json:"description"`
	Photos      []Photo  `json:"photos"`
}

// Photo is one picture of a listing, with the tag the site gives it and the area of the room
// when the listing states it.
type Photo struct {
	URL    string  `json:"url"`
	Tag    string  `json:"tag,omitempty"`
	AreaM2 float64 `json:"area_m2,omitempty"`
}

// Errors of Get; callers tell them apart with errors.Is.
var (
	// ErrBadURL is returned for a URL that is not an Idealista listing.
	ErrBadURL = errors.New("listing: not an Idealista listing URL; send one like https://www.idealista.pt/imovel/12345678/")
	// ErrRemoved is returned for a listing the site no longer publishes (404, 410, or its page
	// saying so).
	ErrRemoved = errors.New("listing: the listing was removed from the site")
	// ErrUnreadable is returned for a page that is not a listing the parser can read (no title
	// or no price).
	ErrUnreadable = errors.New("listing: the page is not a readable listing")
)

var idRE = regexp.MustCompile(`(?:^|/)imovel/(\d{4,12})/?`)

// ID extracts the listing ID from a URL (or a bare numeric ID).
func ID(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if regexp.MustCompile(`^\d{4,12}$`).MatchString(raw) {
		return raw, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !strings.Contains(u.Host, "idealista.") {
		return "", ErrBadURL
	}
	m := idRE.FindStringSubmatch(u.Path)
	if m == nil {
		return "", ErrBadURL
	}
	return m[1], nil
}

// CanonicalURL is the site's address of a listing.
func CanonicalURL(id string) string { return DefaultBaseURL + "/imovel/" + id + "/" }

// Client reads listings.
type Client struct {
	c    *httpclient.Client
	opts httpclient.Options
}

// New returns a client for baseURL ("" means DefaultBaseURL). opts may be nil.
func New(baseURL string, opts *httpclient.Options) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	var o httpclient.Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "idealista"
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = 4 << 20
	}
	c, err := httpclient.New(baseURL, &o)
	if err != nil {
		return nil, err
	}
	return &Client{c: c, opts: o}, nil
}

// Get fetches and parses a listing by URL or ID.
func (c *Client) Get(ctx context.Context, urlOrID string) (*Listing, error) {
	id, err := ID(urlOrID)
	if err != nil {
		return nil, err
	}
	resp, body, err := c.c.Bytes(ctx, http.MethodGet, "/imovel/"+id+"/", nil, nil, "")
	if err != nil {
		var se *httpclient.StatusError
		if errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusGone) {
			return nil, fmt.Errorf("%w: %s on %s (HTTP %d)", ErrRemoved, id, c.c.BaseURL(), se.Status)
		}
		return nil, err
	}
	_ = resp
	l, err := Parse(string(body))
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", id, err)
	}
	l.ID = id
	if l.URL == "" {
		l.URL = CanonicalURL(id)
	}
	return l, nil
}

// Photo fetches a photo's bytes and media type. A photo on the site's host (or a relative
// one) goes through the client; one on another host (the site's image servers) through a
// client for that host with the same options.
func (c *Client) Photo(ctx context.Context, photoURL string) ([]byte, string, error) {
	base, _ := url.Parse(c.c.BaseURL())
	u, err := url.Parse(photoURL)
	if err != nil {
		return nil, "", fmt.Errorf("listing: bad photo URL %q: %w", photoURL, err)
	}
	cl := c.c
	if u.Host != "" && u.Host != base.Host {
		o := c.opts
		o.Name = "idealista images"
		if cl, err = httpclient.New(u.Scheme+"://"+u.Host, &o); err != nil {
			return nil, "", err
		}
	}
	p := u.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if bp := strings.TrimSuffix(base.Path, "/"); u.Host == "" || u.Host == base.Host {
		p = strings.TrimPrefix(p, bp)
	}
	resp, body, err := cl.Bytes(ctx, http.MethodGet, p, u.Query(), nil, "")
	if err != nil {
		return nil, "", err
	}
	mt := resp.Header.Get("Content-Type")
	if mt == "" {
		mt = http.DetectContentType(body)
	}
	return body, mt, nil
}

var (
	reTitle     = regexp.MustCompile(`(?s)<span class="main-info__title-main">(.*?)</span>`)
	reOGTitle   = regexp.MustCompile(`<meta property="og:title" content="([^"]+)"`)
	reMinor     = regexp.MustCompile(`(?s)<span class="main-info__title-minor">(.*?)</span>`)
	reMapItem   = regexp.MustCompile(`(?s)<li class="header-map-list">(.*?)</li>`)
	rePrice     = regexp.MustCompile(`(?s)<span class="info-data-price">\s*<span class="txt-bold">([\d.\s\x{00A0}]+)</span>`)
	reFeatures  = regexp.MustCompile(`(?s)<div class="details-property_features">\s*<ul>(.*?)</ul>`)
	reInfoFeats = regexp.MustCompile(`(?s)<div class="info-features">(.*?)</div>`)
	reInfoSpan  = regexp.MustCompile(`(?s)<span><span>(.*?)</span>(.*?)</span>`)
	reLI        = regexp.MustCompile(`(?s)<li>(.*?)</li>`)
	reComment   = regexp.MustCompile(`(?s)<div class="adCommentsLanguage[^"]*">\s*<p>(.*?)</p>`)
	reComment2  = regexp.MustCompile(`(?s)<div class="comment">\s*<p>(.*?)</p>`)
	reCanon     = regexp.MustCompile(`<link rel="canonical" href="([^"]+)"`)
	reImg       = regexp.MustCompile(`<img class="detail-image"([^>]*)>`)
	reSiteImg   = regexp.MustCompile(`<img\s+src="(https?://img\d*\.idealista\.[a-z]+/[^"]+)"[^>]*?alt="([^"]*)"`)
	reGallery   = regexp.MustCompile(`"?imageUrl"?\s*:\s*"([^"]+)"\s*,\s*"?tag"?\s*:\s*"([^"]*)"`)
	reAttr      = regexp.MustCompile(`([a-z-]+)="([^"]*)"`)
	reArea      = regexp.MustCompile(`(\d+(?:[.,]\d+)?)\s*m²`)
	reTypology  = regexp.MustCompile(`\bT(\d)\b`)
	reTags      = regexp.MustCompile(`<[^>]+>`)
	reRemoved   = regexp.MustCompile(`(?i)deactivated-detail|anúncio já não está disponível|anúncio foi (?:removido|desativado)`)
)

func text(s string) string {
	return strings.Join(strings.Fields(html.UnescapeString(reTags.ReplaceAllString(s, " "))), " ")
}

// Parse reads a detail page, in any of the site's layouts the tests keep (testdata/pages):
// the current one (features list, gallery script), an older one (place in the header map,
// photos only in the gallery script, comment without a language block), a listing without
// photos. A page that says the listing was withdrawn gives ErrRemoved; one without a title or a
// price gives ErrUnreadable.
func Parse(page string) (*Listing, error) {
	if reRemoved.MatchString(page) {
		return nil, ErrRemoved
	}
	l := &Listing{}
	if m := reTitle.FindStringSubmatch(page); m != nil {
		l.Title = text(m[1])
	} else if m := reOGTitle.FindStringSubmatch(page); m != nil {
		l.Title = text(m[1])
	} else {
		return nil, fmt.Errorf("%w: the page has no listing title (main-info__title-main)", ErrUnreadable)
	}
	if m := reMinor.FindStringSubmatch(page); m != nil {
		l.Location = text(m[1])
	} else if items := reMapItem.FindAllStringSubmatch(page, -1); len(items) > 0 {
		// The header map lists street, neighbourhood and city: the last two are the place.
		var parts []string
		for _, it := range items {
			parts = append(parts, text(it[1]))
		}
		if len(parts) > 2 {
			parts = parts[len(parts)-2:]
		}
		l.Location = strings.Join(parts, ", ")
	}
	if m := rePrice.FindStringSubmatch(page); m != nil {
		digits := strings.NewReplacer(".", "", " ", "", "\u00a0", "").Replace(strings.TrimSpace(m[1]))
		l.Price, _ = strconv.ParseFloat(digits, 64)
	}
	if l.Price <= 0 {
		return nil, fmt.Errorf("%w: the page has no price (info-data-price)", ErrUnreadable)
	}
	addFeature := func(f string) {
		if f == "" {
			return
		}
		l.Features = append(l.Features, f)
		if l.AreaM2 == 0 {
			if a := reArea.FindStringSubmatch(f); a != nil {
				l.AreaM2, _ = strconv.ParseFloat(strings.Replace(a[1], ",", ".", 1), 64)
			}
		}
		if l.Typology == "" {
			if t := reTypology.FindStringSubmatch(f); t != nil {
				l.Typology = "T" + t[1]
			}
		}
	}
	if m := reFeatures.FindStringSubmatch(page); m != nil {
		for _, li := range reLI.FindAllStringSubmatch(m[1], -1) {
			addFeature(text(li[1]))
		}
	} else if m := reInfoFeats.FindStringSubmatch(page); m != nil {
		for _, sp := range reInfoSpan.FindAllStringSubmatch(m[1], -1) {
			addFeature(text(sp[1] + " " + sp[2]))
		}
	}
	if l.Typology == "" {
		if t := reTypology.FindStringSubmatch(l.Title); t != nil {
			l.Typology = "T" + t[1]
		}
	}
	if m := reComment.FindStringSubmatch(page); m != nil {
		l.Description = text(m[1])
	} else if m := reComment2.FindStringSubmatch(page); m != nil {
		l.Description = text(m[1])
	}
	if m := reCanon.FindStringSubmatch(page); m != nil {
		l.URL = html.UnescapeString(m[1])
	}
	seen := map[string]int{}
	addPhoto := func(p Photo) {
		if p.URL == "" {
			return
		}
		if i, ok := seen[p.URL]; ok {
			if l.Photos[i].Tag == "" {
				l.Photos[i].Tag = p.Tag
			}
			return
		}
		seen[p.URL] = len(l.Photos)
		l.Photos = append(l.Photos, p)
	}
	for _, img := range reImg.FindAllStringSubmatch(page, -1) {
		var p Photo
		for _, a := range reAttr.FindAllStringSubmatch(img[1], -1) {
			v := html.UnescapeString(a[2])
			switch a[1] {
			case "src", "data-ondemand-img":
				if p.URL == "" {
					p.URL = v
				}
			case "data-tag":
				p.Tag = v
			case "data-area":
				p.AreaM2, _ = strconv.ParseFloat(v, 64)
			}
		}
		addPhoto(p)
	}
	for _, m := range reSiteImg.FindAllStringSubmatch(page, -1) {
		addPhoto(Photo{URL: html.UnescapeString(m[1]), Tag: text(m[2])})
	}
	for _, m := range reGallery.FindAllStringSubmatch(page, -1) {
		addPhoto(Photo{URL: m[1], Tag: m[2]})
	}
	return l, nil
}

// Render writes a listing as a detail page in the site's format (the demo server's pages, and
// the tests' fixtures).
func Render(l *Listing) string {
	var b strings.Builder
	e := html.EscapeString
	b.WriteString("<!DOCTYPE html>\n<html lang=\"pt\"><head><meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>%s — idealista</title>\n<link rel=\"canonical\" href=\"%s\">\n</head><body>\n", e(l.Title), e(CanonicalURL(l.ID)))
	b.WriteString("<main class=\"detail-container\"><section class=\"detail-info\">\n<div class=\"main-info\">\n")
	fmt.Fprintf(&b, "<h1><span class=\"main-info__title-main\">%s</span></h1>\n", e(l.Title))
	fmt.Fprintf(&b, "<span class=\"main-info__title-minor\">%s</span>\n</div>\n", e(l.Location))
	fmt.Fprintf(&b, "<div class=\"info-data\">\n<span class=\"info-data-price\"><span class=\"txt-bold\">%s</span><span>€</span></span>\n",
		numfmt.Group(int64(l.Price), "."))
	fmt.Fprintf(&b, "<span><span>%s</span> m²</span> <span><span>%s</span></span>\n</div>\n", strconv.FormatFloat(l.AreaM2, 'f', -1, 64), e(l.Typology))
	b.WriteString("<div id=\"main-multimedia\" class=\"main-multimedia\">\n")
	for _, p := range l.Photos {
		fmt.Fprintf(&b, "<img class=\"detail-image\" src=\"%s\" data-tag=\"%s\"", e(p.URL), e(p.Tag))
		if p.AreaM2 > 0 {
			fmt.Fprintf(&b, " data-area=\"%s\"", strconv.FormatFloat(p.AreaM2, 'f', -1, 64))
		}
		fmt.Fprintf(&b, " alt=\"%s\">\n", e(p.Tag))
	}
	b.WriteString("</div>\n<div class=\"comment\">\n<div class=\"adCommentsLanguage expandable\">\n<p>")
	b.WriteString(e(l.Description))
	b.WriteString("</p>\n</div>\n</div>\n<section class=\"details-property\">\n<h2>Características específicas</h2>\n<div class=\"details-property_features\">\n<ul>")
	for _, f := range l.Features {
		fmt.Fprintf(&b, "<li>%s</li>", e(f))
	}
	b.WriteString("</ul>\n</div>\n</section>\n</section></main>\n</body></html>\n")
	return b.String()
}
