package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/store"
)

// Episode is what happened in one thread or session.
type Episode struct {
	// Key identifies the episode in its namespace; empty means Thread (one episode per thread,
	// replaced when saved again), or a new time-based key when Thread is empty too.
	Key string `json:"key,omitempty"`
	// Thread is the thread or session the episode comes from.
	Thread string `json:"thread,omitempty"`
	// Text is what is searched: a summary of what was asked, done and learned.
	Text string `json:"text"`
	// Data holds anything else the application keeps with it.
	Data      map[string]any `json:"data,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	// Score is the similarity to the query, on results of a search.
	Score float64 `json:"-"`
}

// SaveEpisode stores e under ns (label "episodes") and returns its key.
func SaveEpisode(ctx context.Context, st store.Store, ns []string, e Episode) (string, error) {
	if strings.TrimSpace(e.Text) == "" {
		return "", errors.New("memory: the episode has no text; summarize the thread first (see Summarize)")
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now().UTC()
	}
	key := e.Key
	if key == "" {
		key = e.Thread
	}
	if key == "" {
		key = "ep-" + strconv.FormatInt(e.CreatedAt.UnixNano(), 36)
	}
	if err := checkNS(ns, key); err != nil {
		return "", err
	}
	e.Key = key
	var value map[string]any
	if err := remarshal(e, &value); err != nil {
		return "", err
	}
	if err := st.Put(ctx, store.PutRequest{Namespace: child(ns, EpisodesLabel), Key: key, Value: value, Index: []string{"text"}}); err != nil {
		return "", fmt.Errorf("memory: saving episode %q: %w", key, err)
	}
	return key, nil
}

// SearchEpisodes returns the episodes under ns most similar to query, best first; limit zero
// means 5. Only episodes saved under exactly ns are returned.
func SearchEpisodes(ctx context.Context, st store.Store, ns []string, query string, limit int) ([]Episode, error) {
	items, err := search(ctx, st, ns, EpisodesLabel, query, nil, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Episode, 0, len(items))
	for _, it := range items {
		var e Episode
		if err := remarshal(it.Value, &e); err != nil {
			return nil, fmt.Errorf("memory: episode %q is malformed: %w", it.Key, err)
		}
		e.Score = it.Score
		out = append(out, e)
	}
	return out, nil
}

// search runs a store search under ns+label and keeps the items of exactly that namespace.
func search(ctx context.Context, st store.Store, ns []string, label, query string, filter map[string]any, limit int) ([]store.SearchItem, error) {
	if err := checkNS(ns, "-"); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 5
	}
	want := child(ns, label)
	items, err := st.Search(ctx, store.SearchRequest{NamespacePrefix: want, Query: query, Filter: filter, Limit: limit * 4})
	if err != nil {
		return nil, fmt.Errorf("memory: searching %v: %w", want, err)
	}
	out := items[:0]
	for _, it := range items {
		if slices.Equal(it.Namespace, want) {
			out = append(out, it)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Summary is a scored summary of past work.
type Summary struct {
	Key string `json:"key,omitempty"`
	// Text is the summary; it is what is searched.
	Text string `json:"text"`
	// Score rates how useful the summary will be later, 1 (not at all) to 5 (very).
	Score     int            `json:"score"`
	Thread    string         `json:"thread,omitempty"`
	Data      map[string]any `json:"data,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	// Similarity to the query, on results of a search.
	Similarity float64 `json:"-"`
}

// DefaultThreshold is the score a summary needs to be kept when the caller gives none.
const DefaultThreshold = 3

// SaveSummary stores s under ns (label "history") when s.Score is at least threshold (zero
// means [DefaultThreshold]) and reports whether it did. A score outside 1-5 is an error.
func SaveSummary(ctx context.Context, st store.Store, ns []string, s Summary, threshold int) (bool, error) {
	if s.Score < 1 || s.Score > 5 {
		return false, fmt.Errorf("memory: summary score %d is outside 1-5; score it with ScoreSummary", s.Score)
	}
	if threshold == 0 {
		threshold = DefaultThreshold
	}
	if strings.TrimSpace(s.Text) == "" {
		return false, errors.New("memory: the summary has no text")
	}
	if s.Score < threshold {
		return false, nil
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = time.Now().UTC()
	}
	if s.Key == "" {
		s.Key = "sum-" + strconv.FormatInt(s.CreatedAt.UnixNano(), 36)
	}
	if err := checkNS(ns, s.Key); err != nil {
		return false, err
	}
	var value map[string]any
	if err := remarshal(s, &value); err != nil {
		return false, err
	}
	if err := st.Put(ctx, store.PutRequest{Namespace: child(ns, HistoryLabel), Key: s.Key, Value: value, Index: []string{"text"}}); err != nil {
		return false, fmt.Errorf("memory: saving summary: %w", err)
	}
	return true, nil
}

// SearchSummaries returns the summaries under ns with a score of at least minScore, most
// similar to query first; limit zero means 5.
func SearchSummaries(ctx context.Context, st store.Store, ns []string, query string, minScore, limit int) ([]Summary, error) {
	var filter map[string]any
	if minScore > 0 {
		filter = map[string]any{"score": map[string]any{"$gte": minScore}}
	}
	items, err := search(ctx, st, ns, HistoryLabel, query, filter, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(items))
	for _, it := range items {
		var s Summary
		if err := remarshal(it.Value, &s); err != nil {
			return nil, fmt.Errorf("memory: summary %q is malformed: %w", it.Key, err)
		}
		s.Similarity = it.Score
		out = append(out, s)
	}
	return out, nil
}

// ScoreSchema is the structured-output schema [ScoreSummary] asks a model to fill.
var ScoreSchema = &model.Schema{Name: "usefulness_score", Description: "How useful a summary will be for answering later requests.", JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "score": {"type": "integer", "minimum": 1, "maximum": 5, "description": "1 = small talk or nothing reusable, 5 = concrete facts, figures and decisions worth recalling"},
    "reason": {"type": "string", "description": "one sentence"}
  },
  "required": ["score"]
}`)}

var reFigure = regexp.MustCompile(`\d`)

// ScoreSummary rates text 1-5 for later usefulness. With a model other than the offline one it
// asks the model ([ScoreSchema]); with nil or the offline model it scores deterministically:
// one point, plus one for a length over 60 characters, one for figures, one for a decision
// or preference word, one for over 200 characters; at most 5.
func ScoreSummary(ctx context.Context, m model.Model, text string) (int, error) {
	if m == nil || isOffline(m) {
		return heuristicScore(text), nil
	}
	resp, err := m.Generate(ctx, &model.Request{Schema: ScoreSchema, Messages: []message.Message{
		message.System("Rate how useful this summary will be for answering the same user's later requests."),
		message.User(text),
	}})
	if err != nil {
		return 0, fmt.Errorf("memory: scoring a summary: %w", err)
	}
	var out struct {
		Score int `json:"score"`
	}
	raw := resp.Structured
	if len(raw) == 0 {
		raw = json.RawMessage(resp.Message.Text())
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Score < 1 || out.Score > 5 {
		return 0, fmt.Errorf("memory: the model's score %s is not an integer from 1 to 5", raw)
	}
	return out.Score, nil
}

var decisionWords = []string{"decid", "chose", "prefer", "budget", "bought", "sold", "agreed", "plan", "orçamento", "prefer", "escolh", "decidi", "compr", "vend"}

func heuristicScore(text string) int {
	t := strings.ToLower(strings.TrimSpace(text))
	score := 1
	if len(t) > 60 {
		score++
	}
	if reFigure.MatchString(t) {
		score++
	}
	for _, w := range decisionWords {
		if strings.Contains(t, w) {
			score++
			break
		}
	}
	if len(t) > 200 {
		score++
	}
	return min(score, 5)
}
