package vesper

import (
	"embed"
	"strings"
)

// The prompts a real model is given, as the specification writes them, in prompts/*.md.
//
//go:embed prompts/*.md
var promptFiles embed.FS

var (
	// supervisorPrompt opens the classifier's prompt (the specification's §8.1).
	supervisorPrompt = prompt("supervisor")
	// synthesizerPrompt is the response writer's prompt with a real model (the specification's
	// §19). The data it receives is already formatted by the rules (tables, emoji, units,
	// dates), so every model presents it alike.
	synthesizerPrompt = prompt("synthesizer")
	// compressionPrompt is the conversation compression prompt (the specification's Appendix
	// A.1): what a summary of a long session keeps for the turns that follow it.
	compressionPrompt = prompt("compression")
	// The domain agents' system prompts.
	dayAheadPrompt   = prompt("dayahead_agent")
	priceCurvePrompt = prompt("price_curve_agent")
	pbiPrompt        = prompt("pbi_metrics_agent")
	perPrompt        = prompt("per_agent")
)

// prompt reads prompts/<name>.md, less its final newline.
func prompt(name string) string {
	b, err := promptFiles.ReadFile("prompts/" + name + ".md")
	if err != nil {
		panic("vesper: the embedded prompt " + name + " is missing: " + err.Error())
	}
	return strings.TrimSuffix(string(b), "\n")
}
