package offline

import (
	"strings"

	"github.com/trellis-go/trellis/message"
)

// MetaOffline is the message metadata key set to true on every message the offline model
// writes (with "provider": "offline" and "offline_rule"). Programs tell an offline answer by
// it, never by the text; [Marker] is only the label a person reads.
const MetaOffline = "offline"

// MetaRule is the message metadata key that names the rule which wrote an offline answer: one of
// the Rule constants below, or an app's own rule for answers its rules write.
const MetaRule = "offline_rule"

// The rules the offline model answers by, reported under [MetaRule].
const (
	RuleToolResults = "tool_results" // an answer written from tool results
	RuleToolChain   = "tool_chain"   // the next step's calls of a request in steps
	RuleStructured  = "structured"   // a filled schema
	RuleToolCall    = "tool_call"    // calls to the tools the words point to
	RuleAsk         = "ask"          // a question for a missing required argument
	RuleVision      = "vision"       // what the pictures are labelled with
	RuleTitle       = "title"        // a conversation title
	RuleSummary     = "summary"      // a summary of the conversation
	RuleHints       = "hints"        // follow-up questions
	RuleFallback    = "fallback"     // the reply that no model is configured
)

// Metadata is the metadata of a message the offline model wrote by rule: provider and model
// [Name], [MetaOffline] true and [MetaRule] rule. Apps that answer by their own rules on the
// offline path label their messages with it too.
func Metadata(rule string) map[string]any {
	return map[string]any{"provider": Name, "model": Name, MetaOffline: true, MetaRule: rule}
}

// IsOffline reports whether message metadata says the offline model wrote the message.
func IsOffline(md map[string]any) bool {
	v, _ := md[MetaOffline].(bool)
	return v
}

// Unlabelled returns m's text without the visible [Marker] when m's metadata says the offline
// model wrote it, and m's text unchanged otherwise.
func Unlabelled(m message.Message) string {
	if !IsOffline(m.Metadata) {
		return m.Text()
	}
	return StripMarker(m.Text())
}

// StripMarker removes the visible [Marker] from text written by the offline model, for a
// program that already knows (from metadata) who wrote it and reuses the text.
func StripMarker(text string) string {
	return strings.TrimSpace(strings.ReplaceAll(text, Marker, ""))
}
