package embed

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Embedder turns texts into vectors, one per text, all of the same length. It has the same
// shape as store.Embedder, so any Embedder here plugs into a store's IndexConfig.
//
// Implementations may be called concurrently.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Sentinel errors.
var (
	// ErrMissingKey: a provider needs an API key and none was given or found in the environment.
	ErrMissingKey = errors.New("embed: missing API key")
	// ErrProvider: the provider answered with an error or an unusable body.
	ErrProvider = errors.New("embed: provider error")
)

// LocalOptions configure the local embedder. The zero value is the documented default.
type LocalOptions struct {
	// Dims is the vector length; zero means 256.
	Dims int
	// NGram is the length of the character n-grams hashed beside whole words; zero means 3.
	NGram int
}

// Local is an embedder that needs no network, no key and no model file: it hashes words, word
// pairs and character n-grams into a fixed number of signed buckets (the "hashing trick") and
// normalizes the result. Equal texts always give equal vectors on every machine; texts that
// share words or word parts are near each other. It does not know synonyms: "car" and
// "automobile" are far apart. Use a model provider when meaning matters more than wording.
type Local struct {
	dims, ngram int
}

// NewLocal returns the local embedder. opts may be nil.
func NewLocal(opts *LocalOptions) *Local {
	var o LocalOptions
	if opts != nil {
		o = *opts
	}
	if o.Dims <= 0 {
		o.Dims = 256
	}
	if o.NGram <= 0 {
		o.NGram = 3
	}
	return &Local{dims: o.Dims, ngram: o.NGram}
}

// Dims returns the vector length.
func (l *Local) Dims() int { return l.dims }

// Embed implements Embedder.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = l.vector(t)
	}
	return out, nil
}

var localStop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("a an and are as at be by for from has in is it its of on or that the to was were will with this these those i you we they he she") {
		m[w] = true
	}
	return m
}()

func (l *Local) vector(text string) []float32 {
	v := make([]float32, l.dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	prev := ""
	for _, w := range words {
		if localStop[w] {
			prev = ""
			continue
		}
		l.add(v, "w\x00"+w, 1)
		if prev != "" {
			l.add(v, "b\x00"+prev+" "+w, 0.5)
		}
		prev = w
		r := []rune("<" + w + ">")
		if len(r) <= l.ngram {
			continue
		}
		n := len(r) - l.ngram + 1
		weight := float32(1.0 / math.Sqrt(float64(n)))
		for i := 0; i < n; i++ {
			l.add(v, "c\x00"+string(r[i:i+l.ngram]), weight)
		}
	}
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		// An empty or all-stop-word text still gets a unit vector, the same for every such text.
		v[0] = 1
		return v
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

func (l *Local) add(v []float32, feature string, weight float32) {
	h := fnv.New64a()
	h.Write([]byte(feature))
	sum := h.Sum64()
	idx := int(sum % uint64(l.dims))
	if sum>>63 == 1 {
		weight = -weight
	}
	v[idx] += weight
}
