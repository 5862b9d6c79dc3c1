package react_test

import (
	"context"
	"fmt"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/tool"
)

// A ReAct agent on the offline model: it picks the tool from its schema, calls it, and answers
// from the result.
func ExampleNew() {
	price := tool.Must(tool.New("get_price", "Returns the average day-ahead price of a hub zone in a year.",
		func(_ context.Context, a struct {
			Zone string `json:"zone" jsonschema:"the hub zone, such as NP15"`
			Year int    `json:"year" jsonschema:"the year"`
		}) (string, error) {
			return fmt.Sprintf("%s averaged $41.20/MWh in %d.", a.Zone, a.Year), nil
		}))
	a, err := react.New(offline.New(nil), &react.Options{Tools: []tool.Tool{price}})
	if err != nil {
		panic(err)
	}
	out, err := a.Invoke(context.Background(), react.State{Messages: []message.Message{message.User("What was the NP15 price in 2025?")}})
	if err != nil {
		panic(err)
	}
	for _, m := range out.Messages {
		for _, c := range m.ToolCalls {
			fmt.Printf("called %s %s\n", c.Name, c.Arguments)
		}
	}
	fmt.Println(out.Messages[len(out.Messages)-1].Text())
	// Output:
	// called get_price {"year":2025,"zone":"NP15"}
	// Here is what I found for "What was the NP15 price in 2025?".
	//
	// NP15 averaged $41.20/MWh in 2025.
	//
	// [offline model]
}
