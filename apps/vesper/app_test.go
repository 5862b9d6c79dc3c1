package vesper

import (
	"context"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

// Open loads the warehouse into the data directory on first start and
// reuses it on the second.
func TestOpenLoadsOnceAndAnswers(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for i := range 2 {
		o, err := open(ctx, openConfig{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		st, err := o.App.Graph.Invoke(tool.WithCallInfo(ctx, tool.CallInfo{Tenant: "vesper", User: "u", Permissions: []string{"*"}}),
			supervisor.State{Messages: []message.Message{message.User("Show me all projects that are off track (red)")}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(st.Answer, "There are **3 projects**") || !strings.Contains(st.Answer, "Portfolio View") {
			t.Fatalf("start %d: %s", i+1, st.Answer)
		}
		// "Last week" is the generated data's last week, whatever today is.
		st, err = o.App.Graph.Invoke(tool.WithCallInfo(ctx, tool.CallInfo{Tenant: "vesper", User: "u", Permissions: []string{"*"}}),
			supervisor.State{Messages: []message.Message{message.User("What milestone dates changed in the last week?")}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(st.Answer, "**5 milestone date changes** recorded in the last 7 days") {
			t.Fatalf("start %d: %s", i+1, st.Answer)
		}
		o.Warehouse.Close()
	}
	if app := App(); app.Name != "vesper" || app.Build == nil {
		t.Fatalf("app %+v", app)
	}
}
