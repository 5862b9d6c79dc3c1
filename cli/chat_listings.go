package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/numfmt"
)

// chatListing is one listing of a tool's structured result of the shape {"type": "listings" |
// "detail", "items": [...]} (the realty assistant's property tools).
type chatListing struct {
	Address string   `json:"address"`
	Price   *float64 `json:"price"`
	Beds    *float64 `json:"beds"`
	Baths   *float64 `json:"baths"`
	Sqft    *float64 `json:"sqft"`
}

// listingsTable renders a structured tool result of listings as a compact table (price, beds,
// baths, area, address); anything else renders as nothing.
func listingsTable(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var d struct {
		Type  string        `json:"type"`
		Items []chatListing `json:"items"`
	}
	if json.Unmarshal(raw, &d) != nil || (d.Type != "listings" && d.Type != "detail") || len(d.Items) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %12s %5s %5s %9s  %s\n", "price", "beds", "baths", "area", "address")
	for _, l := range d.Items {
		area := "?"
		if l.Sqft != nil {
			area = numfmt.GroupFloat(*l.Sqft, ",") + " ft²"
		}
		price := "?"
		if l.Price != nil {
			price = "$" + numfmt.GroupFloat(*l.Price, ",")
		}
		fmt.Fprintf(&b, "  %12s %5s %5s %9s  %s\n", price, chatNum(l.Beds), chatNum(l.Baths), area, oneLine(l.Address, 60))
	}
	return b.String()
}

func chatNum(p *float64) string {
	if p == nil {
		return "?"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}
