// Package react is the example trellis runs before any application is chosen: a ReAct agent
// with two small tools, a unit converter and a world clock, that works on the offline model.
package react

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool"
)

// ConvertArgs are the converter's arguments.
type ConvertArgs struct {
	Value float64 `json:"value" jsonschema:"the amount to convert"`
	From  string  `json:"from" jsonschema:"the unit to convert from" enum:"km,mi,kg,lb,c,f"`
	To    string  `json:"to" jsonschema:"the unit to convert to" enum:"km,mi,kg,lb,c,f"`
}

// ClockArgs are the clock's arguments.
type ClockArgs struct {
	City string `json:"city" jsonschema:"the city whose local time to tell" enum:"London,New York,Tokyo,Lisbon,Sydney"`
}

var zones = map[string]string{
	"London": "Europe/London", "New York": "America/New_York", "Tokyo": "Asia/Tokyo",
	"Lisbon": "Europe/Lisbon", "Sydney": "Australia/Sydney",
}

// Tools returns the example's tools. now is the clock (time.Now when nil).
func Tools(now func() time.Time) ([]tool.Tool, error) {
	if now == nil {
		now = time.Now
	}
	convert, err := tool.New("convert_units", "Convert a value between units: kilometres and miles, kilograms and pounds, celsius and fahrenheit.",
		func(_ context.Context, a ConvertArgs) (string, error) {
			v, err := Convert(a.Value, a.From, a.To)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%g %s is %.2f %s", a.Value, a.From, v, a.To), nil
		})
	if err != nil {
		return nil, err
	}
	clock, err := tool.New("world_clock", "Tell the local time and date in a city.",
		func(_ context.Context, a ClockArgs) (string, error) {
			zone, ok := zones[a.City]
			if !ok {
				return "", fmt.Errorf("unknown city %q", a.City)
			}
			loc, err := time.LoadLocation(zone)
			if err != nil {
				loc = time.UTC
			}
			return fmt.Sprintf("It is %s in %s.", now().In(loc).Format("15:04 on Monday 2 January 2006"), a.City), nil
		})
	if err != nil {
		return nil, err
	}
	return []tool.Tool{convert, clock}, nil
}

// Convert converts v between the units the example knows.
func Convert(v float64, from, to string) (float64, error) {
	from, to = strings.ToLower(from), strings.ToLower(to)
	if from == to {
		return v, nil
	}
	switch from + ">" + to {
	case "km>mi":
		return v / 1.609344, nil
	case "mi>km":
		return v * 1.609344, nil
	case "kg>lb":
		return v / 0.45359237, nil
	case "lb>kg":
		return v * 0.45359237, nil
	case "c>f":
		return v*9/5 + 32, nil
	case "f>c":
		return (v - 32) * 5 / 9, nil
	}
	return 0, fmt.Errorf("cannot convert %s to %s (known pairs: km/mi, kg/lb, c/f)", from, to)
}

// ApproveKey is the configuration key that makes the example ask before using a tool: true asks
// before every tool call, a list of tool names before those tools. The run then pauses at an
// interrupt in the Agent Inbox schema (accept, edit, respond or ignore), so approvals can be
// tried from the SDK, the web UI and trellis chat:
//
//	{"assistant_id": "example", "config": {"configurable": {"approve_tools": true}}, ...}
const ApproveKey = "approve_tools"

// asksApproval reports whether the run's configuration asks for approval of call.
func asksApproval(ctx context.Context, call message.ToolCall) bool {
	info, _ := graph.InfoFrom(ctx)
	switch v := info.Config[ApproveKey].(type) {
	case bool:
		return v
	case string:
		return v == "true" || v == call.Name
	case []any:
		for _, n := range v {
			if n == call.Name {
				return true
			}
		}
	case []string:
		return slices.Contains(v, call.Name)
	}
	return false
}

// New builds the example agent on m.
func New(m model.Model, opts graph.CompileOptions) (*graph.Compiled[react.State], error) {
	tools, err := Tools(nil)
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "example"
	}
	return react.New(m, &react.Options{
		Tools:     tools,
		Prompt:    "You are a helpful assistant with a unit converter and a world clock. Use them when they help.",
		ApproveIf: asksApproval,
		Compile:   opts,
	})
}
