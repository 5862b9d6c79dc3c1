package vesper

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/trellis-go/trellis/apps/vesper/entity"
	"github.com/trellis-go/trellis/apps/vesper/pack"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/period"
)

// Filters are the values the supervisor extracts from a request: the
// specification's FilterContext plus the two the PER examples use
// (status_color, field_changed). Empty fields were not named.
type Filters struct {
	Vendor  string `json:"vendor,omitempty"`
	Market  string `json:"market,omitempty"`
	HubZone string `json:"hub_zone,omitempty"`
	AsOf    string `json:"asof_date,omitempty"`
	Year    int    `json:"year,omitempty"`
	Month   int    `json:"month,omitempty"`
	// Months are the months of Year a question names: one month, a
	// quarter or a season. Empty means the whole year.
	Months         []int  `json:"months,omitempty"`
	Hour           *int   `json:"hour,omitempty"`
	ProjectName    string `json:"project_name,omitempty"`
	ProjectStage   string `json:"project_stage,omitempty"`
	Technology     string `json:"technology,omitempty"`
	Sponsor        string `json:"sponsor,omitempty"`
	ReportName     string `json:"report_name,omitempty"`
	DateRangeStart string `json:"date_range_start,omitempty"`
	DateRangeEnd   string `json:"date_range_end,omitempty"`
	TopN           int    `json:"top_n,omitempty"`
	StatusColor    string `json:"status_color,omitempty"`
	FieldChanged   string `json:"field_changed,omitempty"`
	// Milestones are the milestone dates a question asks to see with each
	// project of a portfolio list (activeportfolio_mm's names, COD as
	// "Commercial Operation").
	Milestones []string `json:"milestones,omitempty"`
	// RiskLevel is a task risk level: High, Medium or Low.
	RiskLevel string `json:"risk_level,omitempty"`
	// Buyer is the offtaker of a project's PPA.
	Buyer string `json:"buyer,omitempty"`
	// HubZones holds every hub-zone named, for comparisons of two.
	HubZones []string `json:"hub_zones,omitempty"`
	// Vendors holds every vendor named, for comparisons.
	Vendors []string `json:"vendors,omitempty"`
	// Markets holds every market named, for comparisons of two.
	Markets []string `json:"markets,omitempty"`
	// SQL is a query the user wrote and asks to run, verbatim; it goes to
	// general_sql_query, which needs chat:advanced_sql.
	SQL string `json:"sql,omitempty"`
}

// FilterSchema is the JSON Schema of Filters the classifier fills.
var FilterSchema = json.RawMessage(`{"type":"object","properties":{
"vendor":{"type":"string","description":"Vendor: 'Ascend' or 'Hitachi' (icf, hitachi-icf mean Hitachi)"},
"market":{"type":"string","description":"Market: CAISO, ERCOT, MISO, PJM, NYISO or ISO-NE"},
"hub_zone":{"type":"string","description":"Hub-zone, e.g. NP15, SP15, HB_NORTH"},
"asof_date":{"type":"string","description":"As-Of file, e.g. Jan_2025 or Q1_2025"},
"year":{"type":"integer","description":"Year, e.g. 2025"},
"month":{"type":"integer","description":"Month 1-12"},
"months":{"type":"array","items":{"type":"integer"},"description":"Months 1-12 of the year a question names: a month, a quarter ([7,8,9]) or a season ([6,7,8])"},
"milestones":{"type":"array","items":{"type":"string"},"description":"Milestone dates to list per project, e.g. Commercial Operation (COD), Project Finance, EPC FNTP"},
"hour":{"type":"integer","description":"Hour of day 0-23"},
"project_name":{"type":"string","description":"Project name as the user wrote it"},
"project_stage":{"type":"string","description":"Stage, e.g. Stage 3"},
"technology":{"type":"string","description":"Solar, Wind, BESS, Hybrid or Solar+Storage"},
"sponsor":{"type":"string"},
"report_name":{"type":"string","description":"Power BI report name"},
"date_range_start":{"type":"string","description":"ISO date"},
"date_range_end":{"type":"string","description":"ISO date"},
"top_n":{"type":"integer"},
"status_color":{"type":"string","description":"on_track (green), at_risk (yellow), off_track (red) or on_hold (blue)"},
"field_changed":{"type":"string","description":"Changed field, e.g. FinishDate"},
"risk_level":{"type":"string","description":"Task risk level: High, Medium or Low"},
"buyer":{"type":"string","description":"Offtaker (PPA buyer), e.g. Amazon"},
"hub_zones":{"type":"array","items":{"type":"string"}},
"vendors":{"type":"array","items":{"type":"string"}},
"markets":{"type":"array","items":{"type":"string"}},
"sql":{"type":"string","description":"A SQL SELECT the user wrote and asks to run, verbatim; leave out otherwise"}}}`)

// Normalize resolves every entity filter through the alias map and fuzzy
// matching (entity.Resolve); values nothing matches are kept, so the tools
// can say what was not found.
func (f *Filters) Normalize() {
	res := func(kind string, v *string) {
		if *v == "" {
			return
		}
		if c, ok, err := entity.Resolve(kind, *v); err == nil && ok {
			*v = c
		}
	}
	res(entity.Vendor, &f.Vendor)
	res(entity.Market, &f.Market)
	res(entity.HubZone, &f.HubZone)
	res(entity.Technology, &f.Technology)
	for i := range f.HubZones {
		res(entity.HubZone, &f.HubZones[i])
	}
	for i := range f.Vendors {
		res(entity.Vendor, &f.Vendors[i])
	}
	f.StatusColor = statusColor(f.StatusColor)
}

// statusColor is the status a colour or health word names, by pack/words.json's status_colors
// (a status's own name, or one of its phrases without the spaces and brackets around it:
// "red", "off track"); any other value as it is.
func statusColor(v string) string {
	w := strings.ToLower(strings.TrimSpace(v))
	for _, c := range pack.Vocabulary.StatusColors {
		if w == c.Status || slices.ContainsFunc(c.Phrases, func(p string) bool { return w == strings.Trim(p, " ()") }) {
			return c.Status
		}
	}
	return v
}

var (
	yearRE   = regexp.MustCompile(`\b(20[2-3][0-9])\b`)
	asofRE   = regexp.MustCompile(`(?i)\b((?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)_20[2-3][0-9]|q[1-4]_20[2-3][0-9])\b`)
	topRE    = regexp.MustCompile(`(?i)\b(?:` + alternatives(pack.Vocabulary.Cues["top_n"]) + `)\s+(\d{1,3})\b`)
	stageRE  = regexp.MustCompile(`(?i)\b(?:` + alternatives(pack.Vocabulary.Cues["stage"]) + `)[\s-]*([1-8]|` + alternatives(keys(pack.Vocabulary.StageNumbers)) + `)\b`)
	wordRE   = regexp.MustCompile(`[A-Za-z0-9_+\-]+`)
	capRunRE = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*(?:\s+[A-Z][A-Za-z0-9]*)*\b`)
	// riskLevelRE finds a task risk level: "high risk", "high-risk tasks",
	// "risk level medium", "risk of low" (not "at risk", a health colour).
	riskLevelRE = regexp.MustCompile(`\b(` + alternatives(keys(pack.Vocabulary.RiskLevels)) + `)[- ]?(?:` + alternatives(pack.Vocabulary.RiskLevelBefore) +
		`)|\b(?:` + alternatives(pack.Vocabulary.RiskLevelAfter) + `)\s+(` + alternatives(keys(pack.Vocabulary.RiskLevels)) + `)\b`)
)

// Extract reads the filters a request names, with the rules of the
// specification's supervisor prompt: the alias map per kind, four-digit
// years, As-Of identifiers, "top N", stages, health colours and relative
// date ranges ("last week", "last month", "this quarter") against now.
func Extract(text string, now time.Time) Filters {
	var f Filters
	lower := strings.ToLower(text)
	words := wordRE.FindAllString(text, -1)
	seen := map[string]bool{}
	aliased := map[string]string{} // hub-zone -> the alias word that named it
	for i := 0; i < len(words); i++ {
		// Two-word aliases first ("north hub", "hitachi icf").
		for _, n := range []int{2, 1} {
			if i+n > len(words) {
				continue
			}
			w := strings.Join(words[i:i+n], " ")
			if kind, canon := exactEntity(w); kind != "" {
				key := kind + "/" + canon
				if !seen[key] {
					seen[key] = true
					switch kind {
					case entity.Vendor:
						f.Vendors = append(f.Vendors, canon)
					case entity.Market:
						if f.Market == "" {
							f.Market = canon
						}
						f.Markets = append(f.Markets, canon)
					case entity.HubZone:
						f.HubZones = append(f.HubZones, canon)
						if _, ok := entity.Aliases[kind][strings.ToLower(w)]; ok {
							aliased[canon] = strings.ToLower(w)
						}
					case entity.Technology:
						if f.Technology == "" {
							f.Technology = canon
						}
					}
				}
				i += n - 1
				break
			}
		}
	}
	if len(f.Vendors) > 0 {
		f.Vendor = f.Vendors[0]
	}
	f.HubZones = hubsInMarket(f.HubZones, aliased, f.Markets)
	if len(f.HubZones) > 0 {
		f.HubZone = f.HubZones[0]
	}
	if m := yearRE.FindString(text); m != "" {
		f.Year, _ = strconv.Atoi(m)
	}
	if m := asofRE.FindString(text); m != "" {
		f.AsOf = strings.ToUpper(m[:1]) + strings.ToLower(m[1:3]) + m[3:]
		if m[0] == 'q' || m[0] == 'Q' {
			f.AsOf = "Q" + m[1:]
		}
	}
	if m := topRE.FindStringSubmatch(text); m != nil {
		f.TopN, _ = strconv.Atoi(m[1])
	}
	if m := stageRE.FindStringSubmatch(text); m != nil {
		f.ProjectStage = "Stage " + stageNumber(m[1])
	} else if n := stageByName(lower); n != 0 {
		f.ProjectStage = "Stage " + strconv.Itoa(n)
	}
	f.Milestones = milestonesAsked(lower)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	// "last week" in a question about changes is the seven days to the data's date.
	if p, ok := (period.Options{RollingWeeks: true}).Read(text, day); ok {
		f.DateRangeStart = p.Start.Format(time.DateOnly)
		if !p.End.IsZero() {
			f.DateRangeEnd = p.End.Format(time.DateOnly)
		}
		if p.Month != 0 {
			f.Month = int(p.Month)
		}
		// A month, quarter or season of one year: the price tools read
		// those months of that year, never the whole year.
		if year, months := p.MonthsOfYear(); year != 0 {
			f.Months = months
			if f.Year == 0 {
				f.Year = year
			}
		} else if f.Year == 0 && p.Start.Month() == time.January && p.Start.Day() == 1 {
			f.Year = p.Start.Year() // this year, year to date: that year's prices
		}
	} else if f.Year != 0 && !hasCue(lower, "cod") {
		// "in 2025" for usage questions is the whole year.
		f.DateRangeStart = time.Date(f.Year, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		f.DateRangeEnd = time.Date(f.Year, 12, 31, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		if end := day.Format(time.DateOnly); f.DateRangeEnd > end && f.DateRangeStart <= end {
			f.DateRangeEnd = end
		}
	}
	if f.Month == 0 {
		// A month named for prices ("hourly prices in March 2025").
		for _, pt := range period.Dates(text, day) {
			if pt.Monthly {
				f.Month = int(pt.At.Month())
				break
			}
		}
	}
	if m := riskLevelRE.FindStringSubmatch(lower); m != nil {
		lvl := m[1]
		if lvl == "" {
			lvl = m[2]
		}
		f.RiskLevel = pack.Vocabulary.RiskLevels[lvl]
	}
	for _, c := range pack.Vocabulary.StatusColors {
		if has(lower, c.Phrases...) {
			f.StatusColor = c.Status
			break
		}
	}
	f.SQL = userSQL(text)
	// "milestones that moved", "COD slipped": the dates that changed, not every change.
	if (hasCue(lower, "milestone") || len(f.Milestones) > 0) && hasCue(lower, "milestone_moved") {
		f.FieldChanged = "FinishDate"
	}
	return f
}

// hubsInMarket reads a hub-zone named by an alias word in the one market the request names:
// "ERCOT north" is ERCOT's HB_NORTH, not CAISO's NP15, which "north" alone means. A hub-zone
// so named that the market does not have is left out, so the market's main hub answers.
func hubsInMarket(hubs []string, aliased map[string]string, markets []string) []string {
	if len(markets) != 1 || len(aliased) == 0 {
		return hubs
	}
	var out []string
	for _, h := range hubs {
		word, ok := aliased[h]
		if !ok || entity.HubMarket[h] == markets[0] {
			out = append(out, h)
			continue
		}
		if in, ok := entity.HubIn(markets[0], word); ok && !slices.Contains(out, in) {
			out = append(out, in)
		}
	}
	return out
}

// sqlStartRE finds where a SELECT (or WITH ... SELECT) statement starts.
var (
	sqlStartRE = regexp.MustCompile(`(?is)\b(?:select\s|with\s+[a-z_][a-z0-9_]*\s+as\s*\()`)
	sqlFromRE  = regexp.MustCompile(`(?is)\bfrom\s+\S`)
)

// userSQL returns the SQL statement a request asks to run: the text from
// its first SELECT (or WITH) on, without code fences, when the request
// names SQL ("run this SQL: select ...") or is only a statement naming an
// approved view, and the statement reads FROM something. English that merely says "select"
// is not SQL. Whether the statement is allowed is sqlguard's decision.
func userSQL(text string) string {
	t := strings.TrimSpace(strings.ReplaceAll(text, "```sql", "```"))
	loc := sqlStartRE.FindStringIndex(t)
	if loc == nil {
		return ""
	}
	stmt := strings.TrimSpace(strings.Trim(strings.TrimSpace(t[loc[0]:]), "`"))
	before := strings.ToLower(t[:loc[0]])
	named := hasCue(before, "sql_named")
	if !named && loc[0] == 0 {
		// A message that is only a statement must name a view: "Select all
		// projects from Stage 3" is English.
		lower := strings.ToLower(stmt)
		for _, v := range warehouse.ViewNames() {
			if strings.Contains(lower, v) {
				named = true
				break
			}
		}
	}
	if !named || !sqlFromRE.MatchString(stmt) {
		return ""
	}
	return stmt
}

// exactEntity reports whether a word is a known vendor, market, hub-zone or
// technology by the alias map or an exact match (no fuzzy matching on free
// text: "show" must not become a hub-zone).
func exactEntity(w string) (kind, canon string) {
	lw := strings.ToLower(w)
	norm := squash(lw)
	for _, k := range []string{entity.HubZone, entity.Market, entity.Vendor, entity.Technology} {
		if c, ok := entity.Aliases[k][lw]; ok {
			return k, c
		}
		for _, known := range entity.Known[k] {
			// "NP-15", "np 15", "hb-north" and "HB_NORTH" are one name.
			if strings.EqualFold(known, w) || len(norm) >= 3 && norm == squash(strings.ToLower(known)) {
				return k, known
			}
		}
	}
	// A vendor or market with a typo ("ascnd", "ercott"): long names only,
	// so that short words never turn into one.
	for _, k := range []string{entity.Vendor, entity.Market} {
		if len(norm) < 5 || strings.ContainsAny(w, " -_") {
			break
		}
		for _, known := range entity.Known[k] {
			if kn := squash(strings.ToLower(known)); len(kn) >= 5 && entity.Ratio(norm, kn) >= 0.83 {
				return k, known
			}
		}
	}
	return "", ""
}

// squash keeps a name's letters and digits.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, s)
}

// capitalisedRuns are the runs of capitalised words of a text, longest
// first, less a leading question word: candidates for a project name.
func capitalisedRuns(text string) []string {
	var out []string
	for _, run := range capRunRE.FindAllString(text, -1) {
		// An initial ("S." of S. Moreau) or the tail of a hyphenated name
		// ("NE" of ISO-NE) names no project.
		if len([]rune(run)) < 3 {
			continue
		}
		ws := strings.Fields(run)
		for len(ws) > 0 {
			if k, _ := exactEntity(ws[0]); k != "" || nameStopWords[strings.ToLower(ws[0])] {
				ws = ws[1:]
				continue
			}
			break
		}
		if len(ws) > 0 {
			out = append(out, strings.Join(ws, " "))
		}
	}
	return out
}

// nameStopWords begin a capitalised run without being part of a name.
var nameStopWords = set(pack.Vocabulary.NameStopWords)

// alternatives writes phrases as a regular expression's alternatives, longest first so that
// "risk level is" is tried before "risk".
func alternatives(phrases []string) string {
	ps := slices.Clone(phrases)
	slices.SortStableFunc(ps, func(a, b string) int { return len(b) - len(a) })
	for i, p := range ps {
		ps[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(ps, "|")
}

// keys returns a map's keys, sorted.
func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
