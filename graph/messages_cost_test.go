package graph_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// bytesPerTurn runs a two-node conversation of n turns (one message appended by each node) and
// returns the bytes allocated per turn.
func bytesPerTurn(t *testing.T, n int) float64 {
	type M struct {
		Messages []message.Message `json:"messages" reduce:"messages"`
	}
	text := strings.Repeat("x", 200)
	g := graph.New[M]()
	g.AddNode("user", func(context.Context, M) (M, error) { return M{Messages: []message.Message{message.User(text)}}, nil })
	g.AddNode("assistant", func(context.Context, M) (M, error) {
		return M{Messages: []message.Message{message.Assistant(text)}}, nil
	})
	g.AddEdge(graph.START, "user").AddEdge("user", "assistant")
	g.AddConditionalEdges("assistant", func(_ context.Context, s M) (string, error) {
		if len(s.Messages) >= 2*n {
			return graph.END, nil
		}
		return "user", nil
	}, nil)
	c := compile(t, g)
	var before, after runtime.MemStats
	const runs = 3
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		out, err := c.Invoke(bg, M{}, graph.WithRecursionLimit(4*n))
		if err != nil || len(out.Messages) != 2*n {
			t.Fatalf("%d turns: %v, %d messages", n, err, len(out.Messages))
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(runs*n)
}

// TestMessagesChannelAppendsWithoutCopyingHistory: the messages channel and its reducer append
// to the history they hold (nodes get clipped views of it, so their own appends copy), so the
// bytes a turn allocates do not grow with the conversation. Copying the history at every step
// would make a turn of a 1,000-turn conversation cost ten times one of a 100-turn one.
// Not parallel: it reads the process's allocation counters.
func TestMessagesChannelAppendsWithoutCopyingHistory(t *testing.T) {
	small, large := bytesPerTurn(t, 100), bytesPerTurn(t, 1000)
	if large > 2*small {
		t.Fatalf("bytes per turn: %.0f at 100 turns, %.0f at 1000: the history is being copied", small, large)
	}
	t.Logf("bytes per turn: %.0f at 100 turns, %.0f at 1000", small, large)
}
