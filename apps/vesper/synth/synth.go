package synth

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/rbac"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/sqlguard"
	"github.com/trellis-go/trellis/apps/vesper/tools"
)

// MaxWords is the length an answer is kept under.
const MaxWords = 600

// Chart describes a series a UI can draw; the Markdown never depends on it.
type Chart struct {
	Kind   string   `json:"kind"` // "line" or "bar"
	Title  string   `json:"title"`
	XLabel string   `json:"x_label"`
	YLabel string   `json:"y_label"`
	X      []string `json:"x"`
	Series []Series `json:"series"`
}

// Series is one line or set of bars of a Chart.
type Series struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

// Block is one tool result made ready for the answer: the sentence that
// answers, optional paragraphs, a table, and a chart.
type Block struct {
	Lead      string
	Paras     []string
	Table     *Table
	Chart     *Chart
	ReportKey string
	// Related are more report keys whose pages go with this result.
	Related []string
	// Empty is true when the tool found nothing; Lead then says what was
	// searched and what to try.
	Empty bool
}

// Options are the formatter's settings; the zero value uses time.Now.
type Options struct {
	// Now is the reference date for "Feb 26" versus "Feb 26, 2025".
	Now func() time.Time
}

// Formatter turns tool results into Markdown by fixed rules, so every
// model, the offline one included, formats alike.
type Formatter struct {
	now func() time.Time
}

// New returns a Formatter; nil opts means the zero Options.
func New(opts *Options) *Formatter {
	f := &Formatter{now: time.Now}
	if opts != nil && opts.Now != nil {
		f.now = opts.Now
	}
	return f
}

func emptyBlock(m tools.Meta, tryInstead string) Block {
	lead := tools.Fill(texts.NoResults, "searched", m.Searched)
	if m.Searched == "" {
		lead = texts.NoRows
	}
	if tryInstead != "" {
		lead += " " + tryInstead
	}
	return Block{Lead: lead, Empty: true, ReportKey: m.ReportKey}
}

func candidatesBlock(m tools.Meta) Block {
	b := Block{Lead: m.Note, Empty: true}
	if len(m.Candidates) > 0 {
		var lines []string
		for _, c := range m.Candidates {
			lines = append(lines, "- "+c)
		}
		b.Paras = []string{strings.Join(lines, "\n")}
	}
	return b
}

func truncNote(m tools.Meta, b Block) Block {
	if m.Truncated && m.Note != "" {
		b.Paras = append(b.Paras, "_"+m.Note+"_")
	}
	return b
}

// Error explains a failed tool call to the user: a denial says which
// permission is missing, a refused query says why, anything else says the
// data could not be read. It is never empty.
func (f *Formatter) Error(toolName string, err error) Block {
	var de *rbac.DeniedError
	var re *sqlguard.RejectedError
	var ae *tools.ArgError
	switch {
	case errors.As(err, &de):
		return Block{Lead: de.UserMessage(), Empty: true}
	case errors.As(err, &re):
		lead := tools.Fill(texts.QueryRefused, "reason", re.Reason)
		if re.Hint != "" {
			lead += " " + tools.Fill(texts.QueryFix, "hint", re.Hint)
		}
		return Block{Lead: lead, Empty: true}
	case errors.As(err, &ae):
		// The tools' hints are written for a model ("call list_available_curves ..."):
		// the user gets a sentence about the question instead.
		lead := tools.Fill(texts.ArgError, "argument", strings.ReplaceAll(ae.Arg, "_", " "), "problem", userProblem(ae.Problem))
		if hint := texts.ArgHints[ae.Arg]; hint != "" {
			lead += " " + hint
		}
		return Block{Lead: lead, Empty: true}
	}
	return Block{Lead: texts.ToolFailed, Empty: true}
}

// userProblem words a tool's problem for a person: "missing" reads "is missing".
func userProblem(p string) string {
	if p == "missing" {
		return texts.ArgMissing
	}
	return tools.Fill(texts.ArgWrong, "problem", p)
}

// Render turns one tool result (a *tools.XxxResult) into a Block. An
// unknown type is an error, so a new tool cannot be silently dropped.
func (f *Formatter) Render(result any) (Block, error) {
	now := f.now()
	switch r := result.(type) {
	case *tools.AveragePriceResult:
		return f.averagePrice(r), nil
	case *tools.HourlyPriceResult:
		return f.hourly(r), nil
	case *tools.ListCurvesResult:
		return f.curves(r), nil
	case *tools.CompareVendorsResult:
		return f.vendors(r), nil
	case *tools.CompareHubZonesResult:
		return f.hubZones(r), nil
	case *tools.TopReportsResult:
		return f.topReports(r, now), nil
	case *tools.TopUsersResult:
		return f.topUsers(r, now), nil
	case *tools.UsageTrendResult:
		return f.trend(r, now), nil
	case *tools.ProjectOverviewResult:
		return f.overview(r), nil
	case *tools.ProjectHealthResult:
		return f.health(r), nil
	case *tools.MilestoneResult:
		return f.milestones(r), nil
	case *tools.BudgetResult:
		return f.budget(r), nil
	case *tools.TaskRisksResult:
		return f.risks(r, now), nil
	case *tools.PortfolioResult:
		return f.portfolio(r), nil
	case *tools.RecentChangesResult:
		return f.changes(r, now), nil
	case *tools.GeneralSQLResult:
		return f.generalSQL(r), nil
	}
	return Block{}, fmt.Errorf("synth: no formatting rule for %T; add one to Render", result)
}

// Answer is the composed reply.
type Answer struct {
	Markdown string             `json:"markdown"`
	Charts   []Chart            `json:"charts,omitempty"`
	Links    []reports.DeepLink `json:"pbi_deep_links,omitempty"`
	Words    int                `json:"words"`
}

// Compose merges blocks (one per tool result, in the order the agents
// ran) with the deep links into one answer: each block's lead first, a
// table when there are more than three rows or a comparison of two or
// three rows across three or more columns (a list otherwise), then a
// "Related Reports" section. Tables are shortened until the answer is under
// MaxWords.
func (f *Formatter) Compose(blocks []Block, links []reports.DeepLink) Answer {
	var a Answer
	for _, b := range blocks {
		if b.Chart != nil {
			a.Charts = append(a.Charts, *b.Chart)
		}
	}
	a.Links = links
	for _, max := range []int{0, 25, 12, 6, 3} {
		a.Markdown = f.write(blocks, links, max)
		a.Words = len(strings.Fields(a.Markdown))
		if a.Words <= MaxWords {
			break
		}
	}
	return a
}

func (f *Formatter) write(blocks []Block, links []reports.DeepLink, maxRows int) string {
	var parts []string
	for _, b := range blocks {
		var s []string
		if b.Lead != "" {
			s = append(s, b.Lead)
		}
		if b.Table != nil && len(b.Table.Rows) > 0 {
			if n := len(b.Table.Rows); n > 3 || (n >= 2 && len(b.Table.Headers) >= 3) {
				s = append(s, strings.TrimRight(b.Table.Markdown(maxRows), "\n"))
			} else {
				s = append(s, strings.TrimRight(b.Table.Bullets(), "\n"))
			}
		}
		s = append(s, b.Paras...)
		parts = append(parts, strings.Join(s, "\n\n"))
	}
	out := humanDates(strings.Join(parts, "\n\n"), f.now())
	if len(links) > 0 {
		var l []string
		for _, link := range links {
			line := fmt.Sprintf("- [%s](%s)", link.ReportName, link.URL)
			if link.Description != "" {
				line += " — " + link.Description
			}
			l = append(l, line)
		}
		out += "\n\n---\n" + label("related_reports") + "\n" + strings.Join(l, "\n")
	}
	return out
}

// ReportKeys collects the report keys of blocks, in order, for the linker.
func ReportKeys(blocks []Block) []string {
	var keys []string
	for _, b := range blocks {
		if b.ReportKey != "" && !b.Empty {
			keys = append(keys, b.ReportKey)
			keys = append(keys, b.Related...)
		}
	}
	return keys
}

// isoInText is an ISO date anywhere in an answer's text.
var isoInText = regexp.MustCompile(`\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`)

// humanDates writes any ISO date left in an answer's text (a value a
// result carried through, a user's own words quoted back) as the answers
// write dates: "Feb 26", or "Feb 26, 2025" in another year. The renderers
// write their dates so already; this keeps the rule for every answer.
func humanDates(text string, now time.Time) string {
	return isoInText.ReplaceAllStringFunc(text, func(d string) string { return Day(d, now) })
}
