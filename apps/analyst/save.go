package analyst

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/message"
)

// Report is a saved report.
type Report struct {
	ID          string         `json:"id"`
	UserID      string         `json:"user_id"`
	SessionID   string         `json:"session_id"`
	Title       string         `json:"title"`
	Content     string         `json:"content"`
	Format      string         `json:"format"`
	TopicTags   []string       `json:"topic_tags"`
	ProjectName string         `json:"project_name"`
	Structured  map[string]any `json:"structured,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	Chunks      int            `json:"chunks,omitempty"`
}

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
		title = "Strategic analysis: " + clip(s.Query, 80)
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
	if err := a.mem.Note(ctx, user, "report approved", fmt.Sprintf("approved and saved report %s %q (%s); key findings: %s", r.ID, clip(title, 80), r.Format, strings.Join(keyf, "; "))); err != nil {
		return State{}, err
	}
	msg := fmt.Sprintf("Saved your report **%s** (reference ID `%s`, %s, %d chunks indexed for future research).", title, r.ID, r.Format, n)
	if r.Format == "pdf" {
		msg += " Download it as a PDF: `GET /apps/analyst/api/v1/reports/" + r.ID + "/pdf`."
	}
	if r.Format == "docx" {
		msg += " Download it as a Word document: `GET /apps/analyst/api/v1/reports/" + r.ID + "/docx`."
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
	if r.Structured == nil {
		r.Structured = map[string]any{}
	}
	chunks := chunkText(stripMarkdown(markdown), 80)
	date := r.CreatedAt.Format("2006-01-02")
	err := a.db.Tx(ctx, appdb.Who{Tenant: tenant, User: r.UserID}, func(tx *appdb.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO reports (id, tenant_id, user_id, session_id, title, content, format, topic_tags, project_name, structured, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, tenant, r.UserID, r.SessionID, r.Title, r.Content, r.Format,
			appdb.JSONValue(r.TopicTags), r.ProjectName, appdb.JSONValue(r.Structured), r.CreatedAt); err != nil {
			return err
		}
		for i, c := range chunks {
			meta := map[string]any{"source": "report/" + r.ID, "document_type": "report", "report_id": r.ID, "title": r.Title,
				"date": date, "project": r.ProjectName, "tags": r.TopicTags, "author": r.UserID, "chunk": i}
			if _, err := tx.Exec(ctx, `INSERT INTO report_chunks (id, tenant_id, report_id, author_id, content, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "analyst:report/%s/%d", r.ID, i)).String(), tenant, r.ID, r.UserID, c, appdb.JSONValue(meta), r.CreatedAt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("analyst: saving report %s: %w", r.ID, err)
	}
	for i, c := range chunks {
		meta := map[string]any{"source": "report/" + r.ID, "document_type": "report", "report_id": r.ID, "title": r.Title,
			"date": date, "project": r.ProjectName, "tags": r.TopicTags, "author": r.UserID}
		if err := a.kb.index(ctx, tenant, fmt.Sprintf("report:%s:%d", r.ID, i), c, meta); err != nil {
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
	out := []Report{}
	err := a.db.Tx(ctx, appdb.Who{Tenant: tenant, User: user}, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, user_id, session_id, title, format, topic_tags, project_name, created_at FROM reports
			WHERE tenant_id = ? AND user_id = ? ORDER BY created_at DESC`, tenant, user)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r Report
			var t appdb.Time
			if err := rows.Scan(&r.ID, &r.UserID, &r.SessionID, &r.Title, &r.Format, appdb.JSON(&r.TopicTags), &r.ProjectName, &t); err != nil {
				return err
			}
			r.CreatedAt = t.Time
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// GetReport returns one of the user's reports; found is false when the user has none by that ID.
func (a *Analyst) GetReport(ctx context.Context, tenant, user, id string) (r Report, found bool, err error) {
	err = a.db.Tx(ctx, appdb.Who{Tenant: tenant, User: user}, func(tx *appdb.Tx) error {
		var t appdb.Time
		err := tx.QueryRow(ctx, `SELECT id, user_id, session_id, title, content, format, topic_tags, project_name, structured, created_at FROM reports
			WHERE tenant_id = ? AND user_id = ? AND id = ?`, tenant, user, id).Scan(&r.ID, &r.UserID, &r.SessionID, &r.Title, &r.Content, &r.Format,
			appdb.JSON(&r.TopicTags), &r.ProjectName, appdb.JSON(&r.Structured), &t)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		r.CreatedAt, found = t.Time, true
		return tx.QueryRow(ctx, `SELECT COUNT(*) FROM report_chunks WHERE tenant_id = ? AND report_id = ?`, tenant, id).Scan(&r.Chunks)
	})
	return r, found, err
}
