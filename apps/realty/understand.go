package realty

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/trellis-go/trellis/apps/realty/realtyapi"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

// Offline understanding: what the offline model cannot know about this app's conversation (which
// listing "the second one" or "the one on Oak Street" is, what "cheaper" changes in the last
// search, what "compare" needs), read with the lexicon's words and the listings the
// conversation has shown. It answers only when the main model is the offline one, and only the
// turns it recognises; everything else goes to the offline model.

// compareCallPrefix marks the calls of a comparison, so its results are answered with a table.
const compareCallPrefix = "cmp_"

// shown is what the conversation has shown: the last search's arguments and listings, and the
// last listing whose details were opened.
type shown struct {
	searchArgs map[string]any
	listings   []realtyapi.Listing
	detail     *realtyapi.Listing
}

func listingsOf(m message.Message) []realtyapi.Listing {
	if d := dataOf(m); d != nil {
		return d.Items
	}
	return nil
}

func shownIn(msgs []message.Message) shown {
	var s shown
	args := map[string]json.RawMessage{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			args[c.ID] = c.Arguments
		}
		if m.Role != message.RoleTool || m.IsError {
			continue
		}
		switch m.Name {
		case "search_properties":
			if ls := listingsOf(m); len(ls) > 0 {
				s.listings = ls
				s.searchArgs = map[string]any{}
				_ = json.Unmarshal(args[m.ToolCallID], &s.searchArgs)
			}
		case "get_property_details", "get_property_details_by_address":
			if ls := listingsOf(m); len(ls) > 0 {
				l := ls[0]
				s.detail = &l
			}
		}
	}
	return s
}

// understand answers the conversation's last user message when it recognises it: details by
// address or by a reference to a listing shown, a refinement of the last search, or a
// comparison; and, after a comparison's results, the comparison. Nil means not recognised.
func understand(msgs []message.Message) *model.Response {
	if len(msgs) == 0 {
		return nil
	}
	last := msgs[len(msgs)-1]
	if last.Role == message.RoleTool {
		return compareAnswer(msgs)
	}
	if last.Role != message.RoleUser {
		return nil
	}
	text := last.Text()
	s := shownIn(msgs[:len(msgs)-1])
	if hasWord(text, lexicon.CompareWords) {
		if calls := compareCalls(text, s); len(calls) >= 2 {
			return calling(RuleCompare, calls...)
		}
	}
	if addr := lexicon.address(text); addr != "" {
		if l := s.byStreet(addr); l != nil {
			return calling(RuleAddress, toolCall("get_property_details_by_address", map[string]any{"address": l.Address}))
		}
		return calling(RuleAddress, toolCall("get_property_details_by_address", map[string]any{"address": addr}))
	}
	// One listing pointed at, with no word that changes the search: its details.
	comparative := hasWord(text, lexicon.CheaperWords) || hasWord(text, lexicon.PricierWords) || hasWord(text, lexicon.BiggerWords) || hasWord(text, lexicon.MoreBathsWords)
	if refs := references(text, s); len(refs) == 1 && !comparative {
		return calling(RuleReference, toolCall("get_property_details", map[string]any{"zpid": refs[0].ZPID}))
	}
	if args, ok := refine(text, s); ok {
		return calling(RuleRefine, toolCall("search_properties", args))
	}
	// A feature the listings do not record, asked of the homes shown ("only ones with a
	// garage"): say so, and what can be searched, rather than list the tools. A new search that
	// also names one ("a 3 bed house with a pool") is left to the model.
	if f := lexicon.Unsearchable(text); f != "" && lexicon.UnsearchableAnswer != "" && s.searchArgs != nil && !lexicon.namesCriteria(text) {
		msg := message.Assistant(fmt.Sprintf(lexicon.UnsearchableAnswer, f) + "\n\n" + offline.Marker)
		msg.Metadata = offline.Metadata(RuleUnsearchable)
		return &model.Response{Message: msg, FinishReason: model.FinishStop}
	}
	return nil
}

var callSeq atomic.Int64

func toolCall(name string, args map[string]any) message.ToolCall {
	b, _ := json.Marshal(args)
	return message.ToolCall{ID: fmt.Sprintf("call_realty_%d", callSeq.Add(1)), Name: name, Arguments: b}
}

// The offline rules (metadata offline.MetaRule) of the turns realty's own understanding writes
// on the offline path.
const (
	RuleCompare   = "realty_compare"   // a comparison of the homes shown
	RuleAddress   = "realty_address"   // details of a home named by its address
	RuleReference = "realty_reference" // details of a home pointed at ("the second one")
	RuleRefine    = "realty_refine"    // the last search, changed ("cheaper")
	// RuleUnsearchable answers that the listings do not record a feature asked for ("a garage").
	RuleUnsearchable = "realty_unsearchable"
)

func calling(rule string, calls ...message.ToolCall) *model.Response {
	msg := message.Assistant("", calls...)
	msg.Metadata = offline.Metadata(rule)
	return &model.Response{Message: msg, FinishReason: model.FinishToolCalls}
}

// address is the street address written in text ("742 Oak Street, Austin, TX 78701"), "" when
// none: a house number, words and a street suffix, and what follows up to the sentence's end.
func (l *Lexicon) address(text string) string {
	loc := l.addressRE.FindStringIndex(text)
	if loc == nil {
		return ""
	}
	street := text[loc[0]:loc[1]]
	after := text[loc[0]+len(street):]
	rest := street
	if strings.HasPrefix(after, ",") {
		tail := after
		if i := strings.IndexAny(tail, "?!;\n—"); i >= 0 {
			tail = tail[:i]
		}
		if i := strings.Index(tail, ". "); i >= 0 {
			tail = tail[:i]
		}
		if i := wordIndex(tail, l.AddressEnds); i >= 0 {
			tail = tail[:i]
		}
		rest += tail
	}
	words := strings.Fields(rest)
	for len(words) > 0 && hasWord(strings.Trim(words[len(words)-1], ".,"), l.StopWords) {
		words = words[:len(words)-1]
	}
	return strings.Trim(strings.Join(words, " "), " .,")
}

// streetOf is an address's street line without its number: "742 Oak Street, Austin" → "Oak Street".
func streetOf(addr string) string {
	line, _, _ := strings.Cut(addr, ",")
	f := strings.Fields(line)
	if len(f) > 1 && strings.Trim(f[0], "0123456789") == "" {
		f = f[1:]
	}
	return strings.Join(f, " ")
}

// streetKey is the street's distinctive words: "Oak Street" → "oak", "North Elm Ct" → "north elm".
func streetKey(street string) string {
	f := strings.Fields(strings.ToLower(street))
	if len(f) > 1 && hasWord(f[len(f)-1], lexicon.StreetSuffixes) {
		f = f[:len(f)-1]
	}
	return strings.Join(f, " ")
}

// byStreet is the listing shown whose street line (number and street) the address names.
func (s shown) byStreet(addr string) *realtyapi.Listing {
	want := realtyapi.NormalizeAddress(addr)
	wantLine, _, _ := strings.Cut(want, "|")
	var found []realtyapi.Listing
	for _, l := range s.all() {
		line, _, _ := strings.Cut(realtyapi.NormalizeAddress(l.Address), "|")
		if line == wantLine {
			found = append(found, l)
		}
	}
	if len(found) == 1 {
		return &found[0]
	}
	return nil
}

func (s shown) all() []realtyapi.Listing {
	out := append([]realtyapi.Listing(nil), s.listings...)
	if s.detail != nil {
		out = append(out, *s.detail)
	}
	return out
}

// references are the listings shown that text points at, in the order written: ordinals ("the
// second one", "#3", "the last"), superlatives ("the cheapest", "the biggest") and street names
// ("the one on Oak Street").
func references(text string, s shown) []realtyapi.Listing {
	if len(s.listings) == 0 {
		return nil
	}
	type at struct {
		pos int
		l   realtyapi.Listing
	}
	var found []at
	low := strings.ToLower(text)
	for _, m := range lexicon.ordinalRE.FindAllStringSubmatchIndex(low, -1) {
		n := 0
		if m[2] >= 0 {
			n = lexicon.Ordinals[strings.Join(strings.Fields(low[m[2]:m[3]]), " ")]
		} else if m[4] >= 0 {
			n, _ = strconv.Atoi(low[m[4]:m[5]])
		}
		i := n - 1
		if n < 0 {
			i = len(s.listings) + n
		}
		if n != 0 && i >= 0 && i < len(s.listings) {
			found = append(found, at{m[0], s.listings[i]})
		}
	}
	for w, sup := range lexicon.Superlatives {
		re := regexp.MustCompile(`\b` + strings.ReplaceAll(regexp.QuoteMeta(w), " ", `\s+`) + `\b`)
		if loc := re.FindStringIndex(low); loc != nil {
			if l, ok := extreme(s.listings, sup.Field, sup.Order == "max"); ok {
				found = append(found, at{loc[0], l})
			}
		}
	}
	for _, l := range s.listings {
		key := streetKey(streetOf(l.Address))
		if key == "" || strings.Trim(key, "0123456789 ") == "" {
			continue
		}
		re := regexp.MustCompile(`\b` + strings.ReplaceAll(regexp.QuoteMeta(key), " ", `\s+`) + `\b`)
		if loc := re.FindStringIndex(low); loc != nil {
			found = append(found, at{loc[0], l})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].pos < found[j].pos })
	var out []realtyapi.Listing
	seen := map[string]bool{}
	for _, f := range found {
		if !seen[f.l.ZPID] {
			seen[f.l.ZPID] = true
			out = append(out, f.l)
		}
	}
	return out
}

func fieldOf(l realtyapi.Listing, field string) (float64, bool) {
	var p *float64
	switch field {
	case "price":
		p = l.Price
	case "sqft":
		p = l.Sqft
	case "beds":
		p = l.Beds
	case "baths":
		p = l.Baths
	}
	if p == nil {
		return 0, false
	}
	return *p, true
}

// extreme is the listing with the least or greatest value of field.
func extreme(ls []realtyapi.Listing, field string, greatest bool) (realtyapi.Listing, bool) {
	best, bestV, ok := realtyapi.Listing{}, 0.0, false
	for _, l := range ls {
		v, has := fieldOf(l, field)
		if !has {
			continue
		}
		if !ok || greatest && v > bestV || !greatest && v < bestV {
			best, bestV, ok = l, v, true
		}
	}
	return best, ok
}

// compareCalls are the details calls a comparison needs: each listing referred to (or named by
// address), "the first two" and the like, and the listing opened last when only one is named.
func compareCalls(text string, s shown) []message.ToolCall {
	refs := references(text, s)
	low := strings.ToLower(text)
	for w, n := range lexicon.PairWords {
		if hasWord(low, []string{w}) && len(refs) < n {
			for i := 0; i < n && i < len(s.listings); i++ {
				refs = append(refs, s.listings[i])
			}
		}
	}
	var calls []message.ToolCall
	seen := map[string]bool{}
	add := func(l realtyapi.Listing) {
		if !seen[l.ZPID] {
			seen[l.ZPID] = true
			c := toolCall("get_property_details", map[string]any{"zpid": l.ZPID})
			c.ID = compareCallPrefix + c.ID
			calls = append(calls, c)
		}
	}
	for _, l := range refs {
		add(l)
	}
	// Addresses written out.
	rest := text
	for {
		a := lexicon.address(rest)
		if a == "" {
			break
		}
		if l := s.byStreet(a); l != nil {
			add(*l)
		} else if !seen[a] {
			seen[a] = true
			c := toolCall("get_property_details_by_address", map[string]any{"address": a})
			c.ID = compareCallPrefix + c.ID
			calls = append(calls, c)
		}
		i := strings.Index(rest, a)
		rest = rest[i+len(a):]
	}
	if len(calls) == 1 && s.detail != nil {
		add(*s.detail)
	}
	return calls
}

// compareAnswer writes the comparison of a comparison's results as a table.
func compareAnswer(msgs []message.Message) *model.Response {
	var ls []realtyapi.Listing
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == message.RoleTool; i-- {
		if !strings.HasPrefix(msgs[i].ToolCallID, compareCallPrefix) {
			return nil
		}
		ls = append([]realtyapi.Listing(listingsOf(msgs[i])), ls...)
	}
	if len(ls) < 2 {
		return nil
	}
	var b strings.Builder
	b.WriteString("Here is how they compare:\n\n| | ")
	for i, l := range ls {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(strings.ReplaceAll(l.Address, "|", "/"))
	}
	b.WriteString(" |\n|---|" + strings.Repeat("---|", len(ls)) + "\n")
	row := func(name string, f func(l realtyapi.Listing) string) {
		b.WriteString("| " + name + " | ")
		for i, l := range ls {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(f(l))
		}
		b.WriteString(" |\n")
	}
	money := func(p *float64) string {
		if p == nil {
			return "—"
		}
		return "$" + thousands(*p)
	}
	num := func(p *float64) string {
		if p == nil {
			return "—"
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	row("price", func(l realtyapi.Listing) string { return money(l.Price) })
	row("bedrooms", func(l realtyapi.Listing) string { return num(l.Beds) })
	row("bathrooms", func(l realtyapi.Listing) string { return num(l.Baths) })
	row("area (sqft)", func(l realtyapi.Listing) string { return num(l.Sqft) })
	row("kind", func(l realtyapi.Listing) string { return cmpOr(l.PropertyType, "—") })
	row("built", func(l realtyapi.Listing) string {
		if l.YearBuilt == nil {
			return "—"
		}
		return strconv.Itoa(*l.YearBuilt)
	})
	row("HOA / month", func(l realtyapi.Listing) string { return money(l.HOAFee) })
	row("zestimate", func(l realtyapi.Listing) string {
		if l.Zestimate == nil {
			return "—"
		}
		f := float64(*l.Zestimate)
		return money(&f)
	})
	if c, ok := extreme(ls, "price", false); ok {
		fmt.Fprintf(&b, "\nThe cheapest is %s", c.Address)
		if g, ok := extreme(ls, "sqft", true); ok {
			fmt.Fprintf(&b, "; the largest is %s", g.Address)
		}
		b.WriteString(".")
	}
	msg := message.Assistant(b.String() + "\n\n" + offline.Marker)
	msg.Metadata = offline.Metadata(RuleCompare)
	return &model.Response{Message: msg, FinishReason: model.FinishStop}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func thousands(f float64) string {
	s := strconv.FormatInt(int64(math.Round(f)), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// refine changes the last search as the words say: cheaper (a lower maximum), pricier (a
// higher minimum), bigger (one more bedroom), more bathrooms, another kind of home, another
// place. ok is false when there is no search to refine or the words change nothing.
func refine(text string, s shown) (map[string]any, bool) {
	if s.searchArgs == nil {
		return nil, false
	}
	args := map[string]any{}
	for k, v := range s.searchArgs {
		args[k] = v
	}
	changed := false
	amount := 0.0
	for _, a := range lexicon.Amounts(text) {
		if a.Dollar || a.Value >= 1000 {
			amount = a.Value
		}
	}
	prices := func(greatest bool) (float64, bool) {
		l, ok := extreme(s.listings, "price", greatest)
		if !ok {
			return 0, false
		}
		return fieldOf(l, "price")
	}
	switch {
	case hasWord(text, lexicon.CheaperWords):
		switch {
		case amount > 0:
			args["max_price"] = amount
		default:
			top, ok := prices(true)
			if hi, has := args["max_price"].(float64); has && (!ok || hi < top) {
				top = hi
			}
			lo, _ := prices(false)
			// Below most of what was shown: a little above the cheapest, under the dearest.
			limit := math.Round((lo+(top-lo)*0.5)/1000) * 1000
			if limit <= 0 || limit >= top {
				limit = math.Round(top*0.8/1000) * 1000
			}
			args["max_price"] = limit
		}
		delete(args, "min_price")
		changed = true
	case hasWord(text, lexicon.PricierWords):
		if amount > 0 {
			args["min_price"] = amount
		} else if hi, ok := prices(true); ok {
			args["min_price"] = hi
		}
		delete(args, "max_price")
		changed = true
	}
	if hasWord(text, lexicon.BiggerWords) {
		n, ok := lexicon.Bedrooms(text)
		if !ok {
			n = 1
			if b, has := args["bedrooms"].(float64); has {
				n = b + 1
			} else if l, has := extreme(s.listings, "beds", false); has {
				b, _ := fieldOf(l, "beds")
				n = b + 1
			}
		}
		args["bedrooms"] = n
		changed = true
	}
	if hasWord(text, lexicon.MoreBathsWords) {
		n := 1.0
		if b, has := args["bathrooms"].(float64); has {
			n = b + 1
		}
		args["bathrooms"] = n
		changed = true
	}
	switchy := hasWord(text, lexicon.SwitchWords)
	if switchy {
		// "make it 3 bedrooms instead", "now 2 baths and under $500k": the counts and the
		// range the words state replace the last search's.
		if n, ok := lexicon.Bedrooms(text); ok {
			args["bedrooms"], changed = n, true
		}
		if n, ok := lexicon.Bathrooms(text); ok {
			args["bathrooms"], changed = n, true
		}
		if lo, hi := lexicon.SaidRange(text); lo > 0 || hi > 0 {
			delete(args, "min_price")
			delete(args, "max_price")
			if lo > 0 {
				args["min_price"] = lo
			}
			if hi > 0 {
				args["max_price"] = hi
			}
			changed = true
		}
	}
	if ts := lexicon.Types(text); len(ts) == 1 && (switchy || changed || hasWord(text, lexicon.OnlyWords)) {
		args["property_type"] = ts[0]
		changed = true
	}
	if switchy {
		if place := placeAfterSwitch(text); place != "" {
			args["location"] = place
			changed = true
		}
	}
	return args, changed
}

var placeRE = regexp.MustCompile(`(?i)\b(?:in|about|to|try|at|for)\s+(?:zip(?:\s*code)?\s+)?(\d{5}\b|[a-z][a-z.'-]*(?:\s+[a-z][a-z.'-]*){0,2}(?:,\s*[a-z]{2})?)`)

// placeAfterSwitch is the place named after "in", "about", "to" in a message that switches the
// search ("what about Denver?", "same but in Miami, FL", a ZIP code), in title case.
func placeAfterSwitch(text string) string {
	for _, m := range placeRE.FindAllStringSubmatch(text, -1) {
		words := strings.Fields(m[1])
		var keep []string
		for _, w := range words {
			lw := strings.ToLower(strings.Trim(w, ",.?!"))
			if hasWord(lw, lexicon.StopWords) || len(lexicon.Types(lw)) > 0 || hasWord(lw, lexicon.NotPlaceWords) {
				break
			}
			keep = append(keep, w)
		}
		if len(keep) == 0 {
			continue
		}
		place := strings.Trim(strings.Join(keep, " "), " ,.?!")
		city, state, hasState := strings.Cut(place, ",")
		out := titleCase(city)
		if hasState {
			out += ", " + strings.ToUpper(strings.TrimSpace(state))
		}
		return out
	}
	return ""
}

func titleCase(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		f[i] = strings.ToUpper(w[:1]) + strings.ToLower(w[1:])
	}
	return strings.Join(f, " ")
}
