package offline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

// A made-up library's reply classifier: what a reply to a loan reminder asks for, as an enum a
// structured answer fills, taught by a pack's choices.
const replyPack = `{
  "name": "library-replies",
  "choices": [
    {"field": "action", "value": "renew", "examples": ["keep it longer", "extend the loan", "need more time"]},
    {"field": "action", "value": "return", "examples": ["bring it back", "drop it off", "finished reading"]},
    {"field": "channel", "value": "email", "examples": ["mail me", "write to me"]}
  ]
}`

var replySchema = &model.Schema{Name: "reply", JSON: json.RawMessage(`{"type":"object","properties":{
  "action":{"type":"string","enum":["other","renew","return"],"default":"other"},
  "channel":{"type":"string","enum":["email","phone",""]}},"required":["action"]}`)}

func TestChoicesTeachEnumValues(t *testing.T) {
	t.Parallel()
	p, err := offline.ParsePack([]byte(replyPack))
	if err != nil {
		t.Fatal(err)
	}
	m := offline.New(&offline.Options{Packs: []*offline.Pack{p}})
	bare := offline.New(nil)
	cases := []struct{ text, action, channel string }{
		{"Could I keep it a bit longer?", "renew", ""},
		{"please extend my loan", "renew", ""},
		{"could you extnd the loan", "renew", ""}, // a typo
		{"I'll bring the book back tomorrow", "return", ""},
		{"finished reading, will drop it off; mail me the receipt", "return", "email"},
		{"what are your opening hours?", "other", ""}, // no choice fits: the schema's default
	}
	for _, c := range cases {
		var got struct{ Action, Channel string }
		resp, err := m.Generate(context.Background(), &model.Request{Schema: replySchema, Messages: []message.Message{message.User(c.text)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(resp.Structured, &got); err != nil {
			t.Fatalf("%q: %v in %s", c.text, err, resp.Structured)
		}
		if got.Action != c.action || got.Channel != c.channel {
			t.Errorf("%q: %s, want action %q channel %q", c.text, resp.Structured, c.action, c.channel)
		}
	}
	// Without the pack, the model does not know what "keep it longer" means.
	resp, err := bare.Generate(context.Background(), &model.Request{Schema: replySchema, Messages: []message.Message{message.User("Could I keep it a bit longer?")}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Action string }
	_ = json.Unmarshal(resp.Structured, &got)
	if got.Action == "renew" {
		t.Errorf("the model without the pack picked renew: %s", resp.Structured)
	}
}

func TestChoiceValidation(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		`{"name":"x","choices":[{"examples":["a b"]}]}`,
		`{"name":"x","choices":[{"value":"a"}]}`,
	} {
		if _, err := offline.ParsePack([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
