package store

import (
	"context"
	"log/slog"
	"time"
)

// Item is one stored value: a JSON object under a namespace and a key.
type Item struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	// ExpiresAt is when the item disappears; zero when it has no TTL.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// SearchItem is an item found by [Store.Search], with its relevance.
type SearchItem struct {
	Item
	// Score is the relevance to the query, higher is better: the cosine similarity blended with the
	// share of query terms found in the indexed text when an embedder is configured, the share of
	// query terms alone otherwise. Zero when the search had no query.
	Score float64 `json:"score"`
}

// PutRequest stores Value under Namespace and Key, replacing any item already there.
type PutRequest struct {
	Namespace []string
	Key       string
	Value     map[string]any
	// Index lists the fields of Value whose text is indexed for search, as paths: "text",
	// "author.name", "sections[*].body", or "$" for the whole value. Nil means the store's
	// default ([IndexConfig.Fields], or "$").
	Index []string
	// NoIndex keeps the item out of full-text and vector search; it is still found by
	// namespace and filter.
	NoIndex bool
	// TTL is how long the item lives after this put (and after each read that refreshes it).
	// Zero means the store's [Config.DefaultTTL]; a negative TTL is an error.
	TTL time.Duration
}

// GetRequest reads one item.
type GetRequest struct {
	Namespace []string
	Key       string
	// RefreshTTL overrides [Config.NoRefreshOnRead] for this read when not nil.
	RefreshTTL *bool
}

// DeleteRequest removes one item. Deleting an item that does not exist is not an error.
type DeleteRequest struct {
	Namespace []string
	Key       string
}

// SearchRequest finds items under a namespace prefix.
type SearchRequest struct {
	// NamespacePrefix selects items whose namespace starts with these labels; empty means all.
	NamespacePrefix []string
	// Filter keeps items whose value matches, see [CompileFilter] for the operators.
	Filter map[string]any
	// Query ranks the items by relevance (full text, and vectors when an embedder is configured)
	// and keeps those that match it. Empty means no ranking: newest first.
	Query string
	// Limit is the most items returned; zero means 10.
	Limit int
	// Offset skips that many items of the ranked result.
	Offset int
	// RefreshTTL overrides [Config.NoRefreshOnRead] for the items returned when not nil.
	RefreshTTL *bool
}

// ListNamespacesRequest lists the distinct namespaces that hold at least one live item.
type ListNamespacesRequest struct {
	// Prefix keeps namespaces that start with these labels; "*" matches any one label.
	Prefix []string
	// Suffix keeps namespaces that end with these labels; "*" matches any one label.
	Suffix []string
	// MaxDepth truncates each namespace to that many labels (the results stay distinct); zero
	// means no truncation.
	MaxDepth int
	// Limit is the most namespaces returned; zero means 100.
	Limit int
	// Offset skips that many namespaces of the sorted result.
	Offset int
}

// Store is long-term memory: JSON items in namespaces, found by key, by filter and by search.
//
// Every method may be called concurrently by any number of goroutines.
type Store interface {
	Put(ctx context.Context, req PutRequest) error
	// Get returns the item, or an error that matches [ErrNotFound].
	Get(ctx context.Context, req GetRequest) (*Item, error)
	Delete(ctx context.Context, req DeleteRequest) error
	Search(ctx context.Context, req SearchRequest) ([]SearchItem, error)
	ListNamespaces(ctx context.Context, req ListNamespacesRequest) ([][]string, error)
}

// Sweeper removes expired items. Every backend implements it; [Config.SweepInterval] makes the
// backend call it in the background. It may be called concurrently with any other method.
type Sweeper interface {
	// Sweep deletes the items whose TTL has passed and returns how many it deleted.
	Sweep(ctx context.Context) (int, error)
}

// Embedder turns texts into vectors, one per text, all of the same length. The embed package
// provides implementations; any type with this method will do.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// IndexConfig turns on semantic search.
type IndexConfig struct {
	// Embedder makes the vectors. Required.
	Embedder Embedder
	// Dims is the length of every vector. Required: a vector of another length is an error.
	Dims int
	// Fields are the default paths to index when a put does not name its own; nil means "$",
	// the whole value.
	Fields []string
	// TextWeight is the share of the score given to the full-text match, the rest going to the
	// cosine similarity. Zero means 0.3; a negative value means 0 (pure vector ranking).
	TextWeight float64
}

// Config holds what every backend shares. The zero Config is a store without vectors or TTL.
type Config struct {
	// Index turns on vector search; nil means full-text search only.
	Index *IndexConfig
	// DefaultTTL applies to puts without their own TTL; zero means items never expire.
	DefaultTTL time.Duration
	// NoRefreshOnRead stops Get and Search from restarting the TTL of the items they return.
	NoRefreshOnRead bool
	// SweepInterval runs [Sweeper.Sweep] in the background at that interval until the store is
	// closed; zero means no background sweep (expired items are still invisible).
	SweepInterval time.Duration
	// MaxValueBytes is the largest JSON-encoded value accepted; zero means 1 MiB.
	MaxValueBytes int
	// Now is the clock; nil means time.Now. Tests pass a fake one to exercise TTLs.
	Now func() time.Time
	// Logger receives the backend's notices (which vector search is in use, sweeps); nil means
	// slog.Default().
	Logger *slog.Logger
}

// Defaults applied by [Config.WithDefaults].
const (
	DefaultMaxValueBytes  = 1 << 20
	DefaultSearchLimit    = 10
	DefaultListLimit      = 100
	DefaultTextWeight     = 0.3
	MaxLabelBytes         = 256
	MaxKeyBytes           = 1024
	MaxNamespaceDepth     = 32
	namespaceSeparatorStr = "\x1f"
)

// WithDefaults returns c with its zero fields replaced by their documented defaults, or an error
// that says which field is wrong.
func (c Config) WithDefaults() (Config, error) {
	if c.MaxValueBytes == 0 {
		c.MaxValueBytes = DefaultMaxValueBytes
	}
	if c.MaxValueBytes < 0 {
		return c, &ConfigError{Field: "MaxValueBytes", Problem: "is negative", Hint: "use 0 for the 1 MiB default"}
	}
	if c.DefaultTTL < 0 {
		return c, &ConfigError{Field: "DefaultTTL", Problem: "is negative", Hint: "use 0 for items that never expire"}
	}
	if c.SweepInterval < 0 {
		return c, &ConfigError{Field: "SweepInterval", Problem: "is negative", Hint: "use 0 to sweep only when Sweep is called"}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Index != nil {
		ix := *c.Index
		if ix.Embedder == nil {
			return c, &ConfigError{Field: "Index.Embedder", Problem: "is nil", Hint: "set an embedder (embed.NewLocal works offline) or leave Index nil for full-text search only"}
		}
		if ix.Dims <= 0 {
			return c, &ConfigError{Field: "Index.Dims", Problem: "must be positive", Hint: "set it to the length of the embedder's vectors"}
		}
		if len(ix.Fields) == 0 {
			ix.Fields = []string{"$"}
		}
		for _, f := range ix.Fields {
			if _, err := ParsePath(f); err != nil {
				return c, &ConfigError{Field: "Index.Fields", Problem: err.Error(), Hint: `use paths such as "text", "a.b" or "items[*].name"`}
			}
		}
		switch {
		case ix.TextWeight == 0:
			ix.TextWeight = DefaultTextWeight
		case ix.TextWeight < 0:
			ix.TextWeight = 0
		case ix.TextWeight > 1:
			return c, &ConfigError{Field: "Index.TextWeight", Problem: "is above 1", Hint: "it is a share between 0 and 1"}
		}
		c.Index = &ix
	}
	return c, nil
}

// Refresh reports whether a read with this override refreshes TTLs under c.
func (c Config) Refresh(override *bool) bool {
	if override != nil {
		return *override
	}
	return !c.NoRefreshOnRead
}

// TTLFor returns the TTL a put gets: its own, or the default.
func (c Config) TTLFor(req PutRequest) time.Duration {
	if req.TTL > 0 {
		return req.TTL
	}
	return c.DefaultTTL
}
