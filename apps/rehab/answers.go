package rehab

import (
	"github.com/trellis-go/trellis/apps/rehab/prompts"
	"github.com/trellis-go/trellis/server/appkit"
)

// What the user reads from rehab is data: prompts/answers.json (package prompts), each sentence
// by name and language with {placeholders}; [answer] fills a sentence.

// AnswerNames are the sentences rehab writes (prompts.Names).
var AnswerNames = prompts.Names

// Answers are prompts/answers.json, read when the package starts.
var Answers = prompts.Answers

// ParseAnswers reads an answers file (prompts.Parse).
func ParseAnswers(data []byte) (*appkit.Texts, error) { return prompts.Parse(data) }

// answer is the sentence name of prompts/answers.json in pt-PT with its placeholders filled.
func answer(name string, pairs ...string) string { return prompts.Say(name, pairs...) }
