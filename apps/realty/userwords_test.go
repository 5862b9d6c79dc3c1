package realty_test

import (
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/apps/realty/realtyapi"
)

// A buyer's own words through the server, on the offline model and the offline listings: every
// listing shown matches what was asked (place, rooms, budget, kind), a place the data has no
// homes in shows none, and a budget written as a ceiling is saved and used as a maximum.
func TestBuyersOwnWordsThroughTheServer(t *testing.T) {
	t.Parallel()
	_, base := serve(t)
	type want struct {
		city, kind          string
		beds, baths, budget float64
		none                bool // the data has no homes there
	}
	check := func(session, msg string, w want) []realtyapi.Listing {
		t.Helper()
		var r realty.ChatResponse
		if code := post(t, base+"/chat", `{"session_id": "`+session+`", "message": "`+msg+`"}`, &r); code != 200 {
			t.Fatalf("%q: %d %+v", msg, code, r)
		}
		if r.Data == nil || r.Data.Type != "listings" {
			t.Errorf("%q: no listings: %s", msg, r.Message)
			return nil
		}
		if !w.none && len(r.Data.Items) == 0 {
			t.Errorf("%q: no listings in %s: %s", msg, w.city, r.Message)
		}
		for _, l := range r.Data.Items {
			if !strings.Contains(l.Address, ", "+w.city+", ") || (w.kind != "" && l.PropertyType != w.kind) ||
				*l.Beds < w.beds || *l.Baths < w.baths || (w.budget > 0 && *l.Price > w.budget) {
				t.Errorf("%q: listing %s (%s, $%.0f, %g bd, %g ba) does not match %+v", msg, l.Address, l.PropertyType, *l.Price, *l.Beds, *l.Baths, w)
			}
		}
		return r.Data.Items
	}
	check("b-1", "hi, I'm hunting for a place in Denver, 3 bedrooms, under 750k", want{city: "Denver", beds: 3, budget: 750000})
	check("b-1", "show me townhouses only", want{city: "Denver", kind: "TOWNHOUSE", beds: 3, budget: 750000})
	check("b-2", "Seattle, $1.2M max, at least 2 baths", want{city: "Seattle", baths: 2, budget: 1200000})
	// "1.5 baths min" is a count, never a price; the answer states the filters searched.
	if got := check("b-2", "back to Seattle, condos with 1.5 baths min", want{city: "Seattle", kind: "CONDO", baths: 1.5}); len(got) == 0 {
		t.Errorf("no condos with 1.5 baths in Seattle")
	}
	check("b-3", "2 bed apartments near Miami, FL for $480k or less", want{city: "Miami", kind: "CONDO", beds: 2, budget: 480000})
	if got := check("b-4", "any homes in Boston below 900k?", want{city: "Boston", none: true}); len(got) != 0 {
		t.Errorf("Boston: %d listings from other cities", len(got))
	}
	zip := check("b-5", "houses in Austin", want{city: "Austin", kind: "SINGLE_FAMILY"})
	if len(zip) > 0 {
		z := zip[0].Address[strings.LastIndex(zip[0].Address, " ")+1:]
		for _, l := range check("b-5", "what about "+z+"?", want{city: "Austin", kind: "SINGLE_FAMILY"}) {
			if !strings.HasSuffix(l.Address, z) {
				t.Errorf("zip %s: %s", z, l.Address)
			}
		}
	}
	var saved realty.ChatResponse
	post(t, base+"/chat", `{"session_id": "b-6", "message": "note that I can spend no more than $650k, 3 bedrooms, in Austin"}`, &saved)
	var stated realty.ChatResponse
	post(t, base+"/chat", `{"session_id": "b-2", "message": "Seattle, 4 bedrooms, under $900k"}`, &stated)
	if !strings.Contains(stated.Message, "(at least 4 bd, under $900,000)") {
		t.Errorf("the answer does not state the filters: %s", stated.Message)
	}
	if !strings.Contains(saved.Message, "max_price: 650000") || strings.Contains(saved.Message, "min_price") {
		t.Errorf("saved criteria: %s", saved.Message)
	}
	post(t, base+"/chat", `{"session_id": "b-6", "message": "for later: 2 baths or more, $680k at most"}`, &saved)
	if !strings.Contains(saved.Message, "max_price: 680000") || strings.Contains(saved.Message, "location") {
		t.Errorf("saved criteria: %s", saved.Message)
	}
	check("b-7", "what's for sale for me?", want{city: "Austin", beds: 3, baths: 2, budget: 680000})
}
