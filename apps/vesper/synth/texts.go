package synth

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"

	"github.com/trellis-go/trellis/apps/vesper/pack"
	"github.com/trellis-go/trellis/apps/vesper/tools"
)

// The sentences the formatter writes around the data (an empty result, a failed call) are data,
// in texts.json; Go fills their placeholders ("{searched}") and joins them.
//
//go:embed texts.json
var textsData []byte

// Texts are the formatter's sentences, read from texts.json; every one is required.
type Texts struct {
	// NoResults leads an empty result, with {searched} (tools.Meta.Searched); NoRows leads
	// one that says nothing of what was searched.
	NoResults string `json:"no_results"`
	NoRows    string `json:"no_rows"`
	// QueryRefused explains a refused query ({reason}); QueryFix follows it with {hint}.
	QueryRefused string `json:"query_refused"`
	QueryFix     string `json:"query_fix"`
	// ArgError explains a tool's refused argument ({argument}, {problem}); the problem is
	// ArgMissing, or ArgWrong with the tool's {problem}.
	ArgError   string `json:"arg_error"`
	ArgMissing string `json:"arg_missing"`
	ArgWrong   string `json:"arg_wrong"`
	// ToolFailed answers for a call that failed otherwise.
	ToolFailed string `json:"tool_failed"`
	// ArgHints say, per argument, what a person can add to the question.
	ArgHints map[string]string `json:"arg_hints"`
	// TryInstead say, per renderer (the names of [TryInsteadNames]), what to ask when a
	// result is empty.
	TryInstead map[string]string `json:"try_instead"`
	// Sentences are the answers' sentence templates by name (the names of [SentenceNames]),
	// each with its {placeholders}.
	Sentences map[string]string `json:"sentences"`
	// Headers are the tables' column headers by table (the names of [HeaderNames]); a header may
	// hold {placeholders} ("{a} ($/MWh)").
	Headers map[string][]string `json:"headers"`
	// Labels are the words of tables, charts and statuses by name (the names of [LabelNames]).
	Labels map[string]string `json:"labels"`
	// MilestoneKinds name the kind of milestone a task is, by a word of its name, for the
	// pattern line of date changes; the first that matches wins.
	MilestoneKinds []MilestoneKind `json:"milestone_kinds"`
}

// MilestoneKind is one kind of milestone and a word of the tasks of that kind.
type MilestoneKind struct {
	Word string `json:"word"`
	Kind string `json:"kind"`
}

// HeaderNames are the tables whose headers the renderers read (Texts.Headers).
var HeaderNames = []string{"average_prices", "hourly", "curves", "vendors", "hub_zones", "top_reports", "top_users", "trend",
	"overview", "health", "milestones", "budget", "risks", "portfolio", "portfolio_dates", "date_changes", "changes"}

// LabelNames are the labels the renderers read (Texts.Labels).
var LabelNames = []string{"hour_ending", "per_mwh", "average", "min", "max", "views_axis", "views", "budget", "actuals_to_date",
	"forecast", "location", "utility", "sponsor", "offtake", "cod", "above", "below", "higher", "lower", "no_change",
	"related_reports", "on_track", "at_risk", "off_track", "on_hold", "badge_green", "badge_yellow", "badge_red", "badge_blue",
	"badge_none"}

// TryInsteadNames are the renderers whose empty result suggests what to ask instead.
var TryInsteadNames = []string{"average_price", "hourly", "curves", "vendors", "hub_zones", "top_reports",
	"top_users", "trend", "health", "milestones", "risks", "portfolio", "changes"}

// SentenceNames are the sentence templates the renderers write (Texts.Sentences).
var SentenceNames = []string{"average_price", "as_of_gives", "other_as_of_many", "other_as_of", "average_price_all",
	"files_differ", "hourly", "market_peak_hours", "peak_hours", "peak_vs_off_peak", "vendor_difference",
	"vendor_peak_difference", "one_vendor", "hub_spread", "most_active_user", "sells_ppa_price", "sells_ppa", "sells",
	"no_offtake", "key_risk", "health", "cod", "no_cod", "milestones_source", "budget", "letters_of_credit",
	"portfolio_source", "all_reports", "reports", "of_project", "in_stage", "hour_ending", "hours_ending", "chart_hourly",
	"chart_hub_zones", "chart_trend", "vendor_comparison", "range", "week_of", "trend", "trend_all_reports", "trend_over",
	"trend_from", "trend_change", "trend_up", "trend_down", "trend_flat", "overview", "capacity", "storage_capacity",
	"capacity_and", "of_budget", "tenor", "changes_since", "changes_from", "pattern", "slip", "slip_months_range",
	"slip_kinds", "and"}

// CountedNames are the sentence templates written with a count: each is given twice in
// Texts.Sentences, as "<name>_one" for a count of one and "<name>_other" for any other.
var CountedNames = []string{"top_report", "top_report_viewers", "totals", "top_users", "rows", "risks", "portfolio_status",
	"portfolio", "curves", "trend_by", "changes", "date_changes", "changes_last", "slip_months", "shift_month", "shift_week",
	"shift_day", "more_rows"}

// ParseTexts reads a texts file: every sentence, every name of [TryInsteadNames] and of
// [SentenceNames], [HeaderNames] and [LabelNames], and both forms of every name of
// [CountedNames] must be given, and no unknown field.
func ParseTexts(b []byte) (*Texts, error) { return pack.Read(textsFile, b, checkTexts) }

const textsFile = "vesper synth: texts.json"

func checkTexts(t *Texts) error {
	var counted []string
	for _, name := range CountedNames {
		counted = append(counted, name+"_one", name+"_other")
	}
	return errors.Join(pack.Need("try_instead", t.TryInstead, TryInsteadNames, "synth.TryInsteadNames"),
		pack.Need("sentence", t.Sentences, SentenceNames, "synth.SentenceNames"),
		pack.Need("sentence", t.Sentences, counted, "both forms of synth.CountedNames"),
		pack.Need("label", t.Labels, LabelNames, "synth.LabelNames"), needHeaders(t.Headers))
}

func needHeaders(h map[string][]string) error {
	for _, name := range HeaderNames {
		if len(h[name]) == 0 || slices.Contains(h[name], "") {
			return fmt.Errorf("headers %q is missing, empty or has an empty header; the formatter reads every name of synth.HeaderNames", name)
		}
	}
	return nil
}

// headers are the column headers of the table by that name, their placeholders filled.
func headers(name string, pairs ...string) []string {
	out := slices.Clone(texts.Headers[name])
	for i := range out {
		out[i] = tools.Fill(out[i], pairs...)
	}
	return out
}

// label is the label of texts.json by that name.
func label(name string) string { return texts.Labels[name] }

// texts are the formatter's sentences.
var texts = pack.MustRead(textsFile, textsData, checkTexts)

// say is the sentence of texts.json by that name, its placeholders filled; pairs are name, value.
func say(name string, pairs ...string) string {
	return tools.Fill(texts.Sentences[name], pairs...)
}

// sayN is the sentence of texts.json by that name for a count of n ("<name>_one" or
// "<name>_other"), its placeholders filled.
func sayN(n int, name string, pairs ...string) string {
	if n == 1 || n == -1 {
		return say(name+"_one", pairs...)
	}
	return say(name+"_other", pairs...)
}
