package message

import "fmt"

// Add merges update into list the way a conversation grows, and returns the result:
//
//   - a message whose ID is already in the list replaces that message in place;
//   - a message with a new ID, or none, is appended (a missing ID is filled with [NewID]);
//   - a [Remove] marker deletes the message with its ID, and it is an error if there is none;
//   - a [RemoveAll] marker deletes everything before it; messages after it in update are kept.
//
// Add never modifies the elements of list; when nothing is replaced or removed it may append into
// list's spare capacity, so callers that share list must clip its capacity first.
func Add(list, update []Message) ([]Message, error) {
	if len(update) == 0 {
		return list, nil
	}
	// The common case: only new messages, appended.
	if !needsMerge(list, update) {
		start := len(list)
		out := append(list, update...)
		for i := start; i < len(out); i++ {
			if out[i].ID == "" {
				out[i].ID = NewID()
			}
		}
		return out, nil
	}

	// Apply the last remove-all first: everything before it goes.
	for i := len(update) - 1; i >= 0; i-- {
		if update[i].Role == RoleRemove && update[i].ID == RemoveAllID {
			list, update = nil, update[i+1:]
			break
		}
	}
	out := make([]Message, len(list), len(list)+len(update))
	copy(out, list)
	index := make(map[string]int, len(out)+len(update))
	for i, m := range out {
		if m.ID != "" {
			index[m.ID] = i
		}
	}
	removed := map[string]bool{}
	for _, m := range update {
		if m.Role == RoleRemove {
			if m.ID == RemoveAllID {
				continue
			}
			if _, ok := index[m.ID]; !ok || removed[m.ID] {
				return nil, fmt.Errorf("message: cannot remove message %q: no message has that ID", m.ID)
			}
			removed[m.ID] = true
			continue
		}
		if m.ID == "" {
			m.ID = NewID()
		}
		if i, ok := index[m.ID]; ok {
			out[i] = m
			delete(removed, m.ID)
			continue
		}
		index[m.ID] = len(out)
		out = append(out, m)
	}
	if len(removed) == 0 {
		return out, nil
	}
	kept := out[:0]
	for _, m := range out {
		if !removed[m.ID] {
			kept = append(kept, m)
		}
	}
	return kept, nil
}

// needsMerge reports whether update holds removals or IDs already present, which the plain append
// path cannot handle.
func needsMerge(list, update []Message) bool {
	for _, m := range update {
		if m.Role == RoleRemove {
			return true
		}
	}
	if len(update) <= 8 {
		// A turn adds a few messages: comparing is cheaper than building an index of the list.
		for i, m := range update {
			if m.ID == "" {
				continue
			}
			for j := len(list) - 1; j >= 0; j-- {
				if list[j].ID == m.ID {
					return true
				}
			}
			for _, earlier := range update[:i] {
				if earlier.ID == m.ID {
					return true
				}
			}
		}
		return false
	}
	ids := make(map[string]struct{}, len(list)+len(update))
	for _, l := range list {
		if l.ID != "" {
			ids[l.ID] = struct{}{}
		}
	}
	for _, m := range update {
		if m.ID == "" {
			continue
		}
		if _, dup := ids[m.ID]; dup {
			return true
		}
		ids[m.ID] = struct{}{}
	}
	return false
}
