package rehab

import (
	_ "embed"
	"strings"
)

//go:embed prompts/system.md
var systemPromptMD string

// SystemPrompt is the agent's instructions (prompts/system.md), in pt-PT with English section
// headers, encoding the specification's six behaviours and its formats.
var SystemPrompt = strings.TrimRight(systemPromptMD, "\n")
