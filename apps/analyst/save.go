package analyst

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/google/uuid"

	tables "github.com/trellis-go/trellis/apps/analyst/store"
	"github.com/trellis-go/trellis/message"
)

// Report is a saved report (the store's).
type Report = tables.Report

// saveReport stores the approved report with its metadata, chunks it, indexes the chunks for
// retrieval, writes the session to episodic memory and tells the user the report's ID.
func (a *Analyst) saveReport(ctx context.Context, s State) (State, error) {
	user, tenant := who(ctx, s)
	mem, err := a.mem.LoadAll(ctx, user)
	if err != nil {
		return State{}, err
	}
	title, _ := s.ReportJSON["title"].(string)
	if title == "" {
		title = sentence("report_title", map[string]any{"Topic": clip(s.Query, 80)})
	}
	r := Report{ID: uuid.NewString(), UserID: user, SessionID: sessionOf(ctx, s),
		Title: title, Content: s.FinalReport, Format: orDefault(s.ReportFormat, "markdown"), TopicTags: topicTags(s),
		ProjectName: mem.Typed(NSUserProfile, "project", "active"), Structured: s.ReportJSON, CreatedAt: a.now().UTC()}
	n, err := a.StoreReport(ctx, tenant, r, s.ReportDraft)
	if err != nil {
		return State{}, err
	}
	var keyf []string
	for _, d := range s.Discoveries {
		if len(keyf) == 2 {
			break
		}
		if !setOf(s.IgnoredFindings)[d.ID] {
			keyf = append(keyf, clip(d.Headline, 120))
		}
	}
	if err := a.mem.Note(ctx, user, "report approved", sentence("note_report_saved", map[string]any{"ID": r.ID, "Title": clip(title, 80), "Format": r.Format, "Findings": strings.Join(keyf, "; ")})); err != nil {
		return State{}, err
	}
	msg := sentence("report_saved", map[string]any{"Title": title, "ID": r.ID, "Format": r.Format, "Chunks": n})
	path := "/apps/analyst/api/v1/reports/" + r.ID + "/" + r.Format
	if r.Format == "pdf" {
		msg += " " + sentence("report_saved_pdf", map[string]any{"Path": path})
	}
	if r.Format == "docx" {
		msg += " " + sentence("report_saved_docx", map[string]any{"Path": path})
	}
	return State{ReportID: r.ID, CurrentPhase: "end", Next: "end", Messages: []message.Message{message.Assistant(msg)}}, nil
}

func topicTags(s State) []string {
	tags := map[string]bool{}
	if d := domain(); d != nil {
		for _, n := range namedIn(s.Query, append(append([]string(nil), d.Competitors...), d.Projects...)) {
			tags[strings.ToLower(n)] = true
		}
		for _, t := range d.Vocabulary.Themes {
			if len(namedIn(s.Query, t.Words)) > 0 {
				tags[strings.ReplaceAll(strings.ToLower(t.Name), " ", "_")] = true
			}
		}
	}
	for _, c := range s.Contradictions {
		tags["assumption_"+strings.ToLower(c.Assumption)] = true
	}
	out := []string{}
	for t := range tags {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// StoreReport saves r for tenant and indexes its Markdown text (markdown, or r.Content) in
// chunks; it returns the number of chunks.
func (a *Analyst) StoreReport(ctx context.Context, tenant string, r Report, markdown string) (int, error) {
	if markdown == "" {
		markdown = r.Content
	}
	chunks := chunkText(stripMarkdown(markdown), 80)
	meta := map[string]any{"source": "report/" + r.ID, "document_type": "report", "report_id": r.ID, "title": r.Title,
		"date": r.CreatedAt.Format("2006-01-02"), "project": r.ProjectName, "tags": r.TopicTags, "author": r.UserID}
	rows := make([]tables.Chunk, len(chunks))
	for i, c := range chunks {
		rows[i] = tables.Chunk{Content: c, Metadata: maps.Clone(meta)}
		rows[i].Metadata["chunk"] = i
	}
	if err := a.tables.SaveReport(ctx, tenant, r, rows); err != nil {
		return 0, fmt.Errorf("analyst: %w", err)
	}
	for i, c := range chunks {
		if err := a.kb.index(ctx, tenant, fmt.Sprintf("report:%s:%d", r.ID, i), c, maps.Clone(meta)); err != nil {
			return 0, err
		}
	}
	return len(chunks), nil
}

func stripMarkdown(s string) string {
	r := strings.NewReplacer("**", "", "##", "", "# ", "", "_", "", "|", " ", "---", " ", "- ", "", "\n", ". ")
	out := r.Replace(s)
	for strings.Contains(out, ". . ") {
		out = strings.ReplaceAll(out, ". . ", ". ")
	}
	return out
}

// Reports lists the user's reports, newest first (without their content).
func (a *Analyst) Reports(ctx context.Context, tenant, user string) ([]Report, error) {
	return a.tables.Reports(ctx, tenant, user)
}

// GetReport returns one of the user's reports; found is false when the user has none by that ID.
func (a *Analyst) GetReport(ctx context.Context, tenant, user, id string) (r Report, found bool, err error) {
	return a.tables.Report(ctx, tenant, user, id)
}
