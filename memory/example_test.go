package memory_test

import (
	"context"
	"fmt"

	"github.com/trellis-go/trellis/memory"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/store/memstore"
)

// A fact is corrected, never dropped: the old budget stays in the fact's history.
func ExampleUpdateFacts() {
	ctx := context.Background()
	st, _ := memstore.New(nil)
	ns := []string{"rehab", "users", "ana"}
	for _, said := range []string{"My budget is 180.000€. I live in Lisbon.", "Actually, my budget is 250k."} {
		if _, err := memory.UpdateFacts(ctx, st, ns, "profile", []message.Message{message.User(said)}, nil); err != nil {
			fmt.Println(err)
			return
		}
	}
	doc, _ := memory.LoadFacts(ctx, st, ns, "profile")
	fmt.Println(doc.Text())
	fmt.Println(doc.Facts[0].Previous)
	// Output:
	// - Actually, my budget is 250k
	// - I live in Lisbon
	// [My budget is 180.000€]
}
