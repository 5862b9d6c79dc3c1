package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// chatState is what `trellis chat` remembers between sessions: the last thread of each
// assistant on each server. It lives in chat.json in the config directory, next to the line
// history (chat_history).
type chatState struct {
	// Servers maps a server URL to its assistants (by graph ID) and their last threads.
	Servers map[string]map[string]chatLastThread `json:"servers"`
}

type chatLastThread struct {
	ThreadID string    `json:"thread_id"`
	UsedAt   time.Time `json:"used_at"`
}

const (
	chatStateFile   = "chat.json"
	chatHistoryFile = "chat_history"
)

// chatConfigDir returns the directory of the chat's files: dir when set, else
// os.UserConfigDir()/trellis.
func chatConfigDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory to keep the chat's state in (%v); pass --config-dir or set TRELLIS_CONFIG_DIR", err)
	}
	return filepath.Join(base, "trellis"), nil
}

// loadChatState reads the state file; a missing file is an empty state. A damaged file is
// reported and replaced by an empty state, since losing the last threads is better than not
// chatting.
func loadChatState(dir string) (*chatState, error) {
	st := &chatState{Servers: map[string]map[string]chatLastThread{}}
	data, err := os.ReadFile(filepath.Join(dir, chatStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("reading %s: %w", filepath.Join(dir, chatStateFile), err)
	}
	if err := json.Unmarshal(data, st); err != nil {
		return &chatState{Servers: map[string]map[string]chatLastThread{}}, fmt.Errorf("%s is not valid JSON (%v); it will be rewritten", filepath.Join(dir, chatStateFile), err)
	}
	if st.Servers == nil {
		st.Servers = map[string]map[string]chatLastThread{}
	}
	return st, nil
}

func (s *chatState) last(server, assistant string) (chatLastThread, bool) {
	t, ok := s.Servers[server][assistant]
	return t, ok && t.ThreadID != ""
}

func (s *chatState) remember(server, assistant, threadID string) {
	if s.Servers[server] == nil {
		s.Servers[server] = map[string]chatLastThread{}
	}
	s.Servers[server][assistant] = chatLastThread{ThreadID: threadID, UsedAt: time.Now().UTC()}
}

func (s *chatState) forget(server, assistant string) {
	delete(s.Servers[server], assistant)
}

// save writes the state file atomically (a temporary file renamed over it), readable by its
// owner only.
func (s *chatState) save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s for the chat's state: %w", dir, err)
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, chatStateFile+".*")
	if err != nil {
		return fmt.Errorf("saving the chat's state in %s: %w", dir, err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("saving the chat's state in %s: %w", dir, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, chatStateFile)); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("saving the chat's state in %s: %w", dir, err)
	}
	return nil
}
