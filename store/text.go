package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

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

// HybridScore blends a cosine similarity with a text score under the index's TextWeight.
func (ix *IndexConfig) HybridScore(cosine, text float64) float64 {
	return (1-ix.TextWeight)*cosine + ix.TextWeight*text
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

// EmbedText embeds one text (a query, or the indexed text of one item) and checks the result.
func (ix *IndexConfig) EmbedText(ctx context.Context, text string) ([]float32, error) {
	vecs, err := ix.EmbedTexts(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}
