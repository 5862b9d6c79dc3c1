package realtyapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/realty/realtyapi"
	"github.com/trellis-go/trellis/httpclient"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseListingFieldMap(t *testing.T) {
	t.Parallel()
	l := realtyapi.ParseListing(decode(t, `{
		"zpid": 29384756,
		"address": {"streetAddress": "12 Oak St", "city": "Austin", "state": "TX", "zipcode": "78701"},
		"price": {"value": 450000, "pricePerSquareFoot": 300},
		"bedrooms": 3, "bathrooms": 2.5, "livingArea": 1500, "homeType": "SINGLE_FAMILY",
		"originalPhotos": [{"mixedSources": {"jpeg": [{"url": "https://p/1.jpg"}, {"url": "https://p/2.jpg"}]}}],
		"media": {"propertyPhotoLinks": {"mediumSizeLink": "https://p/medium.jpg"}},
		"latitude": 30.1, "longitude": -97.7, "yearBuilt": 1999,
		"lotSize": 6534, "lotAreaValue": 0.15, "lotAreaUnits": "Acres",
		"monthlyHoaFee": 120, "zestimate": 455123.6, "hdpUrl": "/homedetails/12-Oak/29384756_zpid/"}`))
	want := func(name string, got *float64, v float64) {
		if got == nil || *got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	if l.ZPID != "29384756" || l.Address != "12 Oak St, Austin, TX, 78701" || l.PropertyType != "SINGLE_FAMILY" {
		t.Errorf("%+v", l)
	}
	want("price", l.Price, 450000)
	want("beds", l.Beds, 3)
	want("baths", l.Baths, 2.5)
	want("sqft", l.Sqft, 1500)
	want("lat", l.Lat, 30.1)
	want("lng", l.Lng, -97.7)
	want("lot_size (square feet, not lotAreaValue)", l.LotSize, 6534)
	want("hoa_fee", l.HOAFee, 120)
	if l.PhotoURL != "https://p/1.jpg" {
		t.Errorf("photo %q", l.PhotoURL)
	}
	if l.YearBuilt == nil || *l.YearBuilt != 1999 || l.Zestimate == nil || *l.Zestimate != 455124 {
		t.Errorf("year %v zestimate %v", l.YearBuilt, l.Zestimate)
	}
	if l.URL != "https://www.zillow.com/homedetails/12-Oak/29384756_zpid/" {
		t.Errorf("url %q", l.URL)
	}

	// A scalar price, the photo from media, a zpid as a string, the search shape (no coordinates).
	s := realtyapi.ParseListing(decode(t, `{"zpid": "77", "address": {"streetAddress": "1 Elm Ave", "city": "Miami", "state": "FL", "zipcode": ""},
		"price": 300000, "media": {"propertyPhotoLinks": {"mediumSizeLink": "https://p/m.jpg"}}, "zestimate": "310000", "monthlyHoaFee": null}`))
	if s.ZPID != "77" || *s.Price != 300000 || s.PhotoURL != "https://p/m.jpg" || s.Address != "1 Elm Ave, Miami, FL" || *s.Zestimate != 310000 {
		t.Errorf("%+v", s)
	}
	if s.Lat != nil || s.Lng != nil || s.HOAFee != nil || s.Beds != nil || s.URL != "https://www.zillow.com/homedetails/77_zpid/" {
		t.Errorf("absent fields set: %+v", s)
	}
	b, _ := json.Marshal(s)
	if strings.Contains(string(b), "lat") || strings.Contains(string(b), "hoa_fee") {
		t.Errorf("absent fields in JSON: %s", b)
	}
}

func TestSoft404(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]bool{
		`{"message": "404: NotFound", "propertyDetails": {}}`:         true,
		`{"message": "200: Success"}`:                                 true,
		`{"propertyDetails": {"address": {}}}`:                        true,
		`{"propertyDetails": {"zpid": null}}`:                         true,
		`{"message": "200: Success", "propertyDetails": {"zpid": 1}}`: false,
	} {
		if got := realtyapi.IsSoft404(decode(t, body)); got != want {
			t.Errorf("IsSoft404(%s) = %v", body, got)
		}
	}
}

func TestNormalizeAddress(t *testing.T) {
	t.Parallel()
	a := realtyapi.NormalizeAddress("123 Main Street, Austin, Texas 78701")
	b := realtyapi.NormalizeAddress("123 main st., austin, TX, 78701-1234")
	if a != "123 MAIN ST|AUSTIN|TX|78701" || a != b {
		t.Errorf("%q %q", a, b)
	}
	if got := realtyapi.NormalizeAddress("9 North Lake Drive, Seattle WA"); got != "9 N LAKE DR|SEATTLE|WA|" {
		t.Errorf("%q", got)
	}
}

func offlineClient(t *testing.T, key string) (*realtyapi.Client, *httptest.Server) {
	srv := httptest.NewServer(realtyapi.Handler(realtyapi.Offline("/photos"), "secret-key-1"))
	t.Cleanup(srv.Close)
	c, err := realtyapi.New(srv.URL, &realtyapi.Options{Key: key, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func TestOfflineDataSet(t *testing.T) {
	t.Parallel()
	props := realtyapi.Offline("/photos")
	if len(props) < 40 {
		t.Fatalf("%d listings, want at least 40", len(props))
	}
	cities := map[string]int{}
	for _, p := range props {
		l := realtyapi.ParseListing(p)
		city := strings.Split(l.Address, ", ")[1]
		cities[city]++
		if l.Lat == nil || l.Lng == nil || l.PhotoURL == "" || l.Price == nil || l.Beds == nil || l.Sqft == nil || l.LotSize == nil || l.Zestimate == nil {
			t.Errorf("incomplete listing %+v", l)
		}
	}
	if len(cities) != 4 {
		t.Errorf("cities %v", cities)
	}
}

func TestClientAgainstTheWireFormat(t *testing.T) {
	t.Parallel()
	c, _ := offlineClient(t, "secret-key-1")
	ctx := context.Background()
	ls, err := c.Search(ctx, realtyapi.SearchParams{Location: "Denver, CO", MinBeds: 3, MaxPrice: 900000})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) == 0 {
		t.Fatal("no results")
	}
	for _, l := range ls {
		if !strings.Contains(l.Address, "Denver") || *l.Beds < 3 || *l.Price > 900000 || l.Lat != nil {
			t.Errorf("listing %+v does not match (or has coordinates, which search does not give)", l)
		}
	}
	d, err := c.GetDetails(ctx, ls[0].ZPID)
	if err != nil || d == nil || d.ZPID != ls[0].ZPID || d.Lat == nil || d.YearBuilt == nil || !strings.HasPrefix(d.URL, "https://www.zillow.com/homedetails/") {
		t.Fatalf("details %+v %v", d, err)
	}
	byAddr, err := c.GetDetailsByAddress(ctx, strings.ToLower(d.Address))
	if err != nil || byAddr == nil || byAddr.ZPID != d.ZPID {
		t.Errorf("by address %+v %v", byAddr, err)
	}
	if none, err := c.GetDetails(ctx, "1"); none != nil || err != nil {
		t.Errorf("soft 404: %+v %v", none, err)
	}
	if none, err := c.GetDetailsByAddress(ctx, "1 Nowhere Rd, Austin, TX"); none != nil || err != nil {
		t.Errorf("soft 404 by address: %+v %v", none, err)
	}
	condos, _ := c.Search(ctx, realtyapi.SearchParams{Prompt: "condos in Miami under $500k"})
	for _, l := range condos {
		if l.PropertyType != "CONDO" || *l.Price > 500000 {
			t.Errorf("condo search gave %+v", l)
		}
	}

	bad, _ := offlineClient(t, "wrong")
	_, err = bad.Search(ctx, realtyapi.SearchParams{Location: "Austin"})
	var se *httpclient.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusUnauthorized {
		t.Errorf("a wrong key: %v", err)
	}
}
