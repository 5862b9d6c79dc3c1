package conversation_test

import (
	"context"
	"testing"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
)

// BenchmarkCompactIfNeededUnderBudget is the cost a turn pays to check its budget: counting a
// 50-turn conversation (201 messages) with the approximate counter.
func BenchmarkCompactIfNeededUnderBudget(b *testing.B) {
	msgs := chat(50)
	o := &conversation.CompactOptions{Model: scripted.New(), MaxTokens: 1 << 30}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, did, err := conversation.CompactIfNeeded(ctx, msgs, o); err != nil || did {
			b.Fatal(did, err)
		}
	}
}

// BenchmarkCompact compacts a 50-turn conversation with the offline model as summariser, so it
// measures trellis's own work (boundary, transcript, summary message) plus the offline model.
func BenchmarkCompact(b *testing.B) {
	msgs := chat(50)
	o := &conversation.CompactOptions{Model: offline.New(nil), KeepTurns: 3}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conversation.Compact(ctx, msgs, o); err != nil {
			b.Fatal(err)
		}
	}
}
