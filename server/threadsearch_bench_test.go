package server

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkThreadSearch searches 2,000 threads, each holding a 20 KB state, for the ten newest
// of one owner, as a UI listing a user's conversations does (SQLite).
func BenchmarkThreadSearch(b *testing.B) {
	bd := setup(b)
	topic := strings.Repeat("x", 20<<10)
	for i := range 2000 {
		id := bd.newThread(map[string]any{"graph_id": "flow", "owner": fmt.Sprintf("user-%d", i%20)})
		bd.mustDo("POST", "/threads/"+id+"/state", map[string]any{"values": map[string]any{"topic": topic}, "as_node": "plan"}, nil, 200)
	}
	q := map[string]any{"metadata": map[string]any{"owner": "user-7"}, "limit": 10}
	b.ResetTimer()
	for b.Loop() {
		var got []Thread
		bd.mustDo("POST", "/threads/search", q, &got, 200)
		if len(got) != 10 {
			b.Fatalf("found %d", len(got))
		}
	}
}
