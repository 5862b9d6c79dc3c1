package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

func slicesSortFunc[S ~[]E, E any](s S, cmp func(a, b E) int) { slices.SortStableFunc(s, cmp) }

// Path is a parsed index path: field names, with "*" for every element of an array and a
// decimal index for one element.
type Path []string

// ParsePath parses an index path: "$" (the whole value), "text", "a.b", "items[*].name",
// "items[0]".
func ParsePath(p string) (Path, error) {
	if p == "$" {
		return Path{}, nil
	}
	if p == "" {
		return nil, fmt.Errorf("path is empty")
	}
	var out Path
	for _, seg := range strings.Split(p, ".") {
		name, rest, bracket := strings.Cut(seg, "[")
		if name == "" && rest == "" {
			return nil, fmt.Errorf("path %q has an empty segment", p)
		}
		if bracket && rest == "" {
			return nil, fmt.Errorf("path %q has an unclosed [", p)
		}
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil, fmt.Errorf("path %q has an unclosed [", p)
			}
			if idx != "*" {
				if _, err := strconv.Atoi(idx); err != nil {
					return nil, fmt.Errorf("path %q: [%s] is neither * nor an index", p, idx)
				}
			}
			out = append(out, "["+idx+"]")
			rest = strings.TrimPrefix(after, "[")
			if after != "" && !strings.HasPrefix(after, "[") {
				return nil, fmt.Errorf("path %q: unexpected %q after ]", p, after)
			}
		}
	}
	return out, nil
}

// IndexText returns the text of a value that is indexed under the given paths (nil means "$"),
// one string per field found, in path order. Strings are taken as they are; other values are
// written as JSON.
func IndexText(value map[string]any, paths []string) []string {
	if len(paths) == 0 {
		paths = []string{"$"}
	}
	var out []string
	for _, p := range paths {
		pp, err := ParsePath(p)
		if err != nil {
			continue
		}
		collect(value, pp, &out)
	}
	return out
}

func collect(v any, p Path, out *[]string) {
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

// HybridScore blends a cosine similarity with a text score under the index's TextWeight.
func (ix *IndexConfig) HybridScore(cosine, text float64) float64 {
	return (1-ix.TextWeight)*cosine + ix.TextWeight*text
}

// Candidate is an item a backend found for a search, with its score.
type Candidate struct {
	Item  Item
	Score float64
}

// RankAndPage orders search results the way every backend must: by score (highest first), then
// newest update, then namespace and key; then applies offset and limit.
func RankAndPage(c []SearchItem, offset, limit int) []SearchItem {
	slicesSortFunc(c, func(a, b SearchItem) int {
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
		if c := strings.Compare(JoinNamespace(a.Namespace), JoinNamespace(b.Namespace)); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	if offset >= len(c) {
		return []SearchItem{}
	}
	c = c[offset:]
	if len(c) > limit {
		c = c[:limit]
	}
	return c
}

// CheckVectors checks that the embedder returned one vector of the index's dimension per text.
func (ix *IndexConfig) CheckVectors(texts int, vecs [][]float32) error {
	if len(vecs) != texts {
		return fmt.Errorf("%w: the embedder returned %d vectors for %d texts", ErrEmbedding, len(vecs), texts)
	}
	for _, v := range vecs {
		if len(v) != ix.Dims {
			return &InputError{Op: "embed", Field: "vector", Problem: fmt.Sprintf("has %d dimensions, the index has %d", len(v), ix.Dims),
				Hint: "set IndexConfig.Dims to the embedder's output size; changing it needs a new index", Kind: ErrDimension}
		}
	}
	return nil
}

// EmbedTexts embeds texts in one call and checks the result.
func (ix *IndexConfig) EmbedTexts(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := ix.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEmbedding, err)
	}
	if err := ix.CheckVectors(len(texts), vecs); err != nil {
		return nil, err
	}
	return vecs, nil
}

// Expired reports whether an item with this expiry is gone at now.
func Expired(expiresAt, now time.Time) bool { return !expiresAt.IsZero() && !now.Before(expiresAt) }
