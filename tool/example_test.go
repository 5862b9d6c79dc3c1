package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

func ExampleNew() {
	type args struct {
		City  string `json:"city" jsonschema:"the city to forecast"`
		Units string `json:"units,omitempty" enum:"metric,imperial" default:"metric"`
		Days  int    `json:"days" minimum:"1" maximum:"14"`
	}
	forecast := tool.Must(tool.New("forecast", "Weather forecast for a city.",
		func(ctx context.Context, a args) (string, error) {
			return fmt.Sprintf("%d days of sun in %s (%s)", a.Days, a.City, a.Units), nil
		}))

	res, err := forecast.Call(context.Background(), json.RawMessage(`{"city":"Lisbon","days":3}`))
	fmt.Println(res.Text(), err)

	_, err = forecast.Call(context.Background(), json.RawMessage(`{"city":5,"days":30}`))
	fmt.Println(err)
	// Output:
	// 3 days of sun in Lisbon (metric) <nil>
	// tool: invalid arguments for "forecast": city: expected a string, got integer 5; days: must be at most 14, got 30. Correct the arguments to match the tool's parameters schema and call it again.
}

func ExampleExecutor_Run() {
	type greetArgs struct {
		Name string `json:"name"`
	}
	greet := tool.Must(tool.New("greet", "Greets someone.", func(ctx context.Context, a greetArgs) (string, error) {
		info, _ := tool.CallInfoFrom(ctx)
		return "hello " + a.Name + " from " + info.Tenant, nil
	}))
	exec, err := tool.NewExecutor([]tool.Tool{greet}, nil)
	if err != nil {
		panic(err)
	}
	ctx := tool.WithCallInfo(context.Background(), tool.CallInfo{User: "ana", Tenant: "acme"})
	outs, err := exec.Run(ctx, []message.ToolCall{
		{ID: "call_1", Name: "greet", Arguments: json.RawMessage(`{"name":"Bo"}`)},
		{ID: "call_2", Name: "greeet", Arguments: json.RawMessage(`{}`)},
		{ID: "call_3", Name: "greet", Arguments: json.RawMessage(`{"name":`)},
	})
	if err != nil {
		panic(err)
	}
	for _, m := range tool.Messages(outs) {
		fmt.Printf("%s error=%v: %s\n", m.ToolCallID, m.IsError, m.Content)
	}
	// Output:
	// call_1 error=false: hello Bo from acme
	// call_2 error=true: tool: unknown tool: "greeet". Did you mean "greet"? Call one of: greet
	// call_3 error=true: tool: invalid arguments for "greet": arguments are not valid JSON (unexpected end of JSON input): {"name":. Correct the arguments to match the tool's parameters schema and call it again.
}

func ExampleRedactor() {
	r, err := tool.NewRedactor(&tool.RedactOptions{Secrets: []string{"correct-horse-battery"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Redact("login with correct-horse-battery, key sk-proj-0123456789abcdefghijklmn"))
	// Output:
	// login with [REDACTED], key [REDACTED]
}

func ExampleTenants() {
	var tenants tool.Tenants
	tenants.Disable(tool.AllTenants, "refund") // nobody, unless enabled below
	tenants.Enable("acme", "refund")
	fmt.Println(tenants.Enabled("acme", "refund"), tenants.Enabled("globex", "refund"), tenants.Enabled("globex", "search"))
	// Output:
	// true false true
}
