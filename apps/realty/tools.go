package realty

// The tools the agent uses besides the skills' own: each skill tool routed to its worker with
// its results sanitised and summarised, and the saved search criteria.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/apps/realty/realtyapi"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

// routed is a skill's tool as the agent calls it: search_properties takes what it lacks from the
// saved preferences, and a useful result is scored and kept in the skill's history (L3).
type routed struct {
	tool.Tool
	skill string
	a     *Realty
}

func (r *routed) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	tenant := tenantOf(ctx)
	name := r.Spec().Name
	if name == "search_properties" {
		var err error
		if args, err = r.a.withSavedCriteria(ctx, tenant, args); err != nil {
			return nil, err
		}
	}
	if name == "get_property_details" {
		args = pointedListing(ctx, args)
	}
	res, err := r.Tool.Call(ctx, args)
	if err != nil {
		// An upstream error can quote the upstream's answer: its text is sanitized before the
		// executor logs it or turns it into the result the model reads.
		return nil, &sanitizedError{msg: r.a.san.Sanitize(err.Error()), err: err}
	}
	if res == nil {
		return nil, nil
	}
	// Sanitized here, before anything reads it (the executor's filter does it again for the
	// history): the summary below goes to the scorer and the store.
	r.a.san.FilterResult(ctx, &tool.FilterCall{}, res)
	if res.IsError {
		return res, nil
	}
	session := ""
	if ci, ok := tool.CallInfoFrom(ctx); ok {
		session = ci.ThreadID
	}
	if _, _, err := r.a.mem.ScoreAndSave(ctx, tenant, r.skill, session, summarize(name, args, res)); err != nil {
		r.a.log.Warn("realty: saving a result to the skill's history failed", "err", err)
	}
	return res, nil
}

// sanitizedError is a tool's error with its text sanitized; the cause stays for errors.Is.
type sanitizedError struct {
	msg string
	err error
}

func (e *sanitizedError) Error() string { return e.msg }
func (e *sanitizedError) Unwrap() error { return e.err }

// summarize writes the L3 summary of a result: what was asked and what came back, not the raw
// output.
func summarize(name string, args json.RawMessage, res *tool.Result) string {
	var d struct {
		Type  string `json:"type"`
		Items []struct {
			ZPID    string   `json:"zpid"`
			Address string   `json:"address"`
			Price   *float64 `json:"price"`
			Beds    *float64 `json:"beds"`
		} `json:"items"`
	}
	_ = json.Unmarshal(res.Structured, &d)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s returned %d %s", name, compactJSON(args), len(d.Items), d.Type)
	for i, it := range d.Items {
		if i == 3 {
			b.WriteString("; …")
			break
		}
		price := "?"
		if it.Price != nil {
			price = fmt.Sprintf("$%.0f", *it.Price)
		}
		fmt.Fprintf(&b, "; %s at %s (zpid %s)", it.Address, price, it.ZPID)
	}
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil || len(v) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// withSavedCriteria fills a search's missing location, price range, bedrooms, bathrooms and kind
// from the skill's saved preferences.
func (a *Realty) withSavedCriteria(ctx context.Context, tenant string, args json.RawMessage) (json.RawMessage, error) {
	var v map[string]any
	if len(args) > 0 && json.Unmarshal(args, &v) != nil {
		return args, nil
	}
	if v == nil {
		v = map[string]any{}
	}
	// A price under $1,000 is a count the words gave ("at least 2", "1.5 baths min"), not a
	// price.
	for _, k := range []string{"min_price", "max_price"} {
		if f, ok := v[k].(float64); ok && f < 1000 {
			delete(v, k)
		}
	}
	// The words say which end of the range an amount is ("no more than $650k" is a maximum).
	lo, _ := v["min_price"].(float64)
	hi, _ := v["max_price"].(float64)
	if lo > 0 || hi > 0 {
		lo, hi = lexicon.PriceRange(lastUserText(ctx), lo, hi)
		delete(v, "min_price")
		delete(v, "max_price")
		if lo > 0 {
			v["min_price"] = lo
		}
		if hi > 0 {
			v["max_price"] = hi
		}
	}
	prefs, err := a.mem.Preferences(ctx, tenant, SkillProperty)
	if err != nil {
		return args, err
	}
	if prefs == "" {
		return json.Marshal(v)
	}
	saved := map[string]string{}
	for _, line := range strings.Split(prefs, "\n") {
		_, rest, ok := strings.Cut(line, "] ")
		if !ok {
			continue
		}
		k, val, ok := strings.Cut(rest, ": ")
		if ok {
			saved[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
	}
	empty := func(k string) bool {
		x, ok := v[k]
		if !ok || x == nil || x == "" || x == "any" {
			return true
		}
		f, isNum := x.(float64)
		return isNum && f == 0
	}
	for _, k := range []string{"location", "min_price", "max_price", "bedrooms", "bathrooms", "property_type"} {
		s, ok := saved[k]
		if !ok || !empty(k) {
			continue
		}
		if k == "location" || k == "property_type" {
			v[k] = s
			continue
		}
		var f float64
		if _, err := fmt.Sscanf(s, "%g", &f); err == nil {
			v[k] = f
		}
	}
	return json.Marshal(v)
}

// CriteriaArgs are save_search_criteria's arguments.
type CriteriaArgs struct {
	Location     string  `json:"location,omitempty" jsonschema:"the city and state the user wants to live in"`
	MinPrice     float64 `json:"min_price,omitempty" jsonschema:"the lowest price in US dollars"`
	MaxPrice     float64 `json:"max_price,omitempty" jsonschema:"the user's budget: the highest price in US dollars"`
	Bedrooms     float64 `json:"bedrooms,omitempty" jsonschema:"the fewest bedrooms"`
	Bathrooms    float64 `json:"bathrooms,omitempty" jsonschema:"the fewest bathrooms"`
	PropertyType string  `json:"property_type,omitempty" enum:"any,SINGLE_FAMILY,CONDO,TOWNHOUSE,MULTI_FAMILY" jsonschema:"the kind of home"`
}

// criteriaTool is save_search_criteria: the user's lasting criteria as typed entries of the
// property skill's preferences.md.
func (a *Realty) criteriaTool() (tool.Tool, error) {
	return tool.New("save_search_criteria", "Remember the user's lasting search criteria (location, budget, bedrooms, bathrooms, kind of home) for later sessions.",
		func(ctx context.Context, c CriteriaArgs) (string, error) {
			tenant := tenantOf(ctx)
			type entry struct{ typ, key, value string }
			var es []entry
			num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
			// A price under $1,000 is a count the words gave ("at least 2"), not a price; the
			// words say which end of the range an amount is ("no more than $650k": a maximum).
			if c.MinPrice < 1000 {
				c.MinPrice = 0
			}
			if c.MaxPrice < 1000 {
				c.MaxPrice = 0
			}
			// Only what the user said is kept: each value must be in the user's message (or in
			// the suggestion a short confirmation accepts), never taken from earlier results.
			said, dropped := a.userWords(ctx), []string{}
			c.MinPrice, c.MaxPrice = lexicon.PriceRange(said, c.MinPrice, c.MaxPrice)
			if s := strings.TrimSpace(c.Location); s != "" {
				if SaysPlace(said, s) {
					es = append(es, entry{"LOCATION", "location", s})
				} else {
					dropped = append(dropped, "location "+s)
				}
			}
			for _, p := range []struct {
				key string
				v   float64
			}{{"min_price", c.MinPrice}, {"max_price", c.MaxPrice}} {
				switch {
				case p.v <= 0:
				case lexicon.SaysAmount(said, p.v):
					es = append(es, entry{"BUDGET", p.key, num(p.v)})
				default:
					dropped = append(dropped, p.key+" "+num(p.v))
				}
			}
			if c.Bedrooms > 0 {
				if n, ok := lexicon.Bedrooms(said); ok && n == c.Bedrooms {
					es = append(es, entry{"ROOMS", "bedrooms", num(c.Bedrooms)})
				} else {
					dropped = append(dropped, "bedrooms "+num(c.Bedrooms))
				}
			}
			if c.Bathrooms > 0 {
				if n, ok := lexicon.Bathrooms(said); ok && n == c.Bathrooms {
					es = append(es, entry{"ROOMS", "bathrooms", num(c.Bathrooms)})
				} else {
					dropped = append(dropped, "bathrooms "+num(c.Bathrooms))
				}
			}
			if c.PropertyType != "" && c.PropertyType != "any" {
				if lexicon.SaysType(said, c.PropertyType) {
					es = append(es, entry{"TYPE", "property_type", c.PropertyType})
				} else {
					dropped = append(dropped, "property_type "+c.PropertyType)
				}
			}
			if len(es) == 0 && len(dropped) > 0 {
				return "", fmt.Errorf("nothing saved: %s %s not in the user's message; save only what the user says, or ask them to confirm it", strings.Join(dropped, ", "), plural(len(dropped), "is", "are"))
			}
			if len(es) == 0 {
				return "", fmt.Errorf("nothing to save: give at least one of location, min_price, max_price, bedrooms, bathrooms, or property_type")
			}
			var saved []string
			for _, e := range es {
				if err := a.mem.SavePreference(ctx, tenant, SkillProperty, e.typ, e.key, e.value); err != nil {
					return "", err
				}
				saved = append(saved, fmt.Sprintf("[%s] %s: %s", e.typ, e.key, e.value))
			}
			out := "Saved to preferences.md: " + strings.Join(saved, "; ")
			if len(dropped) > 0 {
				out += ". Not saved, as the user did not say it: " + strings.Join(dropped, ", ")
			}
			return out, nil
		})
}

// pointedListing gives get_property_details the zpid it lacks from the listing the user points
// at ("the first one", "the second", "the cheapest", "the biggest") in the turn's or the
// conversation's last search results.
func pointedListing(ctx context.Context, args json.RawMessage) json.RawMessage {
	var v map[string]any
	if len(args) > 0 && json.Unmarshal(args, &v) != nil {
		return args
	}
	if z, _ := v["zpid"].(string); strings.TrimSpace(z) != "" {
		return args
	}
	st, ok := tool.StateFrom[react.State](ctx)
	if !ok {
		return args
	}
	// The words are the lexicon's (lexicon/en.json): the same resolution as the offline
	// understanding's references, over the last search's listings.
	var items []realtyapi.Listing
	query := ""
	for i := len(st.Messages) - 1; i >= 0; i-- {
		m := st.Messages[i]
		if query == "" && m.Role == message.RoleUser {
			query = m.Text()
		}
		if items == nil && m.Role == message.RoleTool && m.Name == "search_properties" && !m.IsError {
			if d := dataOf(m); d != nil && len(d.Items) > 0 {
				items = d.Items
			}
		}
	}
	if len(items) == 0 || query == "" {
		return args
	}
	refs := references(query, shown{listings: items})
	if len(refs) == 0 {
		return args
	}
	if v == nil {
		v = map[string]any{}
	}
	v["zpid"] = refs[0].ZPID
	out, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return out
}
