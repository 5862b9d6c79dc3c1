package realtyapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// City is a city of the offline data set.
type City struct {
	Name, State, Zip string
	Lat, Lng         float64
	// Base is the price of a typical 3-bedroom house.
	Base float64
}

// Cities are the four cities of the offline data set.
var Cities = []City{
	{"Austin", "TX", "787", 30.2672, -97.7431, 520000},
	{"Denver", "CO", "802", 39.7392, -104.9903, 610000},
	{"Seattle", "WA", "981", 47.6062, -122.3321, 840000},
	{"Miami", "FL", "331", 25.7617, -80.1918, 560000},
}

var (
	streets = []string{"Oak", "Maple", "Cedar", "Pine", "Elm", "Willow", "Lake", "Hill", "Park", "River", "Sunset", "Highland"}
	suffix  = []string{"Street", "Avenue", "Drive", "Lane", "Court", "Road"}
	kinds   = []string{"SINGLE_FAMILY", "CONDO", "TOWNHOUSE", "SINGLE_FAMILY", "MULTI_FAMILY", "SINGLE_FAMILY"}
)

// PerCity is how many offline listings each city has.
const PerCity = 12

// Offline returns the generated data set: PerCity properties in each of the four cities, as the
// detail endpoints give them (Zillow's field names), with coordinates and photos. The photo
// URLs are photoBase + "/<zpid>.svg" (see [PhotoSVG]). The wire shapes vary on purpose, as
// Zillow's do: the price is an object on some and a number on others, the photo comes from
// originalPhotos or from media.propertyPhotoLinks, and the zestimate is fractional on some.
func Offline(photoBase string) []map[string]any {
	var out []map[string]any
	for ci, c := range Cities {
		for i := range PerCity {
			n := ci*PerCity + i
			zpid := 20000000 + n*7919
			kind := kinds[i%len(kinds)]
			beds := float64(1 + (i*7+ci)%5)
			if kind == "MULTI_FAMILY" {
				beds += 2
			}
			baths := math.Max(1, beds-float64(i%2)) - 0.5*float64(i%3/2)
			sqft := 650 + beds*380 + float64((i*137+ci*53)%400)
			price := c.Base * (0.55 + 0.18*beds + 0.03*float64(i%4))
			if kind == "CONDO" {
				price *= 0.7
			}
			price = math.Round(price/1000) * 1000
			street := fmt.Sprintf("%d %s %s", 100+(i*311+ci*97)%9800, streets[(i+ci*3)%len(streets)], suffix[(i+ci)%len(suffix)])
			zip := fmt.Sprintf("%s%02d", c.Zip, (i*3+ci)%40+1)
			lat := c.Lat + 0.012*float64((i%5)-2) + 0.004*float64(i%3)
			lng := c.Lng + 0.015*float64((i/5)-1) - 0.003*float64(i%4)
			photo := fmt.Sprintf("%s/%d.svg", strings.TrimRight(photoBase, "/"), zpid)
			lot := 2500 + float64((i*911+ci*31)%9000)
			p := map[string]any{
				"zpid":       zpid,
				"address":    map[string]any{"streetAddress": street, "city": c.Name, "state": c.State, "zipcode": zip},
				"bedrooms":   beds,
				"bathrooms":  baths,
				"livingArea": sqft,
				"homeType":   kind,
				"latitude":   math.Round(lat*1e6) / 1e6,
				"longitude":  math.Round(lng*1e6) / 1e6,
				"yearBuilt":  1950 + (i*13+ci*7)%73,
				"lotSize":    lot,
				// lotAreaValue is in acres: the parser must not take it.
				"lotAreaValue":  math.Round(lot/43560*100) / 100,
				"lotAreaUnits":  "Acres",
				"monthlyHoaFee": nil,
				"zestimate":     price * (0.97 + 0.01*float64(i%6)),
				"hdpUrl":        fmt.Sprintf("/homedetails/%s-%s-%s-%s/%d_zpid/", strings.ReplaceAll(street, " ", "-"), c.Name, c.State, zip, zpid),
			}
			if kind == "CONDO" || kind == "TOWNHOUSE" {
				p["monthlyHoaFee"] = float64(150 + (i*41)%350)
			}
			if i%2 == 0 {
				p["price"] = map[string]any{"value": price, "pricePerSquareFoot": math.Round(price / sqft)}
				p["originalPhotos"] = []any{map[string]any{"mixedSources": map[string]any{"jpeg": []any{map[string]any{"url": photo, "width": 576}}}}}
			} else {
				p["price"] = price
				p["zestimate"] = math.Round(price * 1.01)
				p["media"] = map[string]any{"propertyPhotoLinks": map[string]any{"mediumSizeLink": photo}}
			}
			out = append(out, p)
		}
	}
	// As the wire gives them: numbers as float64, nulls as nil.
	b, _ := json.Marshal(out)
	out = nil
	_ = json.Unmarshal(b, &out)
	return out
}

// searchView is a property as the search endpoint gives it: no coordinates.
func searchView(p map[string]any) map[string]any {
	s := make(map[string]any, len(p))
	for k, v := range p {
		switch k {
		case "latitude", "longitude", "yearBuilt", "lotSize", "lotAreaValue", "lotAreaUnits", "monthlyHoaFee":
			continue
		}
		s[k] = v
	}
	return s
}

var (
	bedsRE  = regexp.MustCompile(`(\d+)\+?\s*(?:-|\s)?(?:bed|bedroom|br\b|bd\b)`)
	bathsRE = regexp.MustCompile(`(\d+(?:\.\d)?)\+?\s*(?:bath|bathroom|ba\b)`)
	underRE = regexp.MustCompile(`(?:under|below|less than|max(?:imum)?|up to|<)\s*\$?\s*([\d.,]+)\s*(k|m|thousand|million)?`)
	placeRE = regexp.MustCompile(`\bin\s+(.+?)(?:\s+(?:with|over|under|and|between|below|above|for|at|priced)\b|[.;?!]|$)`)
	zipInRE = regexp.MustCompile(`\b\d{5}\b`)
	overRE  = regexp.MustCompile(`(?:over|above|more than|min(?:imum)?|at least|>)\s*\$\s*([\d.,]+)\s*(k|m|thousand|million)?`)
)

func amount(s, unit string) float64 {
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		return 0
	}
	switch unit {
	case "k", "thousand":
		f *= 1000
	case "m", "million":
		f *= 1e6
	}
	return f
}

// matches reads a search prompt the way the offline API does: a city (or its state), bedrooms,
// bathrooms, a price range and a kind of home.
func matches(prompt string, p map[string]any) bool {
	q := strings.ToLower(prompt)
	addr := p["address"].(map[string]any)
	cityNamed := false
	for _, c := range Cities {
		if strings.Contains(q, strings.ToLower(c.Name)) {
			cityNamed = true
		}
	}
	if cityNamed && !strings.Contains(q, strings.ToLower(addr["city"].(string))) {
		return false
	}
	// A place the data set has no city for matches by ZIP code or state, else nothing: the API
	// answers for the place asked, never for another.
	if m := placeRE.FindStringSubmatch(prompt); m != nil && !cityNamed {
		place := strings.TrimSpace(m[1])
		switch zip := zipInRE.FindString(place); {
		case zip != "":
			if addr["zipcode"] != zip {
				return false
			}
		case !strings.EqualFold(place, addr["state"].(string)):
			return false
		}
	}
	price := 0.0
	switch v := p["price"].(type) {
	case map[string]any:
		price = v["value"].(float64)
	case float64:
		price = v
	}
	if m := bedsRE.FindStringSubmatch(q); m != nil {
		if b, _ := strconv.ParseFloat(m[1], 64); p["bedrooms"].(float64) < b {
			return false
		}
	}
	if m := bathsRE.FindStringSubmatch(q); m != nil {
		if b, _ := strconv.ParseFloat(m[1], 64); p["bathrooms"].(float64) < b {
			return false
		}
	}
	if m := underRE.FindStringSubmatch(q); m != nil {
		if max := amount(m[1], m[2]); max > 0 && price > max {
			return false
		}
	}
	if m := overRE.FindStringSubmatch(q); m != nil {
		if min := amount(m[1], m[2]); min > 0 && price < min {
			return false
		}
	}
	kind := p["homeType"].(string)
	switch {
	case strings.Contains(q, "condo") || strings.Contains(q, "apartment"):
		return kind == "CONDO"
	case strings.Contains(q, "townhouse") || strings.Contains(q, "townhome"):
		return kind == "TOWNHOUSE"
	case strings.Contains(q, "multi-family") || strings.Contains(q, "multi family") || strings.Contains(q, "duplex"):
		return kind == "MULTI_FAMILY"
	case strings.Contains(q, "house") && !strings.Contains(q, "houses or"):
		return kind == "SINGLE_FAMILY"
	}
	return true
}

// Handler serves properties in RealtyAPI's wire format: GET /search/byaiprompt
// (?ai_search_prompt=, at most 20 results a page, ?page=), GET /pro/byzpid (?zpid=) and GET
// /pro/byaddress (?propertyaddress=, matched through NormalizeAddress), with the soft 404 of the
// real API for a property it does not know, and 400 naming a missing parameter. When key is not
// empty, a request without it in x-realtyapi-key is answered 401.
func Handler(props []map[string]any, key string) http.Handler {
	byZPID := map[string]map[string]any{}
	byAddr := map[string]map[string]any{}
	byLine := map[string][]map[string]any{} // the street line alone, as people often write it
	for _, p := range props {
		l := ParseListing(p)
		byZPID[l.ZPID] = p
		key := NormalizeAddress(l.Address)
		byAddr[key] = p
		line, _, _ := strings.Cut(key, "|")
		byLine[line] = append(byLine[line], p)
	}
	lookup := func(a string) map[string]any {
		key := NormalizeAddress(a)
		if p := byAddr[key]; p != nil {
			return p
		}
		line, rest, _ := strings.Cut(key, "|")
		var found []map[string]any
		for _, p := range byLine[line] {
			// The parts given (city, state) must agree with the listing's.
			pk := NormalizeAddress(ParseListing(p).Address)
			ok := true
			for _, part := range strings.Split(rest, "|") {
				if part != "" && !strings.Contains(pk, "|"+part) {
					ok = false
				}
			}
			if ok {
				found = append(found, p)
			}
		}
		if len(found) == 1 {
			return found[0]
		}
		return nil
	}
	write := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	detail := func(w http.ResponseWriter, p map[string]any) {
		if p == nil {
			write(w, 200, map[string]any{"message": "404: NotFound", "source": "zillow", "propertyDetails": map[string]any{}})
			return
		}
		l := ParseListing(p)
		write(w, 200, map[string]any{"message": "200: Success", "source": "zillow", "zillowURL": l.URL, "propertyDetails": p})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search/byaiprompt", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("ai_search_prompt")
		if strings.TrimSpace(q) == "" {
			write(w, 400, map[string]any{"message": "400: ai_search_prompt is required"})
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		var res []any
		for _, p := range props {
			if matches(q, p) {
				res = append(res, map[string]any{"property": searchView(p)})
			}
		}
		total := len(res)
		from, to := min((page-1)*20, total), min(page*20, total)
		write(w, 200, map[string]any{"message": "200: Success", "source": "zillow", "resultsCount": map[string]any{"totalMatchingCount": total},
			"pagesInfo": map[string]any{"currentPage": page, "totalPages": (total + 19) / 20}, "searchResults": append([]any{}, res[from:to]...)})
	})
	mux.HandleFunc("GET /pro/byzpid", func(w http.ResponseWriter, r *http.Request) {
		z := r.URL.Query().Get("zpid")
		if z == "" {
			write(w, 400, map[string]any{"message": "400: zpid is required"})
			return
		}
		detail(w, byZPID[z])
	})
	mux.HandleFunc("GET /pro/byaddress", func(w http.ResponseWriter, r *http.Request) {
		a := r.URL.Query().Get("propertyaddress")
		if a == "" {
			write(w, 400, map[string]any{"message": "400: propertyaddress is required"})
			return
		}
		detail(w, lookup(a))
	})
	if key == "" {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(KeyHeader) != key {
			write(w, 401, map[string]any{"message": "401: invalid or missing API key"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// PhotoSVG draws a house for an offline listing's photo: the colours follow the zpid.
func PhotoSVG(zpid string) []byte {
	h := 0
	for _, c := range zpid {
		h = h*31 + int(c)
	}
	h = (h%360 + 360) % 360
	return fmt.Appendf(nil, `<svg xmlns="http://www.w3.org/2000/svg" width="576" height="384" viewBox="0 0 576 384">`+
		`<rect width="576" height="384" fill="hsl(%d,55%%,85%%)"/><rect y="300" width="576" height="84" fill="hsl(110,35%%,55%%)"/>`+
		`<polygon points="148,170 288,70 428,170" fill="hsl(%d,45%%,35%%)"/><rect x="168" y="170" width="240" height="150" fill="hsl(%d,30%%,92%%)"/>`+
		`<rect x="270" y="240" width="40" height="80" fill="hsl(%d,40%%,30%%)"/><rect x="195" y="200" width="45" height="40" fill="#9cc9f0"/>`+
		`<rect x="335" y="200" width="45" height="40" fill="#9cc9f0"/><text x="20" y="40" font-family="sans-serif" font-size="22" fill="#333">zpid %s</text></svg>`,
		h, (h+180)%360, h, (h+90)%360, zpid)
}
