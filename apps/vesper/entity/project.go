package entity

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
)

// NearCutoff is the ratio down to which names are offered as "did you
// mean" candidates when none is within Cutoff.
const NearCutoff = 0.45

// ProjectTTL is how long a resolved project name stays cached.
const ProjectTTL = 5 * time.Minute

// Querier runs tenant-scoped queries; *warehouse.Warehouse is one.
type Querier interface {
	Query(ctx context.Context, tenant, sql string, args ...any) (*warehouse.Result, error)
}

// ProjectMatch is the outcome of resolving a project name. Exactly one of
// Name (resolved), Matches (ambiguous) or NotFound is set.
type ProjectMatch struct {
	Name      string   `json:"resolved,omitempty"`
	ProjectID string   `json:"project_id,omitempty"`
	Matches   []string `json:"matches,omitempty"`
	NotFound  bool     `json:"not_found,omitempty"`
	// Suggestions are close names offered when nothing matched.
	Suggestions []string `json:"suggestions,omitempty"`
	FromCache   bool     `json:"from_cache,omitempty"`
}

// Ambiguous reports whether several projects matched.
func (m ProjectMatch) Ambiguous() bool { return len(m.Matches) > 1 }

// Message is the sentence for the user when the name did not resolve.
func (m ProjectMatch) Message(asked string) string {
	switch {
	case m.Ambiguous():
		return fmt.Sprintf("%q matches %d projects: %s. Which one do you mean?", asked, len(m.Matches), strings.Join(m.Matches, ", "))
	case m.NotFound && len(m.Suggestions) > 0:
		return fmt.Sprintf("No project matches %q. Did you mean %s?", asked, orList(m.Suggestions))
	case m.NotFound:
		return fmt.Sprintf("No project matches %q.", asked)
	}
	return ""
}

// ProjectResolver resolves project names against the live per_project
// view of a tenant, caching resolved names for ProjectTTL.
type ProjectResolver struct {
	q     Querier
	cache Cache
}

// NewProjectResolver returns a resolver; a nil cache means an in-process one.
func NewProjectResolver(q Querier, cache Cache) *ProjectResolver {
	if cache == nil {
		cache = NewMemoryCache(nil)
	}
	return &ProjectResolver{q: q, cache: cache}
}

// likePattern makes a case-insensitive LIKE pattern that matches text
// anywhere, with the LIKE wildcards in text escaped.
func likePattern(text string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(text)) + "%"
}

// LikeClause is the portable case-insensitive contains-match on a column,
// with $n its pattern parameter (see LikePattern).
func LikeClause(column string, n int) string {
	return fmt.Sprintf(`LOWER(%s) LIKE $%d ESCAPE '\'`, column, n)
}

// LikePattern is the parameter for LikeClause.
func LikePattern(text string) string { return likePattern(text) }

// Resolve finds the project a user means. A name contained in exactly one
// project's name, or equal to one ignoring case, resolves; a name contained
// in several is ambiguous and lists them (up to five, shortest first); a
// name in none is not found, with fuzzy suggestions at Cutoff.
func (r *ProjectResolver) Resolve(ctx context.Context, tenant, name string) (ProjectMatch, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return ProjectMatch{}, fmt.Errorf("entity: empty project name; give the project's name or part of it")
	}
	key := "entity:project:" + tenant + ":" + strings.ToLower(name)
	if v, ok, err := r.cache.Get(ctx, key); err == nil && ok {
		n, id, _ := strings.Cut(v, "\x1f")
		return ProjectMatch{Name: n, ProjectID: id, FromCache: true}, nil
	}
	res, err := r.q.Query(ctx, tenant, `SELECT name, project_id FROM per_project
		WHERE `+LikeClause("name", 1)+` AND (is_archived = 0 OR is_archived IS NULL)
		ORDER BY LENGTH(name), name LIMIT 5`, likePattern(name))
	if err != nil {
		return ProjectMatch{}, err
	}
	var m ProjectMatch
	for _, row := range res.Rows {
		n, _ := row[0].(string)
		if strings.EqualFold(n, name) {
			m = ProjectMatch{Name: n, ProjectID: fmt.Sprint(row[1])}
			break
		}
		m.Matches = append(m.Matches, n)
	}
	if m.Name == "" && len(res.Rows) == 1 {
		m = ProjectMatch{Name: m.Matches[0], ProjectID: fmt.Sprint(res.Rows[0][1])}
	}
	if m.Name != "" {
		_ = r.cache.Set(ctx, key, m.Name+"\x1f"+m.ProjectID, ProjectTTL) // a cache failure only costs a query
		return m, nil
	}
	if len(m.Matches) > 1 {
		return m, nil
	}
	// nothing contains the text: offer close names
	all, err := r.q.Query(ctx, tenant, `SELECT name FROM per_project WHERE is_archived = 0 OR is_archived IS NULL ORDER BY name`)
	if err != nil {
		return ProjectMatch{}, err
	}
	names := make([]string, 0, len(all.Rows))
	lows := make([]string, 0, len(all.Rows))
	for _, row := range all.Rows {
		n, _ := row[0].(string)
		names = append(names, n)
		lows = append(lows, strings.ToLower(n))
	}
	m = ProjectMatch{NotFound: true}
	hits := CloseMatches(strings.ToLower(name), lows, 3, Cutoff)
	if len(hits) == 0 {
		// Nothing is close enough to be a typo: still offer the nearest
		// names, so the answer is a question and never a guess.
		hits = CloseMatches(strings.ToLower(name), lows, 3, NearCutoff)
	}
	for _, hit := range hits {
		for i, l := range lows {
			if l == hit {
				m.Suggestions = append(m.Suggestions, names[i])
				break
			}
		}
	}
	return m, nil
}

// MemoryCache is an in-process Cache with expiry.
type MemoryCache struct {
	mu    sync.Mutex
	now   func() time.Time
	items map[string]memItem
}

type memItem struct {
	v   string
	exp time.Time
}

// NewMemoryCache returns an empty cache; now is the clock (nil: time.Now).
func NewMemoryCache(now func() time.Time) *MemoryCache {
	if now == nil {
		now = time.Now
	}
	return &MemoryCache{now: now, items: map[string]memItem{}}
}

// Get implements Cache.
func (c *MemoryCache) Get(_ context.Context, key string) (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[key]
	if !ok {
		return "", false, nil
	}
	if !c.now().Before(it.exp) {
		delete(c.items, key)
		return "", false, nil
	}
	return it.v, true, nil
}

// Set implements Cache.
func (c *MemoryCache) Set(_ context.Context, key, value string, ttl time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) > 10000 { // bound memory: drop expired entries
		now := c.now()
		for k, it := range c.items {
			if !now.Before(it.exp) {
				delete(c.items, k)
			}
		}
	}
	c.items[key] = memItem{v: value, exp: c.now().Add(ttl)}
	return nil
}

// orList joins names as a sentence does: "A", "A or B", "A, B or C".
func orList(xs []string) string {
	if len(xs) <= 2 {
		return strings.Join(xs, " or ")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}
