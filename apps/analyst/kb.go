package analyst

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/apps/analyst/corpus"
	tables "github.com/trellis-go/trellis/apps/analyst/store"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/store"
)

// Chunk is a passage found by rag_tool.
type Chunk struct {
	Content  string         `json:"content"`
	Metadata map[string]any `json:"metadata"`
	Score    float64        `json:"similarity_score"`
}

// Title is the chunk's document title, or its source.
func (c Chunk) Title() string {
	if t, _ := c.Metadata["title"].(string); t != "" {
		return t
	}
	s, _ := c.Metadata["source"].(string)
	return s
}

// KB is the company knowledge base of one server: the tables and the store's index.
type KB struct {
	tables *tables.Tables
	shared store.Store // the server's store without a tenant; each tenant sees its own view
	log    *slog.Logger
	now    func() time.Time // the app's clock; time.Now when nil
	mu     sync.Mutex
	loaded map[string]bool // tenants whose corpus is ingested
}

func kbNamespace(tenant string) []string { return []string{"analyst", "kb", tenant} }

// view is tenant's view of the shared store: the tenant's items, invisible to other tenants.
func (kb *KB) view(tenant string) store.Store { return server.TenantStore(kb.shared, tenant) }

// EnsureCorpus ingests the shipped corpus for tenant once (on first start for the server's
// default tenant, on first use for others), logging a progress bar.
func (kb *KB) EnsureCorpus(ctx context.Context, tenant string) error {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	if kb.loaded[tenant] {
		return nil
	}
	docs, err := corpus.Documents()
	if err != nil {
		return err
	}
	have, err := kb.tables.CountDocuments(ctx, tenant, "corpus:")
	if err != nil {
		return fmt.Errorf("analyst: counting the corpus: %w", err)
	}
	if have >= len(docs) {
		kb.loaded[tenant] = true
		return nil
	}
	start := time.Now()
	metas := make([]map[string]any, len(docs))
	for i, d := range docs {
		metas[i] = map[string]any{"source": "corpus/" + d.ID + ".md", "document_type": d.Type, "project": d.Project,
			"date": d.Date, "tags": d.Tags, "title": d.Title, "document_id": "corpus:" + d.ID}
	}
	rows := make([]tables.Document, len(docs))
	for i, d := range docs {
		rows[i] = tables.Document{ID: "corpus:" + d.ID, Title: d.Title, Content: d.Body, Metadata: metas[i]}
	}
	if err := kb.tables.AddDocuments(ctx, tenant, rows, kb.clock().UTC()); err != nil {
		return fmt.Errorf("analyst: ingesting the corpus: %w", err)
	}
	for i, d := range docs {
		for j, text := range chunkText(d.Body, 90) {
			if err := kb.index(ctx, tenant, fmt.Sprintf("corpus:%s:%d", d.ID, j), text, metas[i]); err != nil {
				return err
			}
		}
		if (i+1)%10 == 0 || i+1 == len(docs) {
			kb.log.Info("analyst: indexing the corpus", "tenant", tenant, "progress", progressBar(i+1, len(docs)))
		}
	}
	kb.log.Info("analyst: corpus ingested", "tenant", tenant, "documents", len(docs), "took", time.Since(start).Round(time.Millisecond))
	kb.loaded[tenant] = true
	return nil
}

func (kb *KB) clock() time.Time {
	if kb.now == nil {
		return time.Now()
	}
	return kb.now()
}

func progressBar(done, total int) string {
	const width = 20
	n := done * width / total
	return fmt.Sprintf("[%s%s] %d/%d", strings.Repeat("#", n), strings.Repeat("-", width-n), done, total)
}

func (kb *KB) index(ctx context.Context, tenant, key, text string, meta map[string]any) error {
	err := kb.view(tenant).Put(ctx, store.PutRequest{Namespace: kbNamespace(tenant), Key: key,
		Value: map[string]any{"content": text, "metadata": meta}, Index: []string{"content", "metadata.title"}})
	if err != nil {
		return fmt.Errorf("analyst: indexing %s: %w", key, err)
	}
	return nil
}

// chunkText splits text into passages of about words words, at sentence ends.
func chunkText(text string, words int) []string {
	var out []string
	var cur []string
	n := 0
	for _, s := range sentences(text) {
		w := len(strings.Fields(s))
		if n > 0 && n+w > words {
			out = append(out, strings.Join(cur, " "))
			cur, n = nil, 0
		}
		cur = append(cur, s)
		n += w
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}

// sentences splits text at ". ", keeping the periods.
func sentences(text string) []string {
	var out []string
	text = strings.Join(strings.Fields(text), " ")
	for text != "" {
		i := strings.Index(text, ". ")
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+2:]
	}
	return out
}

// ErrBadArgs is matched by the errors of tool arguments that cannot be used.
var ErrBadArgs = errors.New("analyst: bad arguments")

// Search finds the passages most similar to query in tenant's knowledge base (the corpus and
// saved reports). filter compares metadata fields ({"project": "<name>"}, with the store's
// operators); minScore drops weaker passages.
func (kb *KB) Search(ctx context.Context, tenant, query string, topK int, filter map[string]any, minScore float64) ([]Chunk, error) {
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("%w: query is empty; send the question to search for", ErrBadArgs)
	}
	if topK <= 0 {
		topK = 5
	}
	if topK > 50 {
		return nil, fmt.Errorf("%w: top_k is %d; send at most 50", ErrBadArgs, topK)
	}
	f := map[string]any{}
	for k, v := range filter {
		f["metadata."+k] = v
	}
	items, err := kb.view(tenant).Search(ctx, store.SearchRequest{NamespacePrefix: kbNamespace(tenant), Query: query, Filter: f, Limit: topK})
	if err != nil {
		return nil, fmt.Errorf("analyst: searching the knowledge base: %w", err)
	}
	var out []Chunk
	for _, it := range items {
		if it.Score < minScore {
			continue
		}
		c := Chunk{Score: it.Score}
		c.Content, _ = it.Value["content"].(string)
		c.Metadata, _ = it.Value["metadata"].(map[string]any)
		out = append(out, c)
	}
	return out, nil
}

// Retrieve finds the documents that answer question in tenant's knowledge base: the question is
// rewritten into a search query (its content words with their synonyms from the corpus's
// vocabulary, the question's wording and time frame dropped), searched with the store's hybrid
// search (vectors and text) for several passages per document, and the passages are re-ranked by
// their hybrid score, the share of the question's terms (or their synonyms) in the document's
// title and passage, and whether the document falls in the question's time frame ("last year",
// "recent", "in 2025"). Each document (a saved report too) gives one passage, its best; the k
// best documents are returned.
func (kb *KB) Retrieve(ctx context.Context, tenant, question string, k int, filter map[string]any) ([]Chunk, error) {
	q := rewrite(question, kb.clock())
	query := strings.Join(q.Terms, " ")
	if query == "" {
		query = question
	}
	if k <= 0 {
		k = 5
	}
	cands, err := kb.Search(ctx, tenant, query, min(50, k*4), filter, 0)
	if err != nil {
		return nil, err
	}
	if len(q.Named) > 0 {
		// The documents on what the question names are candidates too, however little they
		// say of its other words.
		more, err := kb.Search(ctx, tenant, strings.Join(q.Named, " "), min(50, k*2), filter, 0)
		if err != nil {
			return nil, err
		}
		have := map[string]bool{}
		for _, c := range cands {
			have[c.Content] = true
		}
		for _, c := range more { // a passage both searches found keeps the question's score
			if !have[c.Content] {
				cands = append(cands, c)
			}
		}
	}
	best := map[string]int{}
	var out []Chunk
	for _, c := range cands {
		date, _ := c.Metadata["date"].(string)
		c.Score = float64(int((c.Score+q.relevance(c.Title(), c.Content, date))*1000)) / 1000
		doc := documentOf(c)
		if i, ok := best[doc]; ok {
			if c.Score > out[i].Score {
				out[i] = c
			}
			continue
		}
		best[doc] = len(out)
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// documentOf names the document a passage comes from: a corpus document or a saved report.
func documentOf(c Chunk) string {
	if id, _ := c.Metadata["report_id"].(string); id != "" {
		return "report:" + id
	}
	if id, _ := c.Metadata["document_id"].(string); id != "" {
		return id
	}
	if src, _ := c.Metadata["source"].(string); src != "" {
		return src
	}
	return c.Content
}
