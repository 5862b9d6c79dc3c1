package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/appdb"
)

// Migrations are the app's tables, written once for SQLite and Postgres.
var Migrations = []appdb.Migration{{
	Name: "listforge-domain",
	SQL: `CREATE TABLE orgs (tenant_id TEXT NOT NULL, name TEXT NOT NULL, created_at TIMESTAMP NOT NULL, PRIMARY KEY (tenant_id));
CREATE TABLE users (tenant_id TEXT NOT NULL, id TEXT NOT NULL, created_at TIMESTAMP NOT NULL, PRIMARY KEY (tenant_id, id));
CREATE TABLE items (tenant_id TEXT NOT NULL, id TEXT NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL,
	item_condition TEXT NOT NULL, attributes JSON NOT NULL, media JSON NOT NULL, default_price DOUBLE PRECISION,
	currency TEXT NOT NULL, lifecycle_status TEXT NOT NULL, ai_review_state TEXT NOT NULL, created_by TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL, PRIMARY KEY (tenant_id, id));
CREATE INDEX items_recent ON items (tenant_id, updated_at);
CREATE TABLE item_audit (tenant_id TEXT NOT NULL, id TEXT NOT NULL, item_id TEXT NOT NULL, field TEXT NOT NULL,
	old_value JSON, new_value JSON, reason TEXT NOT NULL, user_id TEXT NOT NULL, created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (tenant_id, id));
CREATE INDEX item_audit_item ON item_audit (tenant_id, item_id, id);
CREATE TABLE item_research_runs (tenant_id TEXT NOT NULL, id TEXT NOT NULL, item_id TEXT NOT NULL, run_type TEXT NOT NULL,
	priority TEXT NOT NULL, status TEXT NOT NULL, thread_id TEXT NOT NULL, run_id TEXT NOT NULL, checkpoint JSON,
	current_node TEXT NOT NULL, step_count INTEGER NOT NULL, step_history JSON NOT NULL, last_seq BIGINT NOT NULL,
	attempts INTEGER NOT NULL, error TEXT NOT NULL, message TEXT NOT NULL, created_by TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL, started_at TIMESTAMP, completed_at TIMESTAMP, PRIMARY KEY (tenant_id, id));
CREATE INDEX item_research_runs_item ON item_research_runs (tenant_id, item_id, id);
CREATE TABLE item_research (tenant_id TEXT NOT NULL, id TEXT NOT NULL, item_id TEXT NOT NULL, research_run_id TEXT NOT NULL,
	data JSON NOT NULL, schema_version TEXT NOT NULL, created_at TIMESTAMP NOT NULL, is_current BOOLEAN NOT NULL,
	PRIMARY KEY (tenant_id, id));
CREATE UNIQUE INDEX item_research_one_current ON item_research (tenant_id, item_id) WHERE is_current;
CREATE INDEX item_research_item ON item_research (tenant_id, item_id, id);
CREATE TABLE evidence_bundles (tenant_id TEXT NOT NULL, id TEXT NOT NULL, item_id TEXT NOT NULL, research_run_id TEXT NOT NULL,
	record_count INTEGER NOT NULL, created_at TIMESTAMP NOT NULL, PRIMARY KEY (tenant_id, id));
CREATE INDEX evidence_bundles_item ON evidence_bundles (tenant_id, item_id, id);
CREATE TABLE evidence_records (tenant_id TEXT NOT NULL, id TEXT NOT NULL, bundle_id TEXT NOT NULL, item_id TEXT NOT NULL,
	position INTEGER NOT NULL, record JSON NOT NULL, PRIMARY KEY (tenant_id, id));
CREATE INDEX evidence_records_bundle ON evidence_records (tenant_id, bundle_id, position);
CREATE TABLE chat_sessions (tenant_id TEXT NOT NULL, id TEXT NOT NULL, item_id TEXT NOT NULL, user_id TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL, last_message_at TIMESTAMP, PRIMARY KEY (tenant_id, id));
CREATE INDEX chat_sessions_item ON chat_sessions (tenant_id, item_id, user_id);
CREATE TABLE chat_messages (tenant_id TEXT NOT NULL, id TEXT NOT NULL, session_id TEXT NOT NULL, role TEXT NOT NULL,
	content TEXT NOT NULL, actions JSON, tool_calls JSON, created_at TIMESTAMP NOT NULL, PRIMARY KEY (tenant_id, id));
CREATE INDEX chat_messages_session ON chat_messages (tenant_id, session_id, id);
CREATE TABLE applied_actions (tenant_id TEXT NOT NULL, message_id TEXT NOT NULL, action_index INTEGER NOT NULL,
	user_id TEXT NOT NULL, applied_at TIMESTAMP NOT NULL, PRIMARY KEY (tenant_id, message_id, action_index))`,
	Scoped: []appdb.Scope{{Table: "orgs"}, {Table: "users"}, {Table: "items"}, {Table: "item_audit"}, {Table: "item_research_runs"},
		{Table: "item_research"}, {Table: "evidence_bundles"}, {Table: "evidence_records"}, {Table: "chat_sessions"},
		{Table: "chat_messages"}, {Table: "applied_actions"}},
}}

// Store is listforge's domain on an app database.
type Store struct {
	db  *appdb.DB
	now func() time.Time
}

// Open migrates db and returns the store.
func Open(ctx context.Context, db *appdb.DB) (*Store, error) {
	if err := db.Migrate(ctx, Migrations); err != nil {
		return nil, err
	}
	return &Store{db: db, now: func() time.Time { return time.Now().UTC() }}, nil
}

// DB is the app database.
func (s *Store) DB() *appdb.DB { return s.db }

// NewID returns a time-ordered ID (UUID v7), so ordering by ID is ordering by creation.
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

func (s *Store) tx(ctx context.Context, w Who, fn func(tx *appdb.Tx) error) error {
	if w.Org == "" {
		return errors.New("listforge: no organisation: the caller's credentials name no tenant")
	}
	return s.db.Tx(ctx, appdb.Who{Tenant: w.Org, User: w.User}, fn)
}

// EnsureMember records the organisation and the user, once; newOrg is true for the call that
// recorded the organisation.
func (s *Store) EnsureMember(ctx context.Context, w Who) (newOrg bool, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		now := s.now()
		res, err := tx.Exec(ctx, `INSERT INTO orgs (tenant_id, name, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, w.Org, w.Org, now)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		newOrg = n > 0
		if w.User == "" {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO users (tenant_id, id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, w.Org, w.User, now)
		return err
	})
	return newOrg, err
}

// CountItems returns how many items the organisation has.
func (s *Store) CountItems(ctx context.Context, w Who) (n int, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		return tx.QueryRow(ctx, `SELECT COUNT(*) FROM items WHERE tenant_id = ?`, w.Org).Scan(&n)
	})
	return n, err
}

// ValidateItem checks an item's fields, naming the first bad one.
func ValidateItem(it *Item) error {
	it.Title = strings.TrimSpace(it.Title)
	if len(it.Title) > 300 {
		return &FieldError{"title", "at most 300 characters"}
	}
	if len(it.Description) > 20000 {
		return &FieldError{"description", "at most 20000 characters"}
	}
	if it.Currency == "" {
		it.Currency = "USD"
	}
	if len(it.Currency) != 3 {
		return &FieldError{"currency", "a three-letter ISO code such as USD"}
	}
	if it.DefaultPrice != nil && (*it.DefaultPrice < 0 || math.IsNaN(*it.DefaultPrice) || math.IsInf(*it.DefaultPrice, 0)) {
		return &FieldError{"defaultPrice", "a price of 0 or more, or null"}
	}
	if it.LifecycleStatus == "" {
		it.LifecycleStatus = "draft"
	}
	if !slices.Contains(LifecycleStatuses, it.LifecycleStatus) {
		return &FieldError{"lifecycleStatus", "one of " + strings.Join(LifecycleStatuses, ", ")}
	}
	if it.AIReviewState == "" {
		it.AIReviewState = "none"
	}
	if !slices.Contains(AIReviewStates, it.AIReviewState) {
		return &FieldError{"aiReviewState", "one of " + strings.Join(AIReviewStates, ", ")}
	}
	if it.Attributes == nil {
		it.Attributes = map[string]any{}
	}
	if it.Media == nil {
		it.Media = []Media{}
	}
	if len(it.Media) > 24 {
		return &FieldError{"media", "at most 24 files"}
	}
	for i, m := range it.Media {
		if m.Type == "" {
			it.Media[i].Type = "image"
		}
		if strings.TrimSpace(m.URL) == "" {
			return &FieldError{fmt.Sprintf("media[%d].url", i), "the photo's URL (https:// or data:)"}
		}
	}
	return nil
}

// CreateItem stores a new item.
func (s *Store) CreateItem(ctx context.Context, w Who, it Item) (*Item, error) {
	if err := ValidateItem(&it); err != nil {
		return nil, err
	}
	if it.ID == "" {
		it.ID = NewID()
	}
	it.OrgID, it.CreatedBy = w.Org, w.User
	it.CreatedAt = s.now()
	it.UpdatedAt = it.CreatedAt
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO items (tenant_id, id, title, description, item_condition, attributes, media, default_price,
			currency, lifecycle_status, ai_review_state, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			w.Org, it.ID, it.Title, it.Description, it.Condition, appdb.JSONValue(it.Attributes), appdb.JSONValue(it.Media), it.DefaultPrice,
			it.Currency, it.LifecycleStatus, it.AIReviewState, it.CreatedBy, it.CreatedAt, it.UpdatedAt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &it, nil
}

const itemCols = `id, tenant_id, title, description, item_condition, attributes, media, default_price, currency, lifecycle_status, ai_review_state, created_by, created_at, updated_at`

func scanItem(sc interface{ Scan(...any) error }) (*Item, error) {
	var it Item
	var price sql.NullFloat64
	var created, updated appdb.Time
	if err := sc.Scan(&it.ID, &it.OrgID, &it.Title, &it.Description, &it.Condition, appdb.JSON(&it.Attributes), appdb.JSON(&it.Media),
		&price, &it.Currency, &it.LifecycleStatus, &it.AIReviewState, &it.CreatedBy, &created, &updated); err != nil {
		return nil, err
	}
	if price.Valid {
		it.DefaultPrice = &price.Float64
	}
	it.CreatedAt, it.UpdatedAt = created.UTC(), updated.UTC()
	if it.Attributes == nil {
		it.Attributes = map[string]any{}
	}
	return &it, nil
}

func getItem(ctx context.Context, tx *appdb.Tx, org, id string) (*Item, error) {
	it, err := scanItem(tx.QueryRow(ctx, `SELECT `+itemCols+` FROM items WHERE tenant_id = ? AND id = ?`, org, id))
	if appdb.IsNotFound(err) {
		return nil, fmt.Errorf("item %s: %w", id, ErrNotFound)
	}
	return it, err
}

// GetItem returns an item of the organisation.
func (s *Store) GetItem(ctx context.Context, w Who, id string) (it *Item, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		it, err = getItem(ctx, tx, w.Org, id)
		return err
	})
	return it, err
}

func pageArgs(page, limit int) (int, int) {
	if page < 1 {
		page = 1
	}
	if limit <= 0 {
		limit = 20
	}
	if limit > 100 {
		limit = 100
	}
	return page, limit
}

// ListItems returns the organisation's items, most recently updated first.
func (s *Store) ListItems(ctx context.Context, w Who, page, limit int) (*Page[Item], error) {
	page, limit = pageArgs(page, limit)
	out := &Page[Item]{Items: []Item{}, Page: page, Limit: limit}
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM items WHERE tenant_id = ?`, w.Org).Scan(&out.Total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+itemCols+` FROM items WHERE tenant_id = ? ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?`, w.Org, limit, (page-1)*limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			it, err := scanItem(rows)
			if err != nil {
				return err
			}
			out.Items = append(out.Items, *it)
		}
		return rows.Err()
	})
	return out, err
}

// JobRef is a research job's server run, to cancel when its item is deleted.
type JobRef struct {
	ID, ThreadID, RunID, Status string
}

// itemTables are the tables holding an item's rows, with the condition selecting them; chat
// messages and applied actions hang off the item's sessions and messages.
var itemTables = []struct{ table, where string }{
	{"applied_actions", `message_id IN (SELECT m.id FROM chat_messages m JOIN chat_sessions s ON s.tenant_id = m.tenant_id AND s.id = m.session_id
		WHERE m.tenant_id = ? AND s.item_id = ?)`},
	{"chat_messages", `session_id IN (SELECT id FROM chat_sessions WHERE tenant_id = ? AND item_id = ?)`},
	{"chat_sessions", `item_id = ?`},
	{"evidence_records", `item_id = ?`},
	{"evidence_bundles", `item_id = ?`},
	{"item_research", `item_id = ?`},
	{"item_research_runs", `item_id = ?`},
	{"item_audit", `item_id = ?`},
	{"items", `id = ?`},
}

// itemArgs are the arguments of a table's condition in itemTables.
func itemArgs(where, org, id string) []any {
	if strings.Count(where, "?") == 2 {
		return []any{org, id}
	}
	return []any{id}
}

// DeleteItem deletes an item and every row of it (audit, research jobs, research, evidence,
// chat sessions, messages and applied actions) in one transaction, and returns the research
// jobs that had not finished, whose runs the caller cancels. On Postgres the item's row is
// locked first, so a research run saving its results at that moment either finishes first
// (and its rows are deleted too) or finds the item gone.
func (s *Store) DeleteItem(ctx context.Context, w Who, id string) (unfinished []JobRef, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		if err := lockItem(ctx, tx, w.Org, id); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, thread_id, run_id, status FROM item_research_runs WHERE tenant_id = ? AND item_id = ? AND status IN ('pending', 'running')`, w.Org, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var j JobRef
			if err := rows.Scan(&j.ID, &j.ThreadID, &j.RunID, &j.Status); err != nil {
				rows.Close()
				return err
			}
			unfinished = append(unfinished, j)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, t := range itemTables {
			if _, err := tx.Exec(ctx, `DELETE FROM `+t.table+` WHERE tenant_id = ? AND `+t.where, append([]any{w.Org}, itemArgs(t.where, w.Org, id)...)...); err != nil {
				return fmt.Errorf("deleting the item's %s: %w", t.table, err)
			}
		}
		return nil
	})
	return unfinished, err
}

// lockItem checks that the item exists and, on Postgres, locks its row for the transaction:
// writes that belong to an item (research results, jobs) and its deletion are serialised.
func lockItem(ctx context.Context, tx *appdb.Tx, org, id string) error {
	q := `SELECT id FROM items WHERE tenant_id = ? AND id = ?`
	if tx.Dialect() == appdb.Postgres {
		q += ` FOR UPDATE`
	}
	var got string
	err := tx.QueryRow(ctx, q, org, id).Scan(&got)
	if appdb.IsNotFound(err) {
		return fmt.Errorf("item %s: %w", id, ErrNotFound)
	}
	return err
}

// ItemRows counts the rows each table holds for an item (tests check that a deletion left
// none).
func (s *Store) ItemRows(ctx context.Context, w Who, id string) (map[string]int, error) {
	out := map[string]int{}
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		for _, t := range itemTables {
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+t.table+` WHERE tenant_id = ? AND `+t.where, append([]any{w.Org}, itemArgs(t.where, w.Org, id)...)...).Scan(&n); err != nil {
				return err
			}
			out[t.table] = n
		}
		return nil
	})
	return out, err
}

// Fields an audited single-field update may change, by their API names.
var Fields = []string{"title", "description", "condition", "defaultPrice", "attributes", "media", "currency", "lifecycleStatus", "aiReviewState"}

// UpdateField changes one field of an item and records the change with its reason.
func (s *Store) UpdateField(ctx context.Context, w Who, id, field string, value any, reason string) (it *Item, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		it, err = s.updateField(ctx, tx, w, id, field, value, reason)
		return err
	})
	return it, err
}

// UpdateFields applies several single-field updates in one transaction, each audited.
func (s *Store) UpdateFields(ctx context.Context, w Who, id string, fields map[string]any, reason string) (it *Item, err error) {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		if len(names) == 0 {
			it, err = getItem(ctx, tx, w.Org, id)
			return err
		}
		for _, f := range names {
			if it, err = s.updateField(ctx, tx, w, id, f, fields[f], reason); err != nil {
				return err
			}
		}
		return nil
	})
	return it, err
}

func (s *Store) updateField(ctx context.Context, tx *appdb.Tx, w Who, id, field string, value any, reason string) (*Item, error) {
	it, err := getItem(ctx, tx, w.Org, id)
	if err != nil {
		return nil, err
	}
	next := *it
	old, err := setField(&next, field, value)
	if err != nil {
		return nil, err
	}
	if err := ValidateItem(&next); err != nil {
		return nil, err
	}
	next.UpdatedAt = s.now()
	if _, err := tx.Exec(ctx, `UPDATE items SET title = ?, description = ?, item_condition = ?, attributes = ?, media = ?, default_price = ?,
		currency = ?, lifecycle_status = ?, ai_review_state = ?, updated_at = ? WHERE tenant_id = ? AND id = ?`,
		next.Title, next.Description, next.Condition, appdb.JSONValue(next.Attributes), appdb.JSONValue(next.Media), next.DefaultPrice,
		next.Currency, next.LifecycleStatus, next.AIReviewState, next.UpdatedAt, w.Org, id); err != nil {
		return nil, err
	}
	newValue, _ := getField(&next, field)
	if _, err := tx.Exec(ctx, `INSERT INTO item_audit (tenant_id, id, item_id, field, old_value, new_value, reason, user_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.Org, NewID(), id, field, appdb.JSONValue(old), appdb.JSONValue(newValue), reason, w.User, next.UpdatedAt); err != nil {
		return nil, err
	}
	return &next, nil
}

func getField(it *Item, field string) (any, error) {
	switch field {
	case "title":
		return it.Title, nil
	case "description":
		return it.Description, nil
	case "condition":
		return it.Condition, nil
	case "defaultPrice":
		return it.DefaultPrice, nil
	case "attributes":
		return it.Attributes, nil
	case "media":
		return it.Media, nil
	case "currency":
		return it.Currency, nil
	case "lifecycleStatus":
		return it.LifecycleStatus, nil
	case "aiReviewState":
		return it.AIReviewState, nil
	}
	return nil, &FieldError{"field", fmt.Sprintf("%q is not an item field; send one of %s", field, strings.Join(Fields, ", "))}
}

// setField sets one field from a JSON-shaped value and returns the old value.
func setField(it *Item, field string, value any) (any, error) {
	old, err := getField(it, field)
	if err != nil {
		return nil, err
	}
	str := func() (string, error) {
		s, ok := value.(string)
		if !ok {
			return "", &FieldError{field, "a string"}
		}
		return s, nil
	}
	switch field {
	case "title", "description", "condition", "currency", "lifecycleStatus", "aiReviewState":
		v, err := str()
		if err != nil {
			return nil, err
		}
		switch field {
		case "title":
			if strings.TrimSpace(v) == "" {
				return nil, &FieldError{field, "a non-empty title"}
			}
			it.Title = v
		case "description":
			it.Description = v
		case "condition":
			it.Condition = v
		case "currency":
			it.Currency = strings.ToUpper(v)
		case "lifecycleStatus":
			it.LifecycleStatus = v
		case "aiReviewState":
			it.AIReviewState = v
		}
	case "defaultPrice":
		switch v := value.(type) {
		case nil:
			it.DefaultPrice = nil
		case float64:
			it.DefaultPrice = &v
		case int:
			f := float64(v)
			it.DefaultPrice = &f
		case json.Number:
			f, err := v.Float64()
			if err != nil {
				return nil, &FieldError{field, "a number"}
			}
			it.DefaultPrice = &f
		default:
			return nil, &FieldError{field, "a number or null"}
		}
	case "attributes":
		m, ok := value.(map[string]any)
		if !ok {
			return nil, &FieldError{field, "an object of attribute names to values"}
		}
		it.Attributes = m
	case "media":
		b, _ := json.Marshal(value)
		var ms []Media
		if err := json.Unmarshal(b, &ms); err != nil {
			return nil, &FieldError{field, `a list of {"type": "image", "url": "..."}`}
		}
		it.Media = ms
	}
	return old, nil
}

// AuditTrail returns an item's recorded updates, oldest first.
func (s *Store) AuditTrail(ctx context.Context, w Who, itemID string) ([]Audit, error) {
	var out []Audit
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, item_id, field, old_value, new_value, reason, user_id, created_at FROM item_audit
			WHERE tenant_id = ? AND item_id = ? ORDER BY id`, w.Org, itemID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a Audit
			var at appdb.Time
			if err := rows.Scan(&a.ID, &a.ItemID, &a.Field, appdb.JSON(&a.OldValue), appdb.JSON(&a.NewValue), &a.Reason, &a.UserID, &at); err != nil {
				return err
			}
			a.CreatedAt = at.UTC()
			out = append(out, a)
		}
		return rows.Err()
	})
	return out, err
}
