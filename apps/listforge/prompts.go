package listforge

import (
	"embed"
	"strings"
)

//go:embed prompts/*.md
var promptFiles embed.FS

// prompt is the embedded prompts/<name>.md, without its final newline.
func prompt(name string) string {
	b, err := promptFiles.ReadFile("prompts/" + name + ".md")
	if err != nil {
		panic("listforge: prompts/" + name + ".md: " + err.Error())
	}
	return strings.TrimSpace(string(b))
}

// The chat's prompts (prompts/*.md).
var (
	// IntentPrompt asks a configured model to classify a message.
	IntentPrompt = prompt("intent")
	// ChatPrompt is the answer's system prompt for a configured model.
	ChatPrompt = prompt("chat")
	// ActionPrompt asks a configured model which field to change.
	ActionPrompt = prompt("action")
	// RoutePrompt asks a model to call the one tool of RouteTools the message asks for.
	RoutePrompt = prompt("route")
)
