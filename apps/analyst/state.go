package analyst

import (
	"fmt"

	"github.com/trellis-go/trellis/message"
)

// State is the main graph's state (the specification's AgentState).
type State struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
	// UserID and SessionID name the session; the server's authenticated user and the thread win
	// over them, except in dev mode, where user_id picks whose memory to use.
	UserID    string `json:"user_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Profile, on input, tells the analyst about the user (name, role, seniority, style,
	// project, frameworks, citation, verbosity, format); it is written to memory.
	Profile map[string]string `json:"profile,omitempty"`
	// Query is the user's request; the last user message when not given.
	Query string `json:"query,omitempty"`

	RetrievedContext []Chunk           `json:"retrieved_context,omitempty"`
	MemoryContext    map[string]string `json:"memory_context,omitempty"`
	Greeted          bool              `json:"greeted,omitempty"`

	ResearchPlan *Plan  `json:"research_plan,omitempty"`
	PlanFeedback string `json:"plan_feedback,omitempty"`
	PlanEdited   *Plan  `json:"plan_edited,omitempty"`
	PlanApproved bool   `json:"plan_approved,omitempty"`
	PlanVersion  int    `json:"plan_version,omitempty"`

	// ResearchTasks are the tasks the next research round dispatches (empty: the plan's).
	ResearchTasks     []Task             `json:"research_tasks,omitempty"`
	ResearchFindings  map[string]Finding `json:"research_findings,omitempty"`
	SupervisorSummary string             `json:"supervisor_summary,omitempty"`
	Discoveries       []Discovery        `json:"discoveries,omitempty"`
	Contradictions    []Contradiction    `json:"contradictions,omitempty"`
	FollowUpQuestions []string           `json:"follow_up_questions,omitempty"`
	IgnoredFindings   []string           `json:"ignored_findings,omitempty"`
	ResearchRounds    int                `json:"research_rounds,omitempty"`

	ReportSections map[string]string `json:"report_sections,omitempty"`
	ReportDraft    string            `json:"report_draft,omitempty"`
	ReportJSON     map[string]any    `json:"report_json,omitempty"`
	FinalReport    string            `json:"final_report,omitempty"`
	ReportFormat   string            `json:"report_format,omitempty"`
	ReportID       string            `json:"report_id,omitempty"`
	LastAnswer     string            `json:"last_answer,omitempty"`

	CurrentPhase     string `json:"current_phase,omitempty"` // init, planning, research, report, final, end
	HITLResponseType string `json:"hitl_response_type,omitempty"`
	// GateError says why the last answer to a gate could not be applied; the gate asks again.
	GateError string `json:"gate_error,omitempty"`
	// Next is where the last gate sends the run (internal routing).
	Next string `json:"next,omitempty"`
}

// Plan is the planner's structured research plan.
type Plan struct {
	Topic        string        `json:"topic"`
	SubQuestions []SubQuestion `json:"sub_questions"`
	OutputFormat string        `json:"output_format"`
	Frameworks   []string      `json:"frameworks"`
	Rationale    string        `json:"rationale"`
}

// SubQuestion is one question of a plan and where to look for its answer.
type SubQuestion struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Sources  []string `json:"sources"` // company_db, web
	// FromUser marks a question the user wrote (an edited plan, feedback); the supervisor may
	// ask the user what a vague one of these should answer, never about its own.
	FromUser bool `json:"from_user,omitempty"`
}

// Task is a sub-question given to a task agent.
type Task struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Sources  []string `json:"sources"`
	Context  []Chunk  `json:"context,omitempty"`
	Attempt  int      `json:"attempt"`
	Critique string   `json:"critique,omitempty"`
	// Guidance is what the research supervisor found in the user's memory for the task.
	Guidance string `json:"guidance,omitempty"`
	// FromUser marks a question the user wrote.
	FromUser bool `json:"from_user,omitempty"`
}

// Source is where a finding's evidence comes from.
type Source struct {
	Kind  string  `json:"kind"` // company_db, report, web
	Title string  `json:"title"`
	Ref   string  `json:"ref"` // the document's source or the page's URL
	Date  string  `json:"date,omitempty"`
	Score float64 `json:"score"`
	Quote string  `json:"quote,omitempty"`
}

// Finding is a task agent's answer to its sub-question.
type Finding struct {
	TaskID     string   `json:"task_id"`
	Question   string   `json:"question"`
	Answer     string   `json:"answer"`
	Sources    []Source `json:"sources"`
	Confidence float64  `json:"confidence"`
	KeyQuotes  []string `json:"key_quotes"`
	Attempts   int      `json:"attempts"`
	Approved   bool     `json:"approved"`
	Critiques  []string `json:"critiques,omitempty"`
	Gap        bool     `json:"gap,omitempty"`   // no source answers it
	Round      int      `json:"round,omitempty"` // research round that produced it
}

// Discovery is a top-level discovery shown at the discovery gate. Its ID (D1, D2, ...) is unique
// within the session and kept across research rounds and resumes: a discovery of the same
// finding (TaskID) or of the same contradiction (Assumption and Ref) keeps the ID it first got.
type Discovery struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"` // finding, gap, contradiction
	Headline   string `json:"headline"`
	TaskID     string `json:"task_id,omitempty"`    // the finding's task
	Assumption string `json:"assumption,omitempty"` // the contradicted assumption
	Ref        string `json:"ref,omitempty"`        // the contradicting source
}

// key is what identifies the discovery across rounds.
func (d Discovery) key() string {
	if d.TaskID != "" {
		return "task:" + d.TaskID
	}
	return "contradiction:" + d.Assumption + "|" + d.Ref
}

// numberDiscoveries gives each of cur the ID its key had in prev, and the next free number to
// a new one.
func numberDiscoveries(prev, cur []Discovery) []Discovery {
	ids := map[string]string{}
	top := 0
	for _, d := range prev {
		ids[d.key()] = d.ID
		var n int
		if _, err := fmt.Sscanf(d.ID, "D%d", &n); err == nil && n > top {
			top = n
		}
	}
	out := make([]Discovery, len(cur))
	for i, d := range cur {
		if id, ok := ids[d.key()]; ok {
			d.ID = id
		} else {
			top++
			d.ID = fmt.Sprintf("D%d", top)
			ids[d.key()] = d.ID
		}
		out[i] = d
	}
	return out
}

// ignoredKeys are the keys of the discoveries the user chose to ignore.
func ignoredKeys(ds []Discovery, ignored []string) map[string]bool {
	ids := setOf(ignored)
	out := map[string]bool{}
	for _, d := range ds {
		if ids[d.ID] {
			out[d.key()] = true
		}
	}
	return out
}

func findingIgnored(keys map[string]bool, f Finding) bool { return keys["task:"+f.TaskID] }

func contradictionIgnored(keys map[string]bool, c Contradiction) bool {
	return keys[Discovery{Assumption: c.Assumption, Ref: c.Source.Ref}.key()]
}

// Contradiction is an external source that contradicts one of the firm's planning assumptions.
type Contradiction struct {
	Assumption string `json:"assumption"`
	Statement  string `json:"statement"`
	Source     Source `json:"source"`
	Evidence   string `json:"evidence"`
}
