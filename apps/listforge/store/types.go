// Package store keeps listforge's domain in app tables (package appdb, SQLite or Postgres):
// organisations and users, items with audited single-field updates, research runs with their
// progress, structured research (one current row per item), evidence bundles and records, chat
// sessions and messages with actions applied at most once. Every row belongs to an
// organisation, which is the server principal's tenant; every query filters by it, and on
// Postgres row-level security enforces it as well.
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Who is the organisation (the principal's tenant) and user a call acts for.
type Who struct {
	Org  string
	User string
}

// Media is a photo (or other file) of an item.
type Media struct {
	Type    string `json:"type"` // "image"
	URL     string `json:"url"`
	Caption string `json:"caption,omitempty"`
}

// Item is the unified item of the specification's Phase 6.
type Item struct {
	ID              string         `json:"id"`
	OrgID           string         `json:"organizationId"`
	Title           string         `json:"title"`
	Description     string         `json:"description"`
	Condition       string         `json:"condition"`
	Attributes      map[string]any `json:"attributes"`
	Media           []Media        `json:"media"`
	DefaultPrice    *float64       `json:"defaultPrice"`
	Currency        string         `json:"currency"`
	LifecycleStatus string         `json:"lifecycleStatus"`
	AIReviewState   string         `json:"aiReviewState"`
	CreatedBy       string         `json:"createdBy"`
	CreatedAt       time.Time      `json:"createdAt"`
	UpdatedAt       time.Time      `json:"updatedAt"`
}

// Lifecycle statuses and AI review states an item may have.
var (
	LifecycleStatuses = []string{"draft", "ready", "listed", "sold", "archived"}
	AIReviewStates    = []string{"none", "pending", "reviewed", "approved", "rejected"}
)

// Audit is one recorded single-field update.
type Audit struct {
	ID        string    `json:"id"`
	ItemID    string    `json:"itemId"`
	Field     string    `json:"field"`
	OldValue  any       `json:"oldValue"`
	NewValue  any       `json:"newValue"`
	Reason    string    `json:"reason"`
	UserID    string    `json:"userId"`
	CreatedAt time.Time `json:"createdAt"`
}

// Step is one node of a research run's history.
type Step struct {
	Node        string     `json:"node"`
	StartedAt   time.Time  `json:"startedAt"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
	Status      string     `json:"status"` // running, success, error
	Error       string     `json:"error,omitempty"`
}

// Research run statuses.
const (
	RunPending = "pending"
	RunRunning = "running"
	RunSuccess = "success"
	RunError   = "error"
)

// ResearchRun is one research job: the server run executing it, its progress and outcome.
type ResearchRun struct {
	ID       string `json:"id"`
	ItemID   string `json:"itemId"`
	Type     string `json:"type"`     // initial_intake, pricing_refresh, manual_request
	Priority string `json:"priority"` // low, normal, high
	Status   string `json:"status"`
	// ThreadID and RunID are the server thread and run executing the graph; Checkpoint is the
	// last checkpoint reference seen ({thread_id, checkpoint_id}), from which it resumes.
	ThreadID    string            `json:"threadId"`
	RunID       string            `json:"runId"`
	Checkpoint  map[string]string `json:"checkpoint,omitempty"`
	CurrentNode string            `json:"currentNode,omitempty"`
	StepCount   int               `json:"stepCount"`
	StepHistory []Step            `json:"stepHistory"`
	// LastSeq is the last event of the run's stream applied to this record.
	LastSeq int64 `json:"-"`
	// Attempts counts the server runs used (a paused job resumes in a new one).
	Attempts    int        `json:"attempts"`
	Error       string     `json:"error,omitempty"`
	Message     string     `json:"message,omitempty"`
	CreatedBy   string     `json:"createdBy"`
	CreatedAt   time.Time  `json:"createdAt"`
	StartedAt   *time.Time `json:"startedAt,omitempty"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
}

// Done reports whether the run has ended.
func (r *ResearchRun) Done() bool { return r.Status == RunSuccess || r.Status == RunError }

// PriceBand, DemandSignal, MissingInfoHint, ProductIdentification and ResearchData are the
// specification's §3.1 types.
type PriceBand struct {
	Label      string  `json:"label"`
	Amount     float64 `json:"amount"`
	Currency   string  `json:"currency"`
	Confidence float64 `json:"confidence"`
	Reasoning  string  `json:"reasoning"`
}

// DemandSignal is one market signal.
type DemandSignal struct {
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Period string  `json:"period,omitempty"`
	Source string  `json:"source"`
}

// MissingInfoHint is information that would improve the research.
type MissingInfoHint struct {
	Field           string `json:"field"`
	Importance      string `json:"importance"` // required, recommended, optional
	Reason          string `json:"reason"`
	SuggestedPrompt string `json:"suggestedPrompt,omitempty"`
}

// ProductIdentification is what the item was identified as.
type ProductIdentification struct {
	Confidence float64        `json:"confidence"`
	Brand      string         `json:"brand,omitempty"`
	Model      string         `json:"model,omitempty"`
	MPN        string         `json:"mpn,omitempty"`
	UPC        string         `json:"upc,omitempty"`
	Category   []string       `json:"category"`
	Attributes map[string]any `json:"attributes"`
	// Source says how: upc_lookup, labels, title, model.
	Source string `json:"source,omitempty"`
}

// ResearchData is the structured research conclusion.
type ResearchData struct {
	ProductID               *ProductIdentification `json:"productId,omitempty"`
	PriceBands              []PriceBand            `json:"priceBands"`
	DemandSignals           []DemandSignal         `json:"demandSignals"`
	MissingInfo             []MissingInfoHint      `json:"missingInfo"`
	CompetitorCount         *int                   `json:"competitorCount,omitempty"`
	RecommendedMarketplaces []string               `json:"recommendedMarketplaces"`
	OverallConfidence       float64                `json:"overallConfidence"`
	Notes                   []string               `json:"notes"`
	// Comparables says how many comparables were considered, kept, priced and dropped, and why.
	Comparables *CompSummary `json:"comparables,omitempty"`
	GeneratedAt string       `json:"generatedAt"`
	Version     string       `json:"version"`
}

// SchemaVersion is the version of ResearchData written now.
const SchemaVersion = "1.0.0"

// Research is one stored research conclusion.
type Research struct {
	ID            string       `json:"id"`
	ItemID        string       `json:"itemId"`
	ResearchRunID string       `json:"researchRunId,omitempty"`
	Data          ResearchData `json:"data"`
	SchemaVersion string       `json:"schemaVersion"`
	IsCurrent     bool         `json:"isCurrent"`
	CreatedAt     time.Time    `json:"createdAt"`
}

// Evidence is the specification's ResearchEvidenceRecord.
type Evidence struct {
	ID             string         `json:"id"`
	Type           string         `json:"type"` // sold_listing, active_listing, product_page, price_guide, ai_analysis
	Source         string         `json:"source"`
	SourceID       string         `json:"sourceId,omitempty"`
	URL            string         `json:"url,omitempty"`
	Title          string         `json:"title"`
	Price          *float64       `json:"price,omitempty"`
	Currency       string         `json:"currency,omitempty"`
	SoldDate       string         `json:"soldDate,omitempty"`
	ListedDate     string         `json:"listedDate,omitempty"`
	Condition      string         `json:"condition,omitempty"`
	ImageURL       string         `json:"imageUrl,omitempty"`
	RelevanceScore float64        `json:"relevanceScore"`
	ExtractedData  map[string]any `json:"extractedData"`
	FetchedAt      string         `json:"fetchedAt"`
}

// Bundle is the evidence a research run gathered.
type Bundle struct {
	ID            string     `json:"id"`
	ItemID        string     `json:"itemId"`
	ResearchRunID string     `json:"researchRunId,omitempty"`
	Count         int        `json:"count"`
	CreatedAt     time.Time  `json:"createdAt"`
	Records       []Evidence `json:"records"`
}

// Session is a chat session about an item, owned by its user.
type Session struct {
	ID            string     `json:"id"`
	ItemID        string     `json:"itemId"`
	UserID        string     `json:"userId"`
	OrgID         string     `json:"organizationId"`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
	LastMessageAt *time.Time `json:"lastMessageAt,omitempty"`
}

// Action is something the assistant proposes; it is applied only when the user applies it.
type Action struct {
	Type    string         `json:"type"` // update_field, start_research, suggest_price
	Payload map[string]any `json:"payload"`
	Applied bool           `json:"applied"`
}

// ToolCall is a tool the assistant used for a message.
type ToolCall struct {
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args"`
	Result any            `json:"result,omitempty"`
}

// Message is one chat message.
type Message struct {
	ID        string     `json:"id"`
	SessionID string     `json:"sessionId"`
	Role      string     `json:"role"` // user, assistant, system
	Content   string     `json:"content"`
	Actions   []Action   `json:"actions"`
	ToolCalls []ToolCall `json:"toolCalls"`
	CreatedAt time.Time  `json:"createdAt"`
}

// Page is a page of a list.
type Page[T any] struct {
	Items []T `json:"items"`
	Total int `json:"total"`
	Page  int `json:"page"`
	Limit int `json:"limit"`
}

// ErrNotFound is returned for a record that does not exist in the caller's organisation.
var ErrNotFound = errors.New("listforge: not found in your organisation")

// ErrAlreadyApplied is returned when an action was applied before.
var ErrAlreadyApplied = errors.New("listforge: this action was already applied")

// FieldError is a bad value for a field: the API answers it 400.
type FieldError struct {
	Field string
	Hint  string
}

func (e *FieldError) Error() string { return fmt.Sprintf("listforge: field %s: %s", e.Field, e.Hint) }

// CompSummary is what relevance scoring did with the comparables found: how many were
// considered, kept as evidence (relevance ≥ 0.5), used for the price (≥ 0.7, the item's own
// variant), trimmed as price outliers, and dropped, by reason ("storage differs: 128gb vs
// 256gb" → 7).
type CompSummary struct {
	Considered int            `json:"considered"`
	Kept       int            `json:"kept"`
	Priced     int            `json:"priced"`
	Outliers   int            `json:"outliers"`
	Dropped    int            `json:"dropped"`
	Reasons    map[string]int `json:"reasons"`
	// ModelScored is how many borderline comparables a configured model scored.
	ModelScored int `json:"modelScored"`
}

// The API's arrays are arrays, never null: the types with list fields fill them in as they are
// encoded.

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// MarshalJSON encodes the research with every list as an array.
func (d ResearchData) MarshalJSON() ([]byte, error) {
	type plain ResearchData
	d.PriceBands, d.DemandSignals, d.MissingInfo = orEmpty(d.PriceBands), orEmpty(d.DemandSignals), orEmpty(d.MissingInfo)
	d.RecommendedMarketplaces, d.Notes = orEmpty(d.RecommendedMarketplaces), orEmpty(d.Notes)
	return json.Marshal(plain(d))
}

// MarshalJSON encodes the identification with its category as an array and its attributes
// as an object.
func (p ProductIdentification) MarshalJSON() ([]byte, error) {
	type plain ProductIdentification
	p.Category = orEmpty(p.Category)
	if p.Attributes == nil {
		p.Attributes = map[string]any{}
	}
	return json.Marshal(plain(p))
}

// MarshalJSON encodes the bundle with its records as an array.
func (b Bundle) MarshalJSON() ([]byte, error) {
	type plain Bundle
	b.Records = orEmpty(b.Records)
	return json.Marshal(plain(b))
}

// MarshalJSON encodes the message with its actions and tool calls as arrays.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	m.Actions, m.ToolCalls = orEmpty(m.Actions), orEmpty(m.ToolCalls)
	return json.Marshal(plain(m))
}

// MarshalJSON encodes the job with its step history as an array.
func (r ResearchRun) MarshalJSON() ([]byte, error) {
	type plain ResearchRun
	r.StepHistory = orEmpty(r.StepHistory)
	return json.Marshal(plain(r))
}

// MarshalJSON encodes the item with its media as an array and attributes as an object.
func (it Item) MarshalJSON() ([]byte, error) {
	type plain Item
	it.Media = orEmpty(it.Media)
	if it.Attributes == nil {
		it.Attributes = map[string]any{}
	}
	return json.Marshal(plain(it))
}

// MarshalJSON encodes the evidence with its extracted data as an object.
func (e Evidence) MarshalJSON() ([]byte, error) {
	type plain Evidence
	if e.ExtractedData == nil {
		e.ExtractedData = map[string]any{}
	}
	return json.Marshal(plain(e))
}
