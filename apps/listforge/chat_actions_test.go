package listforge_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/store"
)

// A price question produces a suggest_price action at the research's target; applying it sets
// the item's price, audited with the reason, once; a count question is answered with counts.
func TestChatSuggestsAPrice(t *testing.T) {
	t.Parallel()
	e := serve(t, t.TempDir(), "", listforge.Options{})
	key := "key-acme-ana-0000000"
	it := e.demoItem(key, catalog.DemoUPC)
	var started struct{ JobID string }
	e.do(key, "POST", "/api/v1/items/"+it.ID+"/research", nil, &started)
	progress(t, e, key, started.JobID)
	var latest store.Research
	e.do(key, "GET", "/api/v1/items/"+it.ID+"/research/latest", nil, &latest)
	target := 0.0
	for _, b := range latest.Data.PriceBands {
		if b.Label == "target" {
			target = b.Amount
		}
	}
	var sess struct{ SessionID string }
	e.do(key, "POST", "/api/v1/items/"+it.ID+"/chat/sessions", nil, &sess)
	c := e.dial(key, listforge.ChatWSPath)
	send(t, c, "join_session", map[string]string{"sessionId": sess.SessionID})
	read(t, c)
	turn := func(text string) store.Message {
		send(t, c, "send_message", map[string]string{"sessionId": sess.SessionID, "content": text})
		for {
			f := read(t, c)
			if f.Event == "message" {
				var m store.Message
				_ = json.Unmarshal(f.Data, &m)
				if m.Role == "assistant" {
					return m
				}
			}
		}
	}
	m := turn("What should I ask for it?")
	if len(m.Actions) == 0 || m.Actions[0].Type != "suggest_price" || m.Actions[0].Payload["amount"] != target || target == 0 {
		t.Fatalf("answer %q actions %+v, want suggest_price %v", m.Content, m.Actions, target)
	}
	send(t, c, "apply_action", map[string]any{"messageId": m.ID, "actionIndex": 0})
	var res listforge.ActionResult
	_ = json.Unmarshal(read(t, c).Data, &res)
	if !res.Success || res.Field != "defaultPrice" || res.Item == nil || *res.Item.DefaultPrice != target {
		t.Fatalf("apply: %+v", res)
	}
	send(t, c, "apply_action", map[string]any{"messageId": m.ID, "actionIndex": 0})
	_ = json.Unmarshal(read(t, c).Data, &res)
	if res.Success || !strings.Contains(res.Error, "already") {
		t.Fatalf("second apply: %+v", res)
	}
	var trail []store.Audit
	e.do(key, "GET", "/api/v1/items/"+it.ID+"/audit", nil, &trail)
	if len(trail) != 1 || trail[0].Field != "defaultPrice" || !strings.Contains(trail[0].Reason, "research target price") {
		t.Fatalf("audit %+v", trail)
	}
	m = turn("How many comparables did you find?")
	cs := latest.Data.Comparables
	if cs == nil || !strings.Contains(m.Content, "comparables:") || strings.Contains(m.Content, "- ") {
		t.Fatalf("count: %q (summary %+v)", m.Content, cs)
	}
	m = turn("Why this price?")
	if !strings.Contains(m.Content, "same variant") {
		t.Fatalf("why: %q", m.Content)
	}
}

// A seller's correction over the WebSocket: the proposal is the title with the corrected
// storage (not the message as the title), applied only when the seller applies it.
func TestChatCorrectionProposesTitle(t *testing.T) {
	t.Parallel()
	e := serve(t, t.TempDir(), "", listforge.Options{})
	key := "key-acme-ana-0000000"
	var it store.Item
	e.do(key, "POST", "/api/v1/items", map[string]any{"title": "Galaxy S21 128 gig phantom gray", "condition": "Used"}, &it)
	var sess struct{ SessionID string }
	e.do(key, "POST", "/api/v1/items/"+it.ID+"/chat/sessions", nil, &sess)
	c := e.dial(key, listforge.ChatWSPath)
	send(t, c, "join_session", map[string]string{"sessionId": sess.SessionID})
	read(t, c)
	send(t, c, "send_message", map[string]string{"sessionId": sess.SessionID, "content": "oh wait, it's actually the 256GB one"})
	var m store.Message
	for m.Role != "assistant" {
		if f := read(t, c); f.Event == "message" {
			_ = json.Unmarshal(f.Data, &m)
		}
	}
	want := "Galaxy S21 256GB phantom gray"
	if len(m.Actions) != 1 || m.Actions[0].Payload["field"] != "title" || m.Actions[0].Payload["value"] != want {
		t.Fatalf("answer %q actions %+v, want the title %q", m.Content, m.Actions, want)
	}
	var before store.Item
	e.do(key, "GET", "/api/v1/items/"+it.ID, nil, &before)
	if before.Title != it.Title {
		t.Fatalf("changed before it was applied: %q", before.Title)
	}
	send(t, c, "apply_action", map[string]any{"messageId": m.ID, "actionIndex": 0})
	var res listforge.ActionResult
	_ = json.Unmarshal(read(t, c).Data, &res)
	if !res.Success || res.Item == nil || res.Item.Title != want {
		t.Fatalf("apply: %+v", res)
	}
}
