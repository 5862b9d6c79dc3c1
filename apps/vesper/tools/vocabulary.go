package tools

import (
	"context"
	"sync"
	"time"
)

// Vocabulary is what a tenant's data names: the words people type when
// they ask about it. The supervisor matches free text against it (with
// typos) to fill the filters.
type Vocabulary struct {
	Projects []string // active projects
	Reports  []string // Power BI reports with activity
	Sponsors []string
	Buyers   []string // offtakers of the projects' PPAs
}

// vocabularyTTL is how long a tenant's vocabulary is kept before it is
// read again.
const vocabularyTTL = 5 * time.Minute

type vocabularyEntry struct {
	v  Vocabulary
	at time.Time
}

type vocabularies struct {
	mu sync.Mutex
	m  map[string]vocabularyEntry
}

// Vocabulary returns the tenant's vocabulary, read from the warehouse at
// most once every five minutes. It needs no permission: it returns names,
// not data, and only the tenant's own.
func (k *Toolkit) Vocabulary(ctx context.Context, tenant string) (Vocabulary, error) {
	k.vocab.mu.Lock()
	if e, ok := k.vocab.m[tenant]; ok && time.Since(e.at) < vocabularyTTL {
		k.vocab.mu.Unlock()
		return e.v, nil
	}
	k.vocab.mu.Unlock()
	var v Vocabulary
	for _, q := range []struct {
		sql string
		dst *[]string
	}{
		{`SELECT name FROM per_project WHERE is_archived = 0 OR is_archived IS NULL ORDER BY name`, &v.Projects},
		{`SELECT DISTINCT report_name FROM pbi_activity_events WHERE report_name IS NOT NULL ORDER BY report_name`, &v.Reports},
		{`SELECT DISTINCT sponsor FROM per_project WHERE sponsor IS NOT NULL AND sponsor <> '' ORDER BY sponsor`, &v.Sponsors},
		{`SELECT DISTINCT buyer FROM per_project WHERE buyer IS NOT NULL AND buyer <> '' ORDER BY buyer`, &v.Buyers},
	} {
		res, err := k.w.Query(ctx, tenant, q.sql)
		if err != nil {
			return Vocabulary{}, err
		}
		for _, r := range res.Rows {
			if s := str(r[0]); s != "" {
				*q.dst = append(*q.dst, s)
			}
		}
	}
	k.vocab.mu.Lock()
	if k.vocab.m == nil {
		k.vocab.m = map[string]vocabularyEntry{}
	}
	k.vocab.m[tenant] = vocabularyEntry{v: v, at: time.Now()}
	k.vocab.mu.Unlock()
	return v, nil
}
