// Package backend is what every store backend (memstore, sqlitestore, pgstore) shares so that
// they behave alike: the checks on a request, the tokens full-text search indexes and queries,
// the text score, the order of search results and the listing of namespaces.
package backend

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/trellis-go/trellis/store"
)

func slicesSortFunc[S ~[]E, E any](s S, cmp func(a, b E) int) { slices.SortStableFunc(s, cmp) }

// IndexText returns the text of a value that is indexed under the given paths (nil means "$"),
// one string per field found, in path order. Strings are taken as they are; other values are
// written as JSON.
func IndexText(value map[string]any, paths []string) []string {
	if len(paths) == 0 {
		paths = []string{"$"}
	}
	var out []string
	for _, p := range paths {
		pp, err := store.ParsePath(p)
		if err != nil {
			continue
		}
		collect(value, pp, &out)
	}
	return out
}

// Configure is how every backend's New reads its options: *opts, or the zero options for nil,
// and their store.Config (config picks it out) with the defaults filled in and checked.
func Configure[O any](opts *O, config func(O) store.Config) (O, store.Config, error) {
	var o O
	if opts != nil {
		o = *opts
	}
	cfg, err := config(o).WithDefaults()
	return o, cfg, err
}

// Index is what a put indexes, the same in every backend: the text of the value's fields under
// the request's paths (the store's IndexConfig.Fields when it gives none), nothing when the
// request says NoIndex, and, when the store has an embedder, the embedding of that text.
func Index(ctx context.Context, cfg store.Config, req store.PutRequest, value map[string]any) (texts []string, vec []float32, err error) {
	if req.NoIndex {
		return nil, nil, nil
	}
	paths := req.Index
	if paths == nil && cfg.Index != nil {
		paths = cfg.Index.Fields
	}
	texts = IndexText(value, paths)
	if cfg.Index == nil || len(texts) == 0 {
		return texts, nil, nil
	}
	vec, err = cfg.Index.EmbedText(ctx, strings.Join(texts, "\n"))
	if err != nil {
		return nil, nil, err
	}
	return texts, vec, nil
}

func collect(v any, p store.Path, out *[]string) {
	if len(p) == 0 {
		switch x := v.(type) {
		case nil:
		case string:
			if x != "" {
				*out = append(*out, x)
			}
		default:
			b, _ := json.Marshal(x)
			*out = append(*out, string(b))
		}
		return
	}
	seg := p[0]
	if strings.HasPrefix(seg, "[") {
		arr, ok := v.([]any)
		if !ok {
			return
		}
		idx := seg[1 : len(seg)-1]
		if idx == "*" {
			for _, e := range arr {
				collect(e, p[1:], out)
			}
			return
		}
		i, _ := strconv.Atoi(idx)
		if i < 0 {
			i += len(arr)
		}
		if i >= 0 && i < len(arr) {
			collect(arr[i], p[1:], out)
		}
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if e, ok := m[seg]; ok {
		collect(e, p[1:], out)
	}
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be but by for from has have he her his i if in into is it its
		me my of on or our she so than that the their them then there these they this to us was we were what when where
		which who whom why will with you your do does did not no can could would should about`) {
		m[w] = true
	}
	return m
}()

// Tokenize splits text into lower-case words of letters and digits, dropping common English
// stop words. Every backend indexes and queries the same tokens, so full-text search behaves
// alike on all of them.
func Tokenize(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w := strings.ToLower(f)
		if stopWords[w] {
			continue
		}
		out = append(out, w)
	}
	return out
}

// QueryTerms returns the distinct tokens of a query, in order of first appearance.
func QueryTerms(q string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range Tokenize(q) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// TextScore is the share of query terms found among a text's tokens: 0 when none, 1 when all.
func TextScore(terms []string, tokens []string) float64 {
	if len(terms) == 0 {
		return 0
	}
	n := 0
	if len(terms) <= 8 {
		// A short query (the usual case) looks its terms up in the tokens directly: a search
		// scores thousands of items, and a set of each one's tokens was most of what it
		// allocated.
		for _, t := range terms {
			if slices.Contains(tokens, t) {
				n++
			}
		}
		return float64(n) / float64(len(terms))
	}
	have := make(map[string]bool, len(tokens))
	for _, t := range tokens {
		have[t] = true
	}
	for _, t := range terms {
		if have[t] {
			n++
		}
	}
	return float64(n) / float64(len(terms))
}

// FTSText is the text a backend gives its full-text engine for an item: the item's tokens
// joined by spaces, so the engine's own tokenizer finds exactly the same words.
func FTSText(texts []string) string {
	var b strings.Builder
	for _, t := range texts {
		for _, tok := range Tokenize(t) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(tok)
		}
	}
	return b.String()
}

// RankAndPage orders search results the way every backend must: by score (highest first), then
// newest update, then namespace and key; then applies offset and limit.
func RankAndPage(c []store.SearchItem, offset, limit int) []store.SearchItem {
	slicesSortFunc(c, func(a, b store.SearchItem) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		if !a.UpdatedAt.Equal(b.UpdatedAt) {
			if a.UpdatedAt.After(b.UpdatedAt) {
				return -1
			}
			return 1
		}
		if c := strings.Compare(store.JoinNamespace(a.Namespace), store.JoinNamespace(b.Namespace)); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	if offset >= len(c) {
		return []store.SearchItem{}
	}
	c = c[offset:]
	if len(c) > limit {
		c = c[:limit]
	}
	return c
}

// Expired reports whether an item with this expiry is gone at now.
func Expired(expiresAt, now time.Time) bool { return !expiresAt.IsZero() && !now.Before(expiresAt) }

// CheckGet validates a get request.
func CheckGet(op string, ns []string, key string) error {
	if err := store.ValidateNamespace(op, ns); err != nil {
		return err
	}
	return store.ValidateKey(op, key)
}

// CheckSearch validates a search request, fills in its default limit and compiles its filter.
func CheckSearch(req *store.SearchRequest) (*store.Filter, error) {
	if err := store.ValidatePrefix("search", "namespace prefix", req.NamespacePrefix); err != nil {
		return nil, err
	}
	if req.Limit < 0 || req.Offset < 0 {
		return nil, inputErr("search", "limit/offset", "is negative", "use 0 for the default limit of 10", store.ErrInvalidValue)
	}
	if req.Limit == 0 {
		req.Limit = store.DefaultSearchLimit
	}
	return store.CompileFilter(req.Filter)
}

// CheckListNamespaces validates a list request and fills in its default limit.
func CheckListNamespaces(req *store.ListNamespacesRequest) error {
	if err := store.ValidatePrefix("list namespaces", "prefix", req.Prefix); err != nil {
		return err
	}
	if err := store.ValidatePrefix("list namespaces", "suffix", req.Suffix); err != nil {
		return err
	}
	if req.Limit < 0 || req.Offset < 0 || req.MaxDepth < 0 {
		return inputErr("list namespaces", "limit/offset/max depth", "is negative", "use 0 for the defaults", store.ErrInvalidValue)
	}
	if req.Limit == 0 {
		req.Limit = store.DefaultListLimit
	}
	return nil
}

// CollectNamespaces applies a ListNamespaces request to the namespaces of live items: match,
// truncate to MaxDepth, deduplicate, sort and page.
func CollectNamespaces(all [][]string, req store.ListNamespacesRequest) [][]string {
	seen := map[string]bool{}
	var out [][]string
	for _, ns := range all {
		if !store.MatchNamespace(ns, req.Prefix, req.Suffix) {
			continue
		}
		if req.MaxDepth > 0 && len(ns) > req.MaxDepth {
			ns = ns[:req.MaxDepth]
		}
		j := store.JoinNamespace(ns)
		if seen[j] {
			continue
		}
		seen[j] = true
		out = append(out, append([]string(nil), ns...))
	}
	sortNamespaces(out)
	if req.Offset >= len(out) {
		return [][]string{}
	}
	out = out[req.Offset:]
	if req.Limit > 0 && len(out) > req.Limit {
		out = out[:req.Limit]
	}
	return out
}

func sortNamespaces(nss [][]string) {
	slicesSortFunc(nss, func(a, b []string) int {
		for i := 0; i < len(a) && i < len(b); i++ {
			if c := strings.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
		return len(a) - len(b)
	})
}

func inputErr(op, field, problem, hint string, kind error) error {
	return &store.InputError{Op: op, Field: field, Problem: problem, Hint: hint, Kind: kind}
}
