package listforge

import (
	"context"
	"encoding/json"

	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/tool"
)

// The chat's tools: ChatTools read and change the caller's items and start research (the
// specification's §5.5); RouteTools are the requests a model picks from to say what a message
// asks for (Understand).

func callerOf(ctx context.Context) (store.Who, server.Principal) {
	info, _ := tool.CallInfoFrom(ctx)
	return store.Who{Org: info.Tenant, User: info.User}, server.Principal{Tenant: info.Tenant, User: info.User, Permissions: info.Permissions}
}

// ChatTools are the chat's tools (the specification's §5.5), over the caller's organisation.
type ChatTools struct{ a *app }

// GetItemSnapshot reads an item.
func (t ChatTools) GetItemSnapshot(ctx context.Context, w store.Who, itemID string) (*store.Item, error) {
	return t.a.st.GetItem(ctx, w, itemID)
}

// GetResearch reads the item's current research (nil when none).
func (t ChatTools) GetResearch(ctx context.Context, w store.Who, itemID string) (*store.Research, error) {
	return t.a.st.LatestResearch(ctx, w, itemID)
}

// GetEvidence reads the item's newest evidence records.
func (t ChatTools) GetEvidence(ctx context.Context, w store.Who, itemID string, limit int) ([]store.Evidence, error) {
	b, err := t.a.st.LatestEvidence(ctx, w, itemID, limit)
	if err != nil || b == nil {
		return nil, err
	}
	return b.Records, nil
}

// UpdateItemField changes one field with an audit reason (used when the user applies an action).
func (t ChatTools) UpdateItemField(ctx context.Context, w store.Who, itemID, field string, value any, reason string) (*store.Item, error) {
	return t.a.st.UpdateField(ctx, w, itemID, field, value, reason)
}

// StartResearchJob queues research for the item.
func (t ChatTools) StartResearchJob(ctx context.Context, p server.Principal, itemID, typ, priority string) (*store.ResearchRun, error) {
	return t.a.jobs.Start(ctx, p, itemID, typ, priority)
}

func (c *chatGraph) tools() ChatTools { return ChatTools{c.a} }

// topicTools are the tools of RouteTools that answer a question, by the topic they answer.
var topicTools = map[string]string{"suggest_price": "price", "count_comparables": "count", "explain_price": "why",
	"compare_price": "compare", "show_comparables": "comps", "demand": "demand", "missing_info": "missing", "identify_product": "identify"}

func routeTool(name, desc, params string) model.ToolSpec {
	return model.ToolSpec{Name: name, Description: desc, Parameters: json.RawMessage(params)}
}

const noParams = `{"type":"object","properties":{}}`

// RouteTools are the requests the chat understands, as the tools a model is asked to pick from
// (Understand): one per question topic, the field update, and fresh research. The price question
// comes first: a message that points to none is about the price.
var RouteTools = []model.ToolSpec{
	routeTool("suggest_price", "The price to list the item at: the recommended target, floor and ceiling.", noParams),
	routeTool("count_comparables", "How many comparable listings were found, kept, priced from and dropped, and why so few.", noParams),
	routeTool("explain_price", "Explain why the price is what it is: how the target was reached.", noParams),
	routeTool("compare_price", "Compare an asking price with the research's range: too high, too low or fair.",
		`{"type":"object","properties":{"price":{"type":"number","description":"the asking price to compare, when the message gives one"}}}`),
	routeTool("show_comparables", "Show the closest comparable sales and listings.", noParams),
	routeTool("demand", "How fast the item sells: demand, sell-through, days to sell, competition.", noParams),
	routeTool("missing_info", "What information is missing that would improve the research.", noParams),
	routeTool("identify_product", "Identify the product: its brand and model.", noParams),
	routeTool("update_item_field", "Change one field of the item (title, description, condition, price, status or currency) to a new value.",
		`{"type":"object","properties":{"field":{"type":"string","enum":["title","description","condition","price","status","currency"]},"becomes":{"type":"string","description":"what the field is to become"}},"required":["field","becomes"]}`),
	routeTool("start_research", "Start fresh research on the item: refresh the comparables and the price.", noParams),
}

// storeFields are the item fields update_item_field's field names.
var storeFields = map[string]string{"price": "defaultPrice", "status": "lifecycleStatus", "title": "title",
	"description": "description", "condition": "condition", "currency": "currency"}
