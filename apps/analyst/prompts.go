package analyst

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
	"text/template"
)

// The system prompts are Markdown files, prompts/<name>.md: the role, then an "## Instructions"
// and an "## Rules" section, each a text/template over the values the prompt is given
// ({{.Topic}}, {{if .Feedback}}...{{end}}). prompt renders one into the XML sections the
// specification gives the analyst's prompts, with the user's memory.
//
//go:embed prompts/*.md
var promptFiles embed.FS

// promptParts is a parsed prompt file: its role, instructions and rules.
type promptParts struct{ role, instructions, rules *template.Template }

// prompts are the parsed prompt files, by name; a file that does not parse stops the program
// at start-up (they are embedded, and TestPromptsRender renders each).
var prompts = func() map[string]promptParts {
	out := map[string]promptParts{}
	names, err := fs.Glob(promptFiles, "prompts/*.md")
	if err != nil {
		panic(err)
	}
	for _, path := range names {
		b, err := promptFiles.ReadFile(path)
		if err != nil {
			panic(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(path, "prompts/"), ".md")
		role, rest, ok1 := strings.Cut(string(b), "\n## Instructions\n")
		instr, rules, ok2 := strings.Cut(rest, "\n## Rules\n")
		if !ok1 || !ok2 {
			panic(fmt.Sprintf("analyst: %s needs an \"## Instructions\" and an \"## Rules\" section", path))
		}
		parse := func(part, text string) *template.Template {
			return template.Must(template.New(name + " " + part).Option("missingkey=error").Parse(strings.TrimSpace(text)))
		}
		out[name] = promptParts{parse("role", role), parse("instructions", instr), parse("rules", rules)}
	}
	return out
}()

// prompt renders prompts/<name>.md with data (a map of the values its templates name, or nil)
// into a system prompt with the user's memory (mem may be nil for prompts that carry none).
func prompt(name string, mem Mem, data map[string]any) string {
	p, ok := prompts[name]
	if !ok {
		panic("analyst: no prompt prompts/" + name + ".md")
	}
	if data == nil {
		data = map[string]any{}
	}
	render := func(t *template.Template) string {
		var b strings.Builder
		if err := t.Execute(&b, data); err != nil {
			panic(fmt.Sprintf("analyst: prompts/%s.md: %v", name, err))
		}
		return b.String()
	}
	return xmlPrompt(render(p.role), mem, render(p.instructions), render(p.rules))
}
