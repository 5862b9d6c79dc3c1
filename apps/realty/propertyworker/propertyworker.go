// Package propertyworker is the property skill's worker, written in Go: the tools
// search_properties, get_property_details and get_property_details_by_address on the RealtyAPI
// client, served as a tool/worker (GET /schema, POST /execute).
//
// The worker reads only its settings (worker.Settings), which the pool fills from the skill's env
// file and the app's settings: REALTY_API_BASE (the API's base URL; the app's offline server when
// no key is configured) and REALTY_API_KEY. Importing the package makes the executable able to serve as the worker: the
// pool starts it with TRELLIS_WORKER=property (see worker.ServeIfChild), so the trellis binary
// and test binaries are their own workers. cmd/propertyworker is the same worker as a program of
// its own, for a container image.
package propertyworker

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/trellis-go/trellis/apps/realty/realtyapi"
	"github.com/trellis-go/trellis/numfmt"
	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/worker"
)

// Name is the skill the worker serves.
const Name = "property"

func init() {
	worker.ServeIfChild(Name, ToolsFromSettings)
}

// Main serves the worker whatever started the process (cmd/propertyworker), and exits when it
// stops.
func Main() {
	if err := worker.Serve(Name, ToolsFromSettings); err != nil {
		fmt.Fprintln(os.Stderr, "propertyworker:", err)
		os.Exit(1)
	}
}

// ToolsFromSettings builds the tools on a client configured by the worker's settings
// REALTY_API_BASE and REALTY_API_KEY.
func ToolsFromSettings(s worker.Settings) ([]tool.Tool, error) {
	c, err := realtyapi.New(s.Get("REALTY_API_BASE"), &realtyapi.Options{Key: s.Get("REALTY_API_KEY")})
	if err != nil {
		return nil, err
	}
	return Tools(c)
}

// SearchArgs are search_properties' arguments.
type SearchArgs struct {
	Location     string  `json:"location,omitempty" jsonschema:"the city and state to search in, e.g. Austin, TX; leave it out to use the user's saved criteria"`
	MinPrice     float64 `json:"min_price,omitempty" jsonschema:"the lowest price in US dollars"`
	MaxPrice     float64 `json:"max_price,omitempty" jsonschema:"the highest price in US dollars"`
	Bedrooms     float64 `json:"bedrooms,omitempty" jsonschema:"the fewest bedrooms"`
	Bathrooms    float64 `json:"bathrooms,omitempty" jsonschema:"the fewest bathrooms"`
	PropertyType string  `json:"property_type,omitempty" enum:"any,SINGLE_FAMILY,CONDO,TOWNHOUSE,MULTI_FAMILY" jsonschema:"the kind of home; any when the user did not say"`
	Limit        int     `json:"limit,omitempty" minimum:"1" maximum:"20" jsonschema:"how many listings to return; 10 when not given"`
}

// criteria are the filters of a search besides its place, as the answer states them
// (" (condo, at least 2 bd, under $650,000)"), so that a user sees what was searched, saved
// criteria included; "" when there are none.
func (a SearchArgs) criteria() string {
	var out []string
	if t := a.PropertyType; t != "" && t != "any" {
		out = append(out, strings.ToLower(strings.ReplaceAll(t, "_", " ")))
	}
	if a.Bedrooms > 0 {
		out = append(out, fmt.Sprintf("at least %g bd", a.Bedrooms))
	}
	if a.Bathrooms > 0 {
		out = append(out, fmt.Sprintf("at least %g ba", a.Bathrooms))
	}
	if a.MinPrice > 0 {
		out = append(out, "over "+money(&a.MinPrice))
	}
	if a.MaxPrice > 0 {
		out = append(out, "under "+money(&a.MaxPrice))
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, ", ") + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// DetailArgs are get_property_details' arguments.
type DetailArgs struct {
	ZPID string `json:"zpid,omitempty" jsonschema:"the Zillow property ID (zpid) of a listing; leave it out for the listing the user points at in the last search (the first one, the cheapest)"`
}

// AddressArgs are get_property_details_by_address' arguments.
type AddressArgs struct {
	Address string `json:"address" jsonschema:"the full street address, e.g. 123 Main St, Austin, TX 78701"`
}

// Data is the structured result of the property tools: {"type": "listings" | "detail", "items": [...]}.
type Data struct {
	Type  string              `json:"type"`
	Items []realtyapi.Listing `json:"items"`
}

func money(p *float64) string {
	if p == nil {
		return "price unknown"
	}
	return "$" + numfmt.GroupFloat(*p, ",")
}

func f(p *float64) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprintf("%g", *p)
}

// Line is one listing in a line of text.
func Line(l realtyapi.Listing) string {
	return fmt.Sprintf("%s — %s, %s bd / %s ba, %s sqft, %s (zpid %s)", l.Address, money(l.Price), f(l.Beds), f(l.Baths), f(l.Sqft),
		strings.ToLower(strings.ReplaceAll(l.PropertyType, "_", " ")), l.ZPID)
}

func detailText(l realtyapi.Listing) string {
	var b strings.Builder
	b.WriteString(Line(l))
	if l.YearBuilt != nil {
		fmt.Fprintf(&b, "\nYear built: %d", *l.YearBuilt)
	}
	if l.LotSize != nil {
		fmt.Fprintf(&b, "\nLot size: %.0f sqft", *l.LotSize)
	}
	if l.HOAFee != nil {
		fmt.Fprintf(&b, "\nHOA fee: %s/month", money(l.HOAFee))
	}
	if l.Zestimate != nil {
		z := float64(*l.Zestimate)
		fmt.Fprintf(&b, "\nZestimate: %s", money(&z))
	}
	if l.Lat != nil && l.Lng != nil {
		fmt.Fprintf(&b, "\nLocation: %.5f, %.5f", *l.Lat, *l.Lng)
	}
	if l.URL != "" {
		b.WriteString("\nZillow: " + l.URL)
	}
	return b.String()
}

// Tools returns the three property tools on the client.
func Tools(c *realtyapi.Client) ([]tool.Tool, error) {
	search, err := tool.New("search_properties", "Search properties for sale (homes, houses, condos, townhouses, apartments) in a US city such as Austin, Denver, Seattle or Miami, by price (under or over an amount), bedrooms, bathrooms and kind of home; find listings. Returns listings with their property IDs (zpid).",
		func(ctx context.Context, a SearchArgs) (*tool.Result, error) {
			if strings.TrimSpace(a.Location) == "" {
				return tool.Errorf("search_properties needs a location: ask the user which city to search in"), nil
			}
			pt := a.PropertyType
			if pt == "any" {
				pt = ""
			}
			ls, err := c.Search(ctx, realtyapi.SearchParams{Location: a.Location, MinPrice: a.MinPrice, MaxPrice: a.MaxPrice, MinBeds: a.Bedrooms, MinBaths: a.Bathrooms, PropertyType: pt})
			if err != nil {
				return nil, err
			}
			limit := a.Limit
			if limit <= 0 {
				limit = 10
			}
			total := len(ls)
			if len(ls) > limit {
				ls = ls[:limit]
			}
			var b strings.Builder
			if total == 0 {
				fmt.Fprintf(&b, "No listings matched in %s%s. Suggest widening the price range or lowering the bedrooms.", a.Location, a.criteria())
			} else {
				fmt.Fprintf(&b, "Found %d %s in %s%s (showing %d):", total, plural(total, "listing", "listings"), a.Location, a.criteria(), len(ls))
				for _, l := range ls {
					b.WriteString("\n- " + Line(l))
				}
			}
			return structured(b.String(), Data{Type: "listings", Items: nonNil(ls)})
		})
	if err != nil {
		return nil, err
	}
	details, err := tool.New("get_property_details", "Get the details of one listing (property, home) by its property ID (zpid): year built, lot size, HOA fee, zestimate and its location on the map.",
		func(ctx context.Context, a DetailArgs) (*tool.Result, error) {
			if strings.TrimSpace(a.ZPID) == "" {
				return tool.Errorf("get_property_details needs a zpid: take it from the search results, or ask the user which listing"), nil
			}
			l, err := c.GetDetails(ctx, a.ZPID)
			if err != nil {
				return nil, err
			}
			if l == nil {
				return tool.Errorf("No property with ID %s was found. Check the zpid from the search results.", a.ZPID), nil
			}
			return structured(detailText(*l), Data{Type: "detail", Items: []realtyapi.Listing{*l}})
		})
	if err != nil {
		return nil, err
	}
	byAddress, err := tool.New("get_property_details_by_address", "Get the details of a property by its street address.",
		func(ctx context.Context, a AddressArgs) (*tool.Result, error) {
			l, err := c.GetDetailsByAddress(ctx, a.Address)
			if err != nil {
				return nil, err
			}
			if l == nil {
				return tool.Errorf("No property was found at %q. Check the street, city and state.", a.Address), nil
			}
			return structured(detailText(*l), Data{Type: "detail", Items: []realtyapi.Listing{*l}})
		})
	if err != nil {
		return nil, err
	}
	return []tool.Tool{search, details, byAddress}, nil
}

func nonNil(ls []realtyapi.Listing) []realtyapi.Listing {
	if ls == nil {
		return []realtyapi.Listing{}
	}
	return ls
}

func structured(text string, d Data) (*tool.Result, error) {
	b, err := jsonMarshal(d)
	if err != nil {
		return nil, err
	}
	return &tool.Result{Content: text, Structured: b}, nil
}
