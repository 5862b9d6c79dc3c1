package research

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/store"
)

// The knowledge of what changes a second-hand item's price, by category, is data:
// knowledge/attributes.json (attributes and their patterns, model qualifiers, brands, colours,
// filler words). The code below reads it and applies it to any item.

//go:embed knowledge/attributes.json
var knowledgeJSON []byte

// AttrDef is one attribute that can change a price.
type AttrDef struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`   // value, flag
	Effect   string   `json:"effect"` // exclude, reduce, minor
	Reason   string   `json:"reason"`
	Patterns []string `json:"patterns"`
	// InName marks a value that is part of the model's name (a model code): it stays among
	// the model's words as well.
	InName bool `json:"inName"`
	res    []*regexp.Regexp
}

// Category is a category's attributes and the words that qualify a model ("pro", "max").
type Category struct {
	Name       string    `json:"name"`
	Match      []string  `json:"match"`
	Qualifiers []string  `json:"qualifiers"`
	Attributes []AttrDef `json:"attributes"`
}

// Knowledge is the app's data about what changes a price.
type Knowledge struct {
	Generic    []AttrDef         `json:"generic"`
	Categories []Category        `json:"categories"`
	Synonyms   map[string]string `json:"synonyms"`
	Colors     []string          `json:"colors"`
	Filler     []string          `json:"filler"`
	Brands     []string          `json:"brands"`
	// ProductLines name the brand of a product line sellers write without it ("iphone":
	// "Apple"), lower-case word to brand.
	ProductLines map[string]string `json:"productLines"`
	// Spellings rewrite the ways sellers write a word into the way listings write it
	// ("128 gig" → "128gb"): a Go regular expression (matched in any case) and its replacement.
	Spellings []struct {
		Pattern string `json:"pattern"`
		Replace string `json:"replace"`
		re      *regexp.Regexp
	} `json:"spellings"`
	MPNPatterns []string `json:"mpnPatterns"`
	// LocalPickup says which items sell locally, on Facebook Marketplace: those whose target
	// price is below Below, and those of the categories whose names hold one of Categories
	// (bulky ones: "mixer", "vacuum").
	LocalPickup struct {
		Below      float64  `json:"below"`
		Categories []string `json:"categories"`
	} `json:"localPickup"`
	// Conditions is the price of an item in a condition relative to new: the factor of the
	// first entry one of whose cues the condition, lower case, holds ("=new" is the whole
	// condition "new"), Unknown when none does or the condition is empty.
	Conditions struct {
		Unknown float64 `json:"unknown"`
		Factors []struct {
			Factor float64  `json:"factor"`
			Cues   []string `json:"cues"`
		} `json:"factors"`
	} `json:"conditions"`
	filler map[string]bool
	colors map[string]bool
	mpnRes []*regexp.Regexp
}

// LoadKnowledge parses and compiles a knowledge document, naming a bad pattern.
func LoadKnowledge(data []byte) (*Knowledge, error) {
	var k Knowledge
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("research: the attribute knowledge is not valid JSON: %w", err)
	}
	if k.Conditions.Unknown <= 0 || len(k.Conditions.Factors) == 0 {
		return nil, fmt.Errorf("research: the attribute knowledge needs conditions with a positive unknown factor and factors")
	}
	for i, f := range k.Conditions.Factors {
		if f.Factor <= 0 || len(f.Cues) == 0 {
			return nil, fmt.Errorf("research: conditions.factors[%d] needs a positive factor and cues", i)
		}
	}
	compile := func(defs []AttrDef, where string) error {
		for i := range defs {
			d := &defs[i]
			if d.Kind != "value" && d.Kind != "flag" {
				return fmt.Errorf("research: attribute %s (%s): kind %q: want value or flag", d.Name, where, d.Kind)
			}
			if _, ok := effects[d.Effect]; !ok {
				return fmt.Errorf("research: attribute %s (%s): effect %q: want exclude, reduce or minor", d.Name, where, d.Effect)
			}
			for _, p := range d.Patterns {
				re, err := regexp.Compile(p)
				if err != nil {
					return fmt.Errorf("research: attribute %s (%s): pattern %q: %w", d.Name, where, p, err)
				}
				d.res = append(d.res, re)
			}
		}
		return nil
	}
	if err := compile(k.Generic, "generic"); err != nil {
		return nil, err
	}
	for i := range k.Categories {
		if err := compile(k.Categories[i].Attributes, k.Categories[i].Name); err != nil {
			return nil, err
		}
	}
	for i := range k.Spellings {
		re, err := regexp.Compile("(?i)" + k.Spellings[i].Pattern) // over the text as written
		if err != nil {
			return nil, fmt.Errorf("research: spellings[%d]: pattern %q: %w", i, k.Spellings[i].Pattern, err)
		}
		k.Spellings[i].re = re
	}
	k.filler, k.colors = map[string]bool{}, map[string]bool{}
	for _, w := range k.Filler {
		k.filler[w] = true
	}
	for _, c := range k.Colors {
		k.colors[c] = true
	}
	for _, p := range k.MPNPatterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("research: MPN pattern %q: %w", p, err)
		}
		k.mpnRes = append(k.mpnRes, re)
	}
	return &k, nil
}

var effects = map[string]float64{"exclude": 0.2, "reduce": 0.6, "minor": 0.95}

// ConditionFactor is the price of an item in condition c relative to new, by the knowledge's
// conditions ("For parts or not working" 0.28, "New" 1; an unknown condition as "Used").
func ConditionFactor(c string) float64 { return know.ConditionFactor(c) }

// ConditionFactor is [ConditionFactor] by k's conditions.
func (k *Knowledge) ConditionFactor(c string) float64 {
	c = strings.ToLower(strings.TrimSpace(c))
	if c == "" {
		return k.Conditions.Unknown
	}
	for _, f := range k.Conditions.Factors {
		for _, cue := range f.Cues {
			if whole, ok := strings.CutPrefix(cue, "="); ok && c == whole || !ok && strings.Contains(c, cue) {
				return f.Factor
			}
		}
	}
	return k.Conditions.Unknown
}

// know is the app's knowledge, embedded.
var know = func() *Knowledge {
	k, err := LoadKnowledge(knowledgeJSON)
	if err != nil {
		panic(err) // the embedded file is part of the build; its test checks it
	}
	return k
}()

// CategoryOf finds the category whose words the text holds the most of; nil when none.
func (k *Knowledge) CategoryOf(text string) *Category {
	t := " " + strings.ToLower(text) + " "
	var best *Category
	bestN := 0
	for i := range k.Categories {
		c := &k.Categories[i]
		n := 0
		for _, m := range c.Match {
			if strings.Contains(t, " "+m) || strings.Contains(t, m+" ") {
				n++
			}
		}
		if n > bestN {
			best, bestN = c, n
		}
	}
	return best
}

// Attrs are the price-changing attributes read from a text: values and flags by name.
type Attrs map[string]string

func (k *Knowledge) defs(c *Category) []AttrDef {
	out := append([]AttrDef{}, k.Generic...)
	if c != nil {
		out = append(out, c.Attributes...)
	}
	return out
}

func (k *Knowledge) norm(v string) string {
	v = strings.Join(strings.Fields(strings.ToLower(v)), " ")
	if s, ok := k.Synonyms[v]; ok {
		v = s
	}
	return strings.NewReplacer(" ", "", "-", "").Replace(v)
}

// Extract reads the attributes of a category (and the generic ones) from text. flags=false
// skips the flag attributes (an item's description mentions its box or case without being one).
func (k *Knowledge) Extract(text string, c *Category, flags bool) Attrs {
	t := strings.ToLower(text)
	out := Attrs{}
	for _, d := range k.defs(c) {
		if d.Kind == "flag" && !flags {
			continue
		}
		for _, re := range d.res {
			m := re.FindStringSubmatch(t)
			if m == nil {
				continue
			}
			if d.Kind == "flag" {
				out[d.Name] = "yes"
			} else {
				v := strings.Join(m[1:], "")
				if v == "" {
					v = m[0]
				}
				out[d.Name] = k.norm(v)
			}
			break
		}
	}
	return out
}

// ItemProfile is what the item is, for comparing comparables with it: its category, the
// attributes that change its price, the words naming its model and the model qualifiers it has.
type ItemProfile struct {
	Category *Category
	Attrs    Attrs
	// Words are the model's words (no brand, colour or filler); Brand is the brand, lower case.
	Words map[string]bool
	Brand string
	// Numbers are the model's words with digits ("13", "xm4", "a6400"): a comparable without
	// them is another model.
	Numbers []string
	// Qualifiers are the category's model qualifiers the item has ("pro", "max").
	Qualifiers map[string]bool
	// Named are all the words of the item's name and title: a comparable's qualifier among
	// them is no other model.
	Named     map[string]bool
	MPN, EPID string
}

// Profile describes the item from its identification, title, description and attributes.
func Profile(id *store.ProductIdentification, item *store.Item) ItemProfile {
	var name, text, brand, mpn, epid string
	if id != nil {
		brand, mpn = id.Brand, id.MPN
		name = id.Model
		epid, _ = id.Attributes["epid"].(string)
		if v, _ := id.Attributes["variant"].(string); v != "" && !strings.Contains(strings.ToLower(name), strings.ToLower(v)) {
			name += " " + v
		}
	}
	if item != nil {
		text = know.Canonical(item.Title + " . " + item.Description)
		for k, v := range item.Attributes {
			if s, ok := v.(string); ok && k != "demo" {
				text += " . " + k + " " + s
			}
		}
		if name == "" || (id != nil && id.Source == "title") {
			name = item.Title
		}
	}
	cats := name + " " + text
	if id != nil {
		cats += " " + strings.Join(id.Category, " ")
	}
	p := ItemProfile{Category: know.CategoryOf(cats), Brand: strings.ToLower(brand), MPN: strings.ToLower(mpn), EPID: epid}
	// The attributes: the model's name and the title first, then the description and specifics.
	p.Attrs = know.Extract(name+" "+textTitle(item), p.Category, true)
	for k, v := range know.Extract(text, p.Category, false) {
		if _, ok := p.Attrs[k]; !ok {
			p.Attrs[k] = v
		}
	}
	if item != nil && ConditionFactor(item.Condition) < 0.3 {
		p.Attrs["parts"] = "yes"
	}
	if p.Brand == "" {
		p.Brand = strings.ToLower(FindBrand(name + " " + text))
	}
	p.Words, p.Numbers, p.Qualifiers = modelWords(name, p.Brand, p.Category)
	p.Named = catalog.Tokens(name + " " + textTitle(item))
	return p
}

func textTitle(it *store.Item) string {
	if it == nil {
		return ""
	}
	return it.Title
}

// modelWords splits a model's name into its words (without the brand, colours, filler and
// the attribute values such as storage), its numbered words and its qualifiers.
func modelWords(name, brand string, c *Category) (map[string]bool, []string, map[string]bool) {
	low := strings.ToLower(name)
	// A model's name ends where what comes with it starts.
	for _, cut := range []string{" with ", " w/", " + ", " (", " - ", " for "} {
		if i := strings.Index(low, cut); i > 0 {
			low = low[:i]
		}
	}
	for _, col := range know.Colors {
		if strings.Contains(col, " ") {
			low = strings.ReplaceAll(low, col, " ")
		}
	}
	// Attribute values are compared as attributes, not as words.
	for _, d := range know.defs(c) {
		if d.Kind == "value" && !d.InName {
			for _, re := range d.res {
				low = re.ReplaceAllString(low, " ")
			}
		}
	}
	words := map[string]bool{}
	var nums []string
	quals := map[string]bool{}
	brandWords := catalog.Tokens(brand)
	for w := range catalog.Tokens(low) {
		if brandWords[w] || know.filler[w] || know.colors[w] {
			continue
		}
		words[w] = true
		if strings.ContainsAny(w, "0123456789") {
			nums = append(nums, w)
		}
		if c != nil {
			for _, q := range c.Qualifiers {
				if q == w {
					quals[w] = true
				}
			}
		}
	}
	sort.Strings(nums)
	return words, nums, quals
}

// hasWord reports whether the title's words hold w, alone or glued to letters ("iphone13").
func hasWord(tt map[string]bool, w string) bool {
	if tt[w] {
		return true
	}
	sw := compact(w)
	code := len(sw) >= 4 && strings.ContainsAny(sw, "0123456789") && strings.IndexFunc(sw, func(r rune) bool { return r >= 'a' && r <= 'z' }) >= 0
	for t := range tt {
		st := compact(t)
		if st == sw {
			return true
		}
		// A model code with a variant suffix ("dcd791d2" for "dcd791").
		if code && strings.HasPrefix(st, sw) && len(st)-len(sw) <= 2 {
			return true
		}
		if len(t) <= len(w) {
			continue
		}
		if strings.HasSuffix(t, w) && isLetter(t[len(t)-len(w)-1]) {
			return true
		}
		if strings.HasPrefix(t, w) && isLetter(t[len(w)]) && !strings.ContainsAny(t[len(w):], "0123456789") {
			return true
		}
	}
	return false
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' }

// Judgement is a comparable's relevance by the rules, with the reasons it was scored down.
type Judgement struct {
	Score   float64  `json:"score"`
	Reasons []string `json:"reasons,omitempty"`
	// Hard is true when an attribute that changes the price differs (another variant, an
	// accessory, parts, a lot): no model may score it up.
	Hard bool `json:"hard,omitempty"`
}

// Judge scores a comparable listing against the item's profile: the share of the model's
// words its title carries (an MPN or ePID match counts as full), times the effect of each
// price-changing attribute that differs, another model qualifier, another brand, another
// condition.
func Judge(c store.Evidence, p ItemProfile, itemCondition string) Judgement {
	title := strings.ToLower(c.Title)
	tt := catalog.Tokens(c.Title)
	var j Judgement
	if len(p.Words) == 0 && p.MPN == "" {
		return Judgement{Score: 0, Reasons: []string{"nothing identifies the item"}}
	}
	hit := 0
	for w := range p.Words {
		if hasWord(tt, w) {
			hit++
		}
	}
	// Sellers leave words out: the share of the model's words found counts softly; other
	// models, variants and accessories are told apart by the checks below.
	score := 0.0
	if len(p.Words) > 0 {
		score = math.Sqrt(float64(hit) / float64(len(p.Words)))
	}
	// A part number names the exact variant: words and unstated attributes no longer matter.
	mpnHit := p.MPN != "" && hasWord(tt, p.MPN)
	if mpnHit {
		score = max(score, 0.95)
	}
	if p.EPID != "" && c.ExtractedData["epid"] == p.EPID {
		score = max(score, 0.9)
	}
	if !mpnHit && hit < len(p.Words) {
		j.Reasons = append(j.Reasons, fmt.Sprintf("title has %d of the model's %d words", hit, len(p.Words)))
	}
	down := func(effect, why string) {
		score *= effects[effect]
		j.Reasons = append(j.Reasons, why)
		if effect == "exclude" {
			j.Hard = true
		}
	}
	for _, n := range p.Numbers {
		if !mpnHit && !hasWord(tt, n) {
			down("exclude", "model differs: no "+n)
			break
		}
	}
	if p.Category != nil {
		for _, q := range p.Category.Qualifiers {
			if !p.Qualifiers[q] && tt[q] && !p.Named[q] {
				down("exclude", "model differs: "+q)
				break
			}
		}
		for q := range p.Qualifiers {
			if !mpnHit && !hasWord(tt, q) {
				down("exclude", "model differs: not "+q)
				break
			}
		}
	}
	if p.Brand != "" && !tt[p.Brand] {
		for _, b := range know.Brands {
			lb := strings.ToLower(b)
			if lb != p.Brand && strings.Contains(" "+title+" ", " "+lb+" ") && !strings.Contains(title, "for "+lb) {
				down("exclude", "brand differs: "+lb)
				break
			}
		}
	}
	ca := know.Extract(c.Title, p.Category, true)
	for _, d := range know.defs(p.Category) {
		iv, cv := p.Attrs[d.Name], ca[d.Name]
		switch {
		case d.Kind == "flag" && (iv == "yes") != (cv == "yes"):
			why := d.Reason
			if iv == "yes" {
				why = "not " + d.Reason
			}
			down(d.Effect, why)
		case d.Kind == "value" && iv != "" && cv != "" && iv != cv:
			down(d.Effect, fmt.Sprintf("%s: %s, not %s", d.Reason, cv, iv))
		case d.Kind == "value" && iv != "" && cv == "" && d.Effect == "exclude" && !mpnHit:
			score *= 0.8
			j.Reasons = append(j.Reasons, strings.ReplaceAll(d.Name, "_", " ")+" not stated")
		}
	}
	if itemCondition != "" && c.Condition != "" && ConditionFactor(itemCondition) != ConditionFactor(c.Condition) {
		score *= 0.9
		j.Reasons = append(j.Reasons, "another condition (price adjusted)")
	}
	j.Score = round2(min(1, score))
	return j
}

// ReasonKind is a reason without its values ("storage differs: 256gb, not 128gb" → "storage
// differs"), to count reasons.
func ReasonKind(r string) string {
	if i := strings.Index(r, ":"); i > 0 {
		return r[:i]
	}
	if strings.HasPrefix(r, "title has ") {
		return "few of the model's words"
	}
	return r
}

// FindBrand returns the first known brand named in the text (the longest at a place), or "".
func FindBrand(text string) string {
	low := " " + strings.Join(strings.Fields(strings.ToLower(text)), " ") + " "
	best, at := "", len(low)
	for _, b := range know.Brands {
		i := strings.Index(low, " "+strings.ToLower(b)+" ")
		if i >= 0 && (i < at || i == at && len(b) > len(best)) {
			best, at = b, i
		}
	}
	if best != "" {
		return best
	}
	// No brand written: the brand of the first product line named.
	for w := range catalog.Tokens(low) {
		if b, ok := know.ProductLines[w]; ok {
			if i := strings.Index(low, " "+w); i >= 0 && i < at {
				best, at = b, i
			}
		}
	}
	return best
}

// Canonical rewrites a seller's spellings (the knowledge's spellings, matched in any case) into
// the listings' ones, keeping the rest of the text as written.
func (k *Knowledge) Canonical(text string) string {
	if len(k.Spellings) == 0 {
		return text
	}
	for _, sp := range k.Spellings {
		text = sp.re.ReplaceAllString(text, sp.Replace)
	}
	return text
}

// IdentifyText identifies a product from what a seller wrote: the brand (a known brand in the
// title, else the description or the attributes), the model (the title's words without the
// brand, colours, filler and the price-changing attributes, which become the variant) and an
// MPN written in the text. Nil when no brand and no model words are found.
func IdentifyText(title, description string, attrs map[string]any) *store.ProductIdentification {
	written := title
	title, description = know.Canonical(title), know.Canonical(description)
	extra := ""
	for k, v := range attrs {
		if s, ok := v.(string); ok && k != "demo" {
			extra += " " + k + ": " + s + " ."
		}
	}
	brand := FindBrand(title)
	if brand == "" {
		brand = FindBrand(description + " " + extra)
	}
	cat := know.CategoryOf(title + " " + description)
	// The model: the title's words in order, less the brand, filler, colours and attributes.
	low := strings.ToLower(title)
	for _, cut := range []string{" with ", " w/", " + ", " (", " - ", " for ", ",", " | "} {
		if i := strings.Index(low, cut); i > 0 {
			low = low[:i]
		}
	}
	variant := []string{}
	for _, d := range know.defs(cat) {
		if d.Kind != "value" || d.InName {
			continue
		}
		for _, re := range d.res {
			if m := re.FindString(low); m != "" {
				variant = append(variant, strings.TrimSpace(m))
				low = re.ReplaceAllString(low, " ")
				break
			}
		}
	}
	for _, col := range know.Colors {
		if strings.Contains(" "+low+" ", " "+col+" ") {
			variant = append(variant, col)
			low = strings.ReplaceAll(" "+low+" ", " "+col+" ", " ")
		}
	}
	brandWords := catalog.Tokens(brand)
	var words []string
	for _, w := range strings.Fields(low) {
		t := strings.Trim(w, ".,;:!()[]\"'")
		if t == "" || brandWords[t] || know.filler[t] {
			continue
		}
		words = append(words, originalCase(written, t))
	}
	mpn := ""
	text := title + " . " + description + " . " + extra
	for _, re := range know.mpnRes {
		if m := re.FindStringSubmatch(text); m != nil {
			mpn = m[1]
			break
		}
	}
	if brand == "" && len(words) == 0 {
		return nil
	}
	id := &store.ProductIdentification{Brand: brand, Model: strings.Join(words, " "), MPN: mpn, Source: "text", Attributes: map[string]any{}}
	switch {
	case brand != "" && len(words) > 0 && mpn != "":
		id.Confidence = 0.7
	case brand != "" && len(words) > 0:
		id.Confidence = 0.6
	default:
		id.Confidence = 0.4
	}
	if len(variant) > 0 {
		id.Attributes["variant"] = strings.Join(variant, " ")
	}
	if cat != nil {
		id.Category = []string{cat.Name}
	}
	return id
}

// originalCase returns word w as the text writes it.
func originalCase(text, w string) string {
	low := strings.ToLower(text)
	if i := strings.Index(low, w); i >= 0 {
		return text[i : i+len(w)]
	}
	return w
}

func compact(s string) string { return strings.NewReplacer("-", "", ".", "", "/", "").Replace(s) }

// CorrectTitle applies a seller's correction of a price-changing attribute ("it's actually the
// 256GB one") to the item's title: each value attribute the text names (storage, size, focal
// length…) replaces the title's value of it, or is added when the title has none. False when
// the text names no attribute or the title already says it.
func CorrectTitle(title, text string) (string, bool) {
	cat := know.CategoryOf(title + " " + text)
	said := strings.ToLower(know.Canonical(text))
	out := title
	changed := false
	for _, d := range know.defs(cat) {
		if d.Kind != "value" {
			continue
		}
		for _, re := range d.res {
			m := re.FindStringSubmatch(said)
			if m == nil {
				continue
			}
			want := know.norm(strings.Join(m[1:], ""))
			phrase := strings.TrimSpace(m[0])
			if i := strings.Index(strings.ToLower(text), phrase); i >= 0 {
				phrase = text[i : i+len(phrase)] // as the seller wrote it
			}
			base := out
			loc := findValue(d, strings.ToLower(base))
			if loc == nil {
				base = know.Canonical(out)
				loc = findValue(d, strings.ToLower(base))
			}
			switch {
			case loc == nil:
				out, changed = strings.TrimSpace(out)+" "+phrase, true
			case loc.value != want && len(base) == len(strings.ToLower(base)):
				out, changed = base[:loc.start]+phrase+base[loc.end:], true
			}
			break
		}
	}
	return out, changed
}

type valueAt struct {
	value      string
	start, end int
}

// findValue finds attribute d's value in lower-case text, with where its match is.
func findValue(d AttrDef, low string) *valueAt {
	for _, re := range d.res {
		if ix := re.FindStringSubmatchIndex(low); ix != nil {
			var parts []string
			for g := 2; g+1 < len(ix); g += 2 {
				if ix[g] >= 0 {
					parts = append(parts, low[ix[g]:ix[g+1]])
				}
			}
			start, end := ix[0], ix[1]
			for start < end && low[start] == ' ' {
				start++
			}
			for end > start && low[end-1] == ' ' {
				end--
			}
			return &valueAt{value: know.norm(strings.Join(parts, "")), start: start, end: end}
		}
	}
	return nil
}
