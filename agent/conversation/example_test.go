package conversation_test

import (
	"context"
	"fmt"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
)

// Compaction keeps the latest turn and replaces the rest with a recap.
func ExampleCompact() {
	msgs := []message.Message{
		message.System("You answer price questions."),
		message.User("What was NP15 in 2024?"),
		message.Assistant("NP15 averaged $38.10/MWh in 2024."),
		message.User("And in 2025?"),
		message.Assistant("NP15 averaged $41.20/MWh in 2025."),
	}
	out, err := conversation.Compact(context.Background(), msgs, &conversation.CompactOptions{Model: offline.New(nil), KeepTurns: 1})
	if err != nil {
		panic(err)
	}
	for _, m := range out {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// system: You answer price questions.
	// system: Recap of the earlier conversation:
	// - User: What was NP15 in 2024?
	// - Assistant: NP15 averaged $38.10/MWh in 2024.
	// user: And in 2025?
	// assistant: NP15 averaged $41.20/MWh in 2025.
}
