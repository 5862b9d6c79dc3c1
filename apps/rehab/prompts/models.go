package prompts

import (
	_ "embed"
	"strings"
)

//go:embed classify.md
var classifyMD string

// Classify is what the vision model is told for each listing photo (classify.md): the room
// type, its condition and what it shows, in Portuguese.
var Classify = strings.TrimSpace(classifyMD)
