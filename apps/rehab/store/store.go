package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/appdb"
)

// Portfolio statuses; an archived item is a soft-deleted one.
const (
	StatusInterested = "interessado"
	StatusAnalysing  = "em_analise"
	StatusOffer      = "proposta"
	StatusArchived   = "archived"
)

// ProfileSections are the five sections of a profile, in the order they are shown.
var ProfileSections = []string{"fiscal", "budget", "renovation", "preferences", "goals"}

// ErrNotFound is returned for a row that does not exist or is not the caller's.
var ErrNotFound = errors.New("rehab: not found")

// Who is the tenant and user a call acts for.
type Who = appdb.Who

// Memory is what is carried across sessions beyond the last summary.
type Memory struct {
	Decisions     []string   `json:"decisions,omitempty"`
	Rejected      []Rejected `json:"rejected,omitempty"`
	OpenQuestions []string   `json:"open_questions,omitempty"`
	// OpenTodos are the tasks left pending (manage_todos) in any conversation: a new
	// conversation starts with them in its todo list.
	OpenTodos []OpenTodo `json:"open_todos,omitempty"`
}

// OpenTodo is a pending task carried across conversations.
type OpenTodo struct {
	ID             string `json:"id"`
	Task           string `json:"task"`
	ConversationID string `json:"conversation_id,omitempty"` // where it was added
}

// Rejected is a property the user turned down, and why.
type Rejected struct {
	Property string `json:"property"`
	Reason   string `json:"reason"`
}

// Profile is a user's profile row.
type Profile struct {
	Name, Location string
	// Sections holds the five sections' data (nil when the section was never filled).
	Sections map[string]map[string]any
	// Summaries holds each section's one-line summary.
	Summaries map[string]string
	Summary   string
	Memory    Memory
	UpdatedAt time.Time
	Exists    bool
}

// Property is a scraped listing.
type Property struct {
	ID          string         `json:"id"`
	IdealistaID string         `json:"idealista_id"`
	URL         string         `json:"url"`
	Title       string         `json:"title"`
	Typology    string         `json:"typology"`
	Price       float64        `json:"price"`
	AreaM2      float64        `json:"area_m2"`
	Location    string         `json:"location"`
	ImageURLs   []string       `json:"image_urls"`
	Raw         map[string]any `json:"raw_scraped_data,omitempty"`
}

// PortfolioItem links a user to a property.
type PortfolioItem struct {
	ID           string    `json:"id"`
	PropertyID   string    `json:"property_id"`
	Nickname     string    `json:"nickname"`
	Status       string    `json:"status"`
	IsActive     bool      `json:"is_active"`
	IndexSummary string    `json:"index_summary"`
	Notes        string    `json:"notes,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	Property     Property  `json:"property"`
	// ChatSummary is the latest analysis's chat summary ("" when never analysed).
	ChatSummary string `json:"chat_summary,omitempty"`
	// DetailSummary is the latest analysis's detail summary.
	DetailSummary string `json:"detail_summary,omitempty"`
}

// RoomFeature is the cached result of classifying one room's photos.
type RoomFeature struct {
	PropertyID string   `json:"property_id"`
	RoomType   string   `json:"room_type"`
	RoomIndex  int      `json:"room_index"`
	AreaM2     float64  `json:"area_m2"`
	Condition  string   `json:"condition"`
	Features   []string `json:"features"`
	Photo      string   `json:"photo,omitempty"`
}

// Analysis is one analysis of a property.
type Analysis struct {
	ID            string          `json:"id"`
	PropertyID    string          `json:"property_id"`
	Type          string          `json:"analysis_type"`
	Result        json.RawMessage `json:"result_data"`
	ChatSummary   string          `json:"chat_summary"`
	DetailSummary string          `json:"detail_summary"`
	Status        string          `json:"status"`
	CreatedAt     time.Time       `json:"created_at"`
}

// Conversation is a chat session.
type Conversation struct {
	ID              string     `json:"id"`
	StartedAt       time.Time  `json:"started_at"`
	LastMessageAt   time.Time  `json:"last_message_at"`
	EndedAt         *time.Time `json:"ended_at,omitempty"`
	Summary         string     `json:"summary,omitempty"`
	MessageCount    int        `json:"message_count"`
	SummarizedCount int        `json:"summarized_count"`
}

// Message is one stored chat message.
type Message struct {
	ID             string          `json:"id"`
	ConversationID string          `json:"conversation_id"`
	Role           string          `json:"role"`
	Content        string          `json:"content"`
	ToolCalls      json.RawMessage `json:"tool_calls,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
}

// Action is one entry of the audit trail.
type Action struct {
	ID             string    `json:"id"`
	ConversationID string    `json:"conversation_id,omitempty"`
	ActionType     string    `json:"action_type"`
	EntityType     string    `json:"entity_type"`
	EntityID       string    `json:"entity_id,omitempty"`
	Field          string    `json:"field_changed,omitempty"`
	Old            string    `json:"old_value,omitempty"`
	New            string    `json:"new_value,omitempty"`
	Trigger        string    `json:"trigger_message,omitempty"`
	Confidence     float64   `json:"confidence"`
	CreatedAt      time.Time `json:"created_at"`
}

// Audit says why a mutation happens: the conversation, the user's message that triggered it
// and how sure the agent was. Every mutation writes one action_log row per changed field.
type Audit struct {
	ConversationID string
	Trigger        string
	Confidence     float64
}

// Store is the data layer over an app database.
type Store struct {
	DB *appdb.DB
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// New migrates db and returns the store.
func New(ctx context.Context, db *appdb.DB) (*Store, error) {
	if err := db.Migrate(ctx, Migrations); err != nil {
		return nil, fmt.Errorf("rehab: migrating: %w", err)
	}
	return &Store{DB: db}, nil
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// NewID returns a time-ordered ID.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

func (s *Store) tx(ctx context.Context, who Who, fn func(tx *appdb.Tx) error) error {
	if who.Tenant == "" || who.User == "" {
		return errors.New("rehab: a tenant and a user are required")
	}
	return s.DB.Tx(ctx, who, fn)
}

func logAction(ctx context.Context, tx *appdb.Tx, now time.Time, a Action, au Audit) error {
	conf := au.Confidence
	if conf == 0 {
		conf = 1
	}
	_, err := tx.Exec(ctx, `INSERT INTO action_log (tenant_id, user_id, id, conversation_id, action_type, entity_type, entity_id,
		field_changed, old_value, new_value, trigger_message, confidence, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		tx.Tenant(), tx.User(), NewID(), au.ConversationID, a.ActionType, a.EntityType, a.EntityID, a.Field, a.Old, a.New,
		au.Trigger, conf, now)
	return err
}

func jsonText(v any) string {
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Profile returns the user's profile; a user with none gets an empty one (Exists false).
func (s *Store) Profile(ctx context.Context, who Who) (*Profile, error) {
	var p *Profile
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		var err error
		p, err = readProfile(ctx, tx)
		return err
	})
	return p, err
}

func readProfile(ctx context.Context, tx *appdb.Tx) (*Profile, error) {
	return readProfileLock(ctx, tx, false)
}

// readProfileLock reads the profile, locking its row on Postgres when lock is set (SQLite
// transactions that write are serialised already), so read-modify-write updates do not lose
// each other's changes.
func readProfileLock(ctx context.Context, tx *appdb.Tx, lock bool) (*Profile, error) {
	p := &Profile{Sections: map[string]map[string]any{}, Summaries: map[string]string{}}
	secs := make([]map[string]any, 5)
	sums := make([]string, 5)
	var upd appdb.Time
	err := tx.QueryRow(ctx, `SELECT name, location, fiscal, budget, renovation, preferences, goals,
		fiscal_summary, budget_summary, renovation_summary, preferences_summary, goals_summary, profile_summary, memory, updated_at
		FROM user_profiles WHERE tenant_id = ? AND user_id = ?`+forUpdate(tx, lock), tx.Tenant(), tx.User()).Scan(&p.Name, &p.Location,
		appdb.JSON(&secs[0]), appdb.JSON(&secs[1]), appdb.JSON(&secs[2]), appdb.JSON(&secs[3]), appdb.JSON(&secs[4]),
		&sums[0], &sums[1], &sums[2], &sums[3], &sums[4], &p.Summary, appdb.JSON(&p.Memory), &upd)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	p.Exists, p.UpdatedAt = true, upd.Time
	for i, name := range ProfileSections {
		if secs[i] != nil {
			p.Sections[name] = secs[i]
		}
		if sums[i] != "" {
			p.Summaries[name] = sums[i]
		}
	}
	return p, nil
}

// ProfileUpdate changes a profile: a section's data (merged key by key into what is there),
// its summary, the master summary, the name and location, the memory.
type ProfileUpdate struct {
	Name, Location *string
	Section        string
	Data           map[string]any
	// Summarize computes the section summary and the master summary from the profile after
	// the change; nil keeps them.
	Summarize func(p *Profile) (section, master string)
	// EditMemory changes the memory inside the transaction (so concurrent edits do not lose
	// each other's entries); nil keeps it.
	EditMemory func(m *Memory)
}

// UpdateProfile applies u, creating the profile when needed, and logs one action per changed
// field. It returns the profile after the change.
func (s *Store) UpdateProfile(ctx context.Context, who Who, u ProfileUpdate, au Audit) (*Profile, error) {
	if u.Section != "" && !validSection(u.Section) {
		return nil, fmt.Errorf("rehab: unknown profile section %q; use one of %s", u.Section, strings.Join(ProfileSections, ", "))
	}
	var out *Profile
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		p, err := readProfileLock(ctx, tx, true)
		if err != nil {
			return err
		}
		now := s.now()
		if !p.Exists {
			if _, err := tx.Exec(ctx, `INSERT INTO user_profiles (tenant_id, user_id, created_at, updated_at) VALUES (?,?,?,?)
				ON CONFLICT (tenant_id, user_id) DO NOTHING`, tx.Tenant(), tx.User(), now, now); err != nil {
				return err
			}
			// Another transaction may have created it meanwhile: read it again, locked.
			if p, err = readProfileLock(ctx, tx, true); err != nil {
				return err
			}
			p.Exists = true
		}
		if u.Name != nil && *u.Name != p.Name {
			if err := logAction(ctx, tx, now, Action{ActionType: "update_profile", EntityType: "user_profile", Field: "name", Old: p.Name, New: *u.Name}, au); err != nil {
				return err
			}
			p.Name = *u.Name
		}
		if u.Location != nil && *u.Location != p.Location {
			if err := logAction(ctx, tx, now, Action{ActionType: "update_profile", EntityType: "user_profile", Field: "location", Old: p.Location, New: *u.Location}, au); err != nil {
				return err
			}
			p.Location = *u.Location
		}
		if u.Section != "" {
			sec := p.Sections[u.Section]
			if sec == nil {
				sec = map[string]any{}
			}
			for k, v := range u.Data {
				old, had := sec[k]
				if had && jsonText(old) == jsonText(v) {
					continue
				}
				oldText := ""
				if had {
					oldText = jsonText(old)
				}
				if err := logAction(ctx, tx, now, Action{ActionType: "update_profile", EntityType: "user_profile",
					Field: u.Section + "." + k, Old: oldText, New: jsonText(v)}, au); err != nil {
					return err
				}
				sec[k] = v
			}
			p.Sections[u.Section] = sec
		}
		if u.EditMemory != nil {
			old := jsonText(p.Memory)
			u.EditMemory(&p.Memory)
			if after := jsonText(p.Memory); after != old {
				if err := logAction(ctx, tx, now, Action{ActionType: "update_memory", EntityType: "user_profile", Field: "memory",
					Old: old, New: after}, au); err != nil {
					return err
				}
			}
		}
		if u.Summarize != nil {
			sec, master := u.Summarize(p)
			if u.Section != "" {
				p.Summaries[u.Section] = sec
			}
			p.Summary = master
		}
		p.UpdatedAt = now
		args := []any{p.Name, p.Location}
		for _, name := range ProfileSections {
			if d, ok := p.Sections[name]; ok {
				args = append(args, appdb.JSONValue(d))
			} else {
				args = append(args, nil)
			}
		}
		for _, name := range ProfileSections {
			args = append(args, p.Summaries[name])
		}
		args = append(args, p.Summary, appdb.JSONValue(p.Memory), now, tx.Tenant(), tx.User())
		_, err = tx.Exec(ctx, `UPDATE user_profiles SET name = ?, location = ?, fiscal = ?, budget = ?, renovation = ?, preferences = ?, goals = ?,
			fiscal_summary = ?, budget_summary = ?, renovation_summary = ?, preferences_summary = ?, goals_summary = ?,
			profile_summary = ?, memory = ?, updated_at = ? WHERE tenant_id = ? AND user_id = ?`, args...)
		out = p
		return err
	})
	return out, err
}

func forUpdate(tx *appdb.Tx, lock bool) string {
	if lock && tx.Dialect() == appdb.Postgres {
		return " FOR UPDATE"
	}
	return ""
}

func validSection(s string) bool {
	for _, n := range ProfileSections {
		if n == s {
			return true
		}
	}
	return false
}

const itemColumns = `pi.id, pi.property_id, pi.nickname, pi.status, pi.is_active, pi.index_summary, pi.notes, pi.created_at,
	p.id, p.idealista_id, p.url, p.title, p.typology, p.price, p.area_m2, p.location, p.image_urls,
	COALESCE((SELECT a.chat_summary FROM analyses a WHERE a.tenant_id = pi.tenant_id AND a.user_id = pi.user_id
		AND a.property_id = pi.property_id AND a.analysis_type = 'renovation' ORDER BY a.created_at DESC LIMIT 1), ''),
	COALESCE((SELECT a.detail_summary FROM analyses a WHERE a.tenant_id = pi.tenant_id AND a.user_id = pi.user_id
		AND a.property_id = pi.property_id AND a.analysis_type = 'renovation' ORDER BY a.created_at DESC LIMIT 1), '')`

const itemJoin = ` FROM portfolio_items pi JOIN properties p ON p.tenant_id = pi.tenant_id AND p.user_id = pi.user_id AND p.id = pi.property_id
	WHERE pi.tenant_id = ? AND pi.user_id = ?`

func scanItems(rows *sql.Rows) ([]PortfolioItem, error) {
	defer rows.Close()
	var out []PortfolioItem
	for rows.Next() {
		var it PortfolioItem
		var active int
		var created appdb.Time
		if err := rows.Scan(&it.ID, &it.PropertyID, &it.Nickname, &it.Status, &active, &it.IndexSummary, &it.Notes, &created,
			&it.Property.ID, &it.Property.IdealistaID, &it.Property.URL, &it.Property.Title, &it.Property.Typology,
			&it.Property.Price, &it.Property.AreaM2, &it.Property.Location, appdb.JSON(&it.Property.ImageURLs),
			&it.ChatSummary, &it.DetailSummary); err != nil {
			return nil, err
		}
		it.IsActive, it.CreatedAt = active != 0, created.Time
		out = append(out, it)
	}
	return out, rows.Err()
}

// Portfolio lists the user's portfolio items, archived ones only when archived is true, oldest
// first.
func (s *Store) Portfolio(ctx context.Context, who Who, archived bool) ([]PortfolioItem, error) {
	var out []PortfolioItem
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		var err error
		out, err = portfolio(ctx, tx, archived)
		return err
	})
	return out, err
}

func portfolio(ctx context.Context, tx *appdb.Tx, archived bool) ([]PortfolioItem, error) {
	q := `SELECT ` + itemColumns + itemJoin
	if !archived {
		q += ` AND pi.status <> 'archived'`
	}
	rows, err := tx.Query(ctx, q+` ORDER BY pi.created_at, pi.id`, tx.Tenant(), tx.User())
	if err != nil {
		return nil, err
	}
	return scanItems(rows)
}

// Item returns one portfolio item by its ID or its property's ID (archived included).
func (s *Store) Item(ctx context.Context, who Who, id string) (*PortfolioItem, error) {
	var out *PortfolioItem
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		var err error
		out, err = item(ctx, tx, id)
		return err
	})
	return out, err
}

func item(ctx context.Context, tx *appdb.Tx, id string) (*PortfolioItem, error) {
	rows, err := tx.Query(ctx, `SELECT `+itemColumns+itemJoin+` AND (pi.id = ? OR pi.property_id = ? OR p.idealista_id = ?)
		ORDER BY pi.status = 'archived', pi.created_at DESC`, tx.Tenant(), tx.User(), id, id, id)
	if err != nil {
		return nil, err
	}
	items, err := scanItems(rows)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: no portfolio item or property %q for this user", ErrNotFound, id)
	}
	return &items[0], nil
}

// SaveProperty inserts or updates a scraped property (by its Idealista ID) and makes sure the
// user's portfolio holds it (an archived item is restored). It returns the portfolio item.
func (s *Store) SaveProperty(ctx context.Context, who Who, p Property, nickname string, au Audit) (*PortfolioItem, error) {
	var out *PortfolioItem
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		var err error
		out, err = saveProperty(ctx, tx, s.now(), p, nickname, au)
		return err
	})
	return out, err
}

func saveProperty(ctx context.Context, tx *appdb.Tx, now time.Time, p Property, nickname string, au Audit) (*PortfolioItem, error) {
	if p.IdealistaID == "" {
		return nil, errors.New("rehab: a property needs its Idealista ID")
	}
	// The property is found through the portfolio (the only way a user sees properties).
	existing, err := item(ctx, tx, p.IdealistaID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if existing == nil {
		if p.ID == "" {
			p.ID = NewID()
		}
		if _, err := tx.Exec(ctx, `INSERT INTO properties (tenant_id, user_id, id, idealista_id, url, title, typology, price, area_m2,
			location, image_urls, raw_scraped_data, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			tx.Tenant(), tx.User(), p.ID, p.IdealistaID, p.URL, p.Title, p.Typology, p.Price, p.AreaM2, p.Location,
			appdb.JSONValue(p.ImageURLs), appdb.JSONValue(p.Raw), now); err != nil {
			return nil, err
		}
		id := NewID()
		if _, err := tx.Exec(ctx, `INSERT INTO portfolio_items (tenant_id, user_id, id, property_id, nickname, status, is_active,
			index_summary, created_at, updated_at) VALUES (?,?,?,?,?,?,0,'',?,?)`,
			tx.Tenant(), tx.User(), id, p.ID, nickname, StatusInterested, now, now); err != nil {
			return nil, err
		}
		if err := logAction(ctx, tx, now, Action{ActionType: "save_to_portfolio", EntityType: "portfolio_item", EntityID: id,
			Field: "status", New: StatusInterested}, au); err != nil {
			return nil, err
		}
		return item(ctx, tx, id)
	}
	p.ID = existing.PropertyID
	if _, err := tx.Exec(ctx, `UPDATE properties SET url = ?, title = ?, typology = ?, price = ?, area_m2 = ?, location = ?,
		image_urls = ?, raw_scraped_data = ? WHERE tenant_id = ? AND user_id = ? AND id = ?`,
		p.URL, p.Title, p.Typology, p.Price, p.AreaM2, p.Location, appdb.JSONValue(p.ImageURLs), appdb.JSONValue(p.Raw),
		tx.Tenant(), tx.User(), p.ID); err != nil {
		return nil, err
	}
	if existing.Property.Price != p.Price {
		if err := logAction(ctx, tx, now, Action{ActionType: "update_property", EntityType: "property", EntityID: p.ID,
			Field: "price", Old: fmt.Sprint(existing.Property.Price), New: fmt.Sprint(p.Price)}, au); err != nil {
			return nil, err
		}
	}
	if existing.Status == StatusArchived {
		if err := setStatus(ctx, tx, now, existing, StatusInterested, au); err != nil {
			return nil, err
		}
	}
	if nickname != "" && nickname != existing.Nickname {
		if _, err := tx.Exec(ctx, `UPDATE portfolio_items SET nickname = ?, updated_at = ? WHERE tenant_id = ? AND user_id = ? AND id = ?`,
			nickname, now, tx.Tenant(), tx.User(), existing.ID); err != nil {
			return nil, err
		}
		if err := logAction(ctx, tx, now, Action{ActionType: "update_portfolio", EntityType: "portfolio_item", EntityID: existing.ID,
			Field: "nickname", Old: existing.Nickname, New: nickname}, au); err != nil {
			return nil, err
		}
	}
	return item(ctx, tx, existing.ID)
}

func setStatus(ctx context.Context, tx *appdb.Tx, now time.Time, it *PortfolioItem, status string, au Audit) error {
	active := it.IsActive && status != StatusArchived
	if _, err := tx.Exec(ctx, `UPDATE portfolio_items SET status = ?, is_active = ?, updated_at = ? WHERE tenant_id = ? AND user_id = ? AND id = ?`,
		status, boolInt(active), now, tx.Tenant(), tx.User(), it.ID); err != nil {
		return err
	}
	kind := "update_portfolio"
	if status == StatusArchived {
		kind = "remove_from_portfolio"
	}
	return logAction(ctx, tx, now, Action{ActionType: kind, EntityType: "portfolio_item", EntityID: it.ID, Field: "status", Old: it.Status, New: status}, au)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ArchiveItem soft-deletes a portfolio item (status archived).
func (s *Store) ArchiveItem(ctx context.Context, who Who, id string, au Audit) (*PortfolioItem, error) {
	return s.editItem(ctx, who, id, func(tx *appdb.Tx, it *PortfolioItem) error {
		if it.Status == StatusArchived {
			return nil
		}
		return setStatus(ctx, tx, s.now(), it, StatusArchived, au)
	})
}

// SetActive makes one portfolio item the active one (and no other).
func (s *Store) SetActive(ctx context.Context, who Who, id string, au Audit) (*PortfolioItem, error) {
	return s.editItem(ctx, who, id, func(tx *appdb.Tx, it *PortfolioItem) error {
		if it.Status == StatusArchived {
			return fmt.Errorf("%w: the property %q was removed from the portfolio", ErrNotFound, id)
		}
		now := s.now()
		if _, err := tx.Exec(ctx, `UPDATE portfolio_items SET is_active = CASE WHEN id = ? THEN 1 ELSE 0 END, updated_at = ?
			WHERE tenant_id = ? AND user_id = ?`, it.ID, now, tx.Tenant(), tx.User()); err != nil {
			return err
		}
		if it.IsActive {
			return nil
		}
		return logAction(ctx, tx, now, Action{ActionType: "switch_active_property", EntityType: "portfolio_item", EntityID: it.ID,
			Field: "is_active", Old: "false", New: "true"}, au)
	})
}

// editItem runs edit on the portfolio item id in one transaction and returns the item as edit
// left it.
func (s *Store) editItem(ctx context.Context, who Who, id string, edit func(tx *appdb.Tx, it *PortfolioItem) error) (*PortfolioItem, error) {
	var out *PortfolioItem
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		it, err := item(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := edit(tx, it); err != nil {
			return err
		}
		out, err = item(ctx, tx, it.ID)
		return err
	})
	return out, err
}

// SetIndexSummary stores an item's one-line summary.
func (s *Store) SetIndexSummary(ctx context.Context, who Who, itemID, summary string) error {
	return s.tx(ctx, who, func(tx *appdb.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE portfolio_items SET index_summary = ? WHERE tenant_id = ? AND user_id = ? AND id = ?`,
			summary, tx.Tenant(), tx.User(), itemID)
		return err
	})
}

// SaveRoomFeatures replaces the cached room features of a property.
func (s *Store) SaveRoomFeatures(ctx context.Context, who Who, propertyID string, rooms []RoomFeature) error {
	return s.tx(ctx, who, func(tx *appdb.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM room_features WHERE tenant_id = ? AND user_id = ? AND property_id = ?`,
			tx.Tenant(), tx.User(), propertyID); err != nil {
			return err
		}
		now := s.now()
		for _, r := range rooms {
			f := map[string]any{"condition": r.Condition, "features": r.Features, "photo": r.Photo}
			if _, err := tx.Exec(ctx, `INSERT INTO room_features (tenant_id, user_id, id, property_id, room_type, room_index, area_m2, features, created_at)
				VALUES (?,?,?,?,?,?,?,?,?)`, tx.Tenant(), tx.User(), NewID(), propertyID, r.RoomType, r.RoomIndex, r.AreaM2, appdb.JSONValue(f), now); err != nil {
				return err
			}
		}
		return nil
	})
}

// RoomFeatures returns a property's cached room features, in room order.
func (s *Store) RoomFeatures(ctx context.Context, who Who, propertyID string) ([]RoomFeature, error) {
	var out []RoomFeature
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT room_type, room_index, area_m2, features FROM room_features
			WHERE tenant_id = ? AND user_id = ? AND property_id = ? ORDER BY room_index, room_type`, tx.Tenant(), tx.User(), propertyID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r := RoomFeature{PropertyID: propertyID}
			var f struct {
				Condition string   `json:"condition"`
				Features  []string `json:"features"`
				Photo     string   `json:"photo"`
			}
			if err := rows.Scan(&r.RoomType, &r.RoomIndex, &r.AreaM2, appdb.JSON(&f)); err != nil {
				return err
			}
			r.Condition, r.Features, r.Photo = f.Condition, f.Features, f.Photo
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// SaveAnalysis stores an analysis and logs it.
func (s *Store) SaveAnalysis(ctx context.Context, who Who, a Analysis, au Audit) (*Analysis, error) {
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		now := s.now()
		if a.ID == "" {
			a.ID = NewID()
		}
		if a.Status == "" {
			a.Status = "completed"
		}
		a.CreatedAt = now
		if _, err := tx.Exec(ctx, `INSERT INTO analyses (tenant_id, user_id, id, property_id, analysis_type, result_data, chat_summary,
			detail_summary, status, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`, tx.Tenant(), tx.User(), a.ID, a.PropertyID,
			a.Type, appdb.JSONValue(a.Result), a.ChatSummary, a.DetailSummary, a.Status, now, now); err != nil {
			return err
		}
		return logAction(ctx, tx, now, Action{ActionType: "analysis_" + a.Type, EntityType: "analysis", EntityID: a.ID,
			Field: "chat_summary", New: a.ChatSummary}, au)
	})
	return &a, err
}

// LatestAnalysis returns the newest analysis of a kind for a property.
func (s *Store) LatestAnalysis(ctx context.Context, who Who, propertyID, kind string) (*Analysis, error) {
	var out *Analysis
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		a := Analysis{PropertyID: propertyID, Type: kind}
		var created appdb.Time
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT id, result_data, chat_summary, detail_summary, status, created_at FROM analyses
			WHERE tenant_id = ? AND user_id = ? AND property_id = ? AND analysis_type = ? ORDER BY created_at DESC, id DESC LIMIT 1`,
			tx.Tenant(), tx.User(), propertyID, kind).Scan(&a.ID, &raw, &a.ChatSummary, &a.DetailSummary, &a.Status, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no %s analysis of %s", ErrNotFound, kind, propertyID)
		}
		if err != nil {
			return err
		}
		a.Result, a.CreatedAt = json.RawMessage(raw), created.Time
		out = &a
		return nil
	})
	return out, err
}

// LogAction writes an action that no other method logs (a todo, a recalculation).
func (s *Store) LogAction(ctx context.Context, who Who, a Action, au Audit) error {
	return s.tx(ctx, who, func(tx *appdb.Tx) error { return logAction(ctx, tx, s.now(), a, au) })
}

// Actions lists the user's newest actions first.
func (s *Store) Actions(ctx context.Context, who Who, limit int) ([]Action, error) {
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	var out []Action
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, conversation_id, action_type, entity_type, entity_id, field_changed, old_value, new_value,
			trigger_message, confidence, created_at FROM action_log WHERE tenant_id = ? AND user_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
			tx.Tenant(), tx.User(), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a Action
			var created appdb.Time
			if err := rows.Scan(&a.ID, &a.ConversationID, &a.ActionType, &a.EntityType, &a.EntityID, &a.Field, &a.Old, &a.New,
				&a.Trigger, &a.Confidence, &created); err != nil {
				return err
			}
			a.CreatedAt = created.Time
			out = append(out, a)
		}
		return rows.Err()
	})
	return out, err
}
