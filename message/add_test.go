package message_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/message"
)

func ids(msgs []message.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func TestAdd(t *testing.T) {
	base := []message.Message{
		{ID: "1", Role: message.RoleUser, Content: "one"},
		{ID: "2", Role: message.RoleAssistant, Content: "two"},
	}
	for _, tc := range []struct {
		name    string
		update  []message.Message
		wantIDs []string
		content map[string]string
	}{
		{"append new", []message.Message{{ID: "3", Role: message.RoleUser}}, []string{"1", "2", "3"}, nil},
		{"replace in place", []message.Message{{ID: "1", Role: message.RoleUser, Content: "uno"}}, []string{"1", "2"}, map[string]string{"1": "uno"}},
		{"replace and append", []message.Message{{ID: "3"}, {ID: "2", Content: "dos"}}, []string{"1", "2", "3"}, map[string]string{"2": "dos"}},
		{"remove", []message.Message{message.Remove("1")}, []string{"2"}, nil},
		{"remove all then add", []message.Message{{ID: "x"}, message.RemoveAll(), {ID: "4"}}, []string{"4"}, nil},
		{"remove then re-add keeps place", []message.Message{message.Remove("1"), {ID: "1", Content: "back"}}, []string{"1", "2"}, map[string]string{"1": "back"}},
		{"duplicate new IDs in one update", []message.Message{{ID: "5", Content: "a"}, {ID: "5", Content: "b"}}, []string{"1", "2", "5"}, map[string]string{"5": "b"}},
		{"nothing", nil, []string{"1", "2"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := slices.Clone(base)
			out, err := message.Add(list, tc.update)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(out), tc.wantIDs) {
				t.Fatalf("ids %q, want %q", ids(out), tc.wantIDs)
			}
			for _, m := range out {
				if want, ok := tc.content[m.ID]; ok && m.Content != want {
					t.Fatalf("message %s says %q, want %q", m.ID, m.Content, want)
				}
			}
			if !reflect.DeepEqual(list, base) {
				t.Fatalf("Add modified its input list: %+v", list)
			}
		})
	}
}

func TestAddFillsMissingIDs(t *testing.T) {
	update := []message.Message{message.User("a"), message.User("b")}
	out, err := message.Add(nil, update)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].ID == "" || out[1].ID == "" || out[0].ID == out[1].ID {
		t.Fatalf("ids %q", ids(out))
	}
	if update[0].ID != "" {
		t.Fatal("Add wrote an ID into the caller's update")
	}
}

func TestAddRemoveUnknown(t *testing.T) {
	_, err := message.Add([]message.Message{{ID: "1"}}, []message.Message{message.Remove("9")})
	if err == nil || !strings.HasPrefix(err.Error(), "message: ") || !strings.Contains(err.Error(), `"9"`) {
		t.Fatalf("err %v", err)
	}
	_, err = message.Add([]message.Message{{ID: "1"}}, []message.Message{message.Remove("1"), message.Remove("1")})
	if err == nil {
		t.Fatal("removing one message twice is not an error")
	}
}

func TestMessageText(t *testing.T) {
	m := message.Message{Content: "look", Parts: []message.Part{{Type: message.PartText, Text: "at"}, {Type: message.PartImage, ImageURL: "x"}, {Type: message.PartText, Text: "this"}}}
	if got := m.Text(); got != "look\nat\nthis" {
		t.Fatalf("Text() = %q", got)
	}
	if e := message.ToolError("c1", "calc", "bad"); !e.IsError || e.Role != message.RoleTool || e.ToolCallID != "c1" {
		t.Fatalf("ToolError %+v", e)
	}
}

// FuzzAddMessages checks the add-messages merge for any list and update: it never panics; the
// result's IDs are unique; every message the update adds or replaces is present with the
// update's content; removed IDs are gone; and a remove of an unknown ID is the only error.
func FuzzAddMessages(f *testing.F) {
	f.Add([]byte("a1b2"), []byte("+c~a-b"))
	f.Add([]byte("abc"), []byte("*d"))
	f.Add([]byte(""), []byte("-a"))
	f.Add([]byte("aa"), []byte("+a+a-a+a"))
	f.Fuzz(func(t *testing.T, listSpec, updateSpec []byte) {
		// The list: messages with IDs from listSpec (made unique through Add itself).
		var seed []message.Message
		for _, c := range listSpec {
			seed = append(seed, message.Message{ID: string(rune('a' + c%8)), Role: message.RoleUser, Content: "old"})
		}
		list, err := message.Add(nil, seed)
		if err != nil {
			t.Fatalf("building the list: %v", err)
		}
		checkUnique(t, list)
		// The update: ops + (add or replace), - (remove), * (remove all), ~ (no ID).
		var update []message.Message
		for i := 0; i+1 < len(updateSpec); i += 2 {
			id := string(rune('a' + updateSpec[i+1]%8))
			switch updateSpec[i] % 4 {
			case 0:
				update = append(update, message.Message{ID: id, Role: message.RoleAssistant, Content: "new " + id})
			case 1:
				update = append(update, message.Remove(id))
			case 2:
				update = append(update, message.RemoveAll())
			case 3:
				update = append(update, message.Message{Role: message.RoleAssistant, Content: "anonymous"})
			}
		}
		before, _ := json.Marshal(list)
		out, err := message.Add(slices.Clip(list), update)
		after, _ := json.Marshal(list)
		if string(before) != string(after) {
			t.Fatalf("Add modified its input list")
		}

		// Model the expected result: present IDs after applying ops in order.
		present := map[string]bool{}
		start := 0
		for i, m := range update {
			if m.Role == message.RoleRemove && m.ID == message.RemoveAllID {
				start = i + 1
			}
		}
		if start == 0 {
			for _, m := range list {
				present[m.ID] = true
			}
		}
		wantErr := false
		lastWrite := map[string]string{}
		for _, m := range update[start:] {
			switch {
			case m.Role == message.RoleRemove && m.ID != message.RemoveAllID:
				if !present[m.ID] {
					wantErr = true
				}
				present[m.ID] = false
			case m.ID != "":
				present[m.ID] = true
				lastWrite[m.ID] = m.Content
			}
		}
		if wantErr {
			if err == nil {
				t.Fatalf("removing an absent ID succeeded: list %q update %+v", ids(list), update)
			}
			return
		}
		if err != nil {
			t.Fatalf("unexpected error %v: list %q update %+v", err, ids(list), update)
		}
		checkUnique(t, out)
		got := map[string]string{}
		for _, m := range out {
			if m.ID == "" {
				t.Fatalf("a message has no ID: %+v", out)
			}
			got[m.ID] = m.Content
		}
		for id, want := range present {
			_, ok := got[id]
			if want != ok {
				t.Fatalf("ID %q present=%v, want %v: list %q update %+v result %q", id, ok, want, ids(list), update, ids(out))
			}
		}
		for id, content := range lastWrite {
			if present[id] && got[id] != content {
				t.Fatalf("ID %q says %q, want the update's %q", id, got[id], content)
			}
		}
		anonymous := 0
		for _, m := range update[start:] {
			if m.ID == "" && m.Role != message.RoleRemove {
				anonymous++
			}
		}
		named := 0
		for id, p := range present {
			if p && id != "" {
				named++
			}
		}
		if len(out) != named+anonymous {
			t.Fatalf("%d messages, want %d named and %d anonymous", len(out), named, anonymous)
		}
	})
}

func checkUnique(t *testing.T, msgs []message.Message) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.ID] {
			t.Fatalf("ID %q appears twice in %q", m.ID, ids(msgs))
		}
		seen[m.ID] = true
	}
}
