// Package prompts holds what rehab tells its models (system.md, summary.md, languages.json,
// read by package rehab; classify.md, read by reno) and what its users read: answers.json, every sentence of the tools'
// answers, the replies, the knowledge base's summaries, the session summaries and the PDF
// report, by name and language with {placeholders}. Go keeps the logic and the formatting of
// numbers (kb.Euro, kb.Area); [Say] fills a sentence.
package prompts

import (
	_ "embed"
	"strings"

	"github.com/trellis-go/trellis/server/appkit"
)

//go:embed answers.json
var answersJSON []byte

// Names are the sentences rehab writes: answers.json must give each of them, and no other, in
// every language it is written in.
var Names = []string{
	"read_unknown", "read_part", "note_where", "note_kept_by_me", "note_memory_kinds", "noted",
	"forget_kept", "forget_unknown", "forgotten", "forget_which", "task_what", "task_add",
	"task_complete", "task_reopen", "task_remove", "task_actions", "task_none_complete",
	"task_none_reopen", "task_none_remove", "task_which_complete", "task_which_reopen",
	"task_which_remove", "tasks_none", "tasks_heading", "profile_what", "profile_sections",
	"profile_noted", "budget_fits_focus", "budget_over_focus", "portfolio_empty_start",
	"property_which", "saved_event", "saved", "remove_confirm", "remove_kept", "removed_event",
	"removed", "focus_on", "not_analysed", "analysis_title", "topic_property", "topic_renovation",
	"portfolio_empty", "superlative", "search_found", "search_near", "save_needs_link",
	"analysis_needs_link", "within_budget", "works_over_budget", "over_budget", "offer_taxes",
	"offer_room", "analysis_done", "costs_recalculated", "recalc_not_analysed", "tax_needs_price",
	"tax_heading", "tax_lines", "tax_profile_unknown", "tax_age_hint", "tax_chat", "tax_entry",
	"tax_total_cost", "compare_needs_two", "compare_price", "compare_area", "compare_per_m2",
	"compare_works", "compare_total", "compare_status", "compare_not_analysed",
	"compare_price_plus_works", "compare_cheapest", "listing_unavailable", "listing_bad_url",
	"listing_removed", "listing_unreadable", "listing_unreachable", "internal_error", "hello",
	"hello_name", "not_understood", "can_do", "you_have", "last_time", "summary_analysed", "summary_taxes",
	"summary_profile", "summary_saved", "summary_removed", "summary_switched", "summary_began",
	"summary_last", "report_title", "report_heading", "report_listing", "report_when", "report_for",
	"report_summary", "report_works", "report_total", "report_skills", "report_rooms", "report_room",
	"report_features", "report_issues", "report_diy", "report_taxes", "report_imt", "report_stamp",
	"report_tax_total", "report_total_cost", "report_young", "report_disclaimer", "summary_none",
	"fiscal_first_home", "fiscal_other_home", "fiscal_young", "fiscal_age", "fiscal_partial",
	"budget_range", "budget_up_to", "budget_unset", "budget_works", "renovation_diy",
	"renovation_finish", "renovation_priority", "renovation_partial", "preferences_zones",
	"preferences_partial", "goals_goal", "goals_partial", "profile_sections_done", "index_works",
	"chat_works", "chat_total", "chat_priorities", "chat_room", "detail_rooms", "detail_issues",
	"detail_diy", "compact_price", "compact_area", "no_profile", "empty_portfolio",
	"tax_rule_young_full", "tax_rule_young_partial", "tax_rule_young_over_limit", "tax_rule_own_home",
	"tax_rule_other_home", "tax_table_other_home", "tax_table_own_home",
}

// Answers are answers.json, read when the package starts.
var Answers = mustParse(answersJSON)

// Parse reads an answers file: every name of [Names] in every language of the file, pt-PT
// ("pt") among them, with the same placeholders in each.
func Parse(data []byte) (*appkit.Texts, error) {
	return appkit.ParseTexts("rehab prompts/answers.json", data, "pt", Names)
}

func mustParse(data []byte) *appkit.Texts {
	t, err := Parse(data)
	if err != nil {
		panic(err)
	}
	return t
}

// Say is the sentence name in pt-PT, the language the tools answer in, with its placeholders
// filled: pairs are placeholder, value.
func Say(name string, pairs ...string) string { return Answers.Say("pt", name, pairs...) }

// Lead is the words of a sentence before its first placeholder ("Obras: " of "Obras: {range}"),
// by which a line the sentence wrote is found again.
func Lead(name string) string {
	lead, _, _ := strings.Cut(Say(name), "{")
	return lead
}
