package rehab

import (
	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/message"
)

// State is the orchestrator's shared state (the specification's OrchestratorState).
// messages is merged like add_messages; knowledge is merged entry by entry (a nil-summary
// tombstone removes one), todos by ID; executed_actions and stream_events grow during a turn
// and are reset by post_process; the rest keep the last value.
type State struct {
	Messages        []message.Message `json:"messages" reduce:"messages"`
	UserID          string            `json:"user_id,omitempty"`
	ConversationID  string            `json:"conversation_id,omitempty"`
	Knowledge       kb.KB             `json:"knowledge,omitempty"`
	Todos           []kb.Todo         `json:"todos,omitempty"`
	CurrentFocus    *kb.Focus         `json:"current_focus,omitempty"`
	ExecutedActions []ExecutedAction  `json:"executed_actions,omitempty" reduce:"append"`
	StreamEvents    []map[string]any  `json:"stream_events,omitempty" reduce:"append"`
	// Turn counts the user's turns on the thread; knowledge entries touched in an older turn
	// are demoted.
	Turn int `json:"turn,omitempty"`
	// SavedThrough is the ID of the last message persisted to the messages table.
	SavedThrough string `json:"saved_through,omitempty"`
	// ReplyLanguage is the language the replies are written in, from the profile's
	// preferences.idioma_respostas when loaded ("" and "pt": pt-PT); see ReplyLanguages.
	ReplyLanguage string `json:"reply_language,omitempty"`
}

// ExecutedAction is a mutation done in the current turn.
type ExecutedAction struct {
	Type    string `json:"action_type"`
	Summary string `json:"summary"`
}

// Removed marks a knowledge entry for deletion in an update.
const removedSource = "__removed__"

// Tombstone is the update value that removes a knowledge entry.
func Tombstone() kb.Entry { return kb.Entry{Source: removedSource} }

// mergeKnowledge is the knowledge reducer: entries of the update replace or (as tombstones)
// remove those of the current value.
func mergeKnowledge(cur, upd kb.KB) kb.KB {
	out := cur.Clone()
	for p, e := range upd {
		if e.Source == removedSource {
			delete(out, p)
			continue
		}
		out[p] = e
	}
	return out
}

// mergeTodos is the todos reducer: items of the update replace those with the same ID, new ones
// are appended.
func mergeTodos(cur, upd []kb.Todo) []kb.Todo {
	out := append([]kb.Todo(nil), cur...)
	for _, t := range upd {
		found := false
		for i := range out {
			if out[i].ID == t.ID {
				out[i], found = t, true
				break
			}
		}
		if !found {
			out = append(out, t)
		}
	}
	return out
}
