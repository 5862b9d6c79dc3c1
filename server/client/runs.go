package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Run is a run's record.
type Run struct {
	RunID             string         `json:"run_id"`
	ThreadID          string         `json:"thread_id"`
	AssistantID       string         `json:"assistant_id"`
	Status            string         `json:"status"`
	Metadata          map[string]any `json:"metadata,omitempty"`
	MultitaskStrategy string         `json:"multitask_strategy,omitempty"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
}

// Command resumes, updates or redirects a paused thread (a run's command).
type Command struct {
	Resume any `json:"resume,omitempty"`
	Update any `json:"update,omitempty"`
	// Goto names the nodes to run next: a string, a list, or Send objects.
	Goto any `json:"goto,omitempty"`
}

// RunRequest starts a run. AssistantID is required; Input or Command usually is.
type RunRequest struct {
	AssistantID string         `json:"assistant_id"`
	Input       any            `json:"input,omitempty"`
	Command     *Command       `json:"command,omitempty"`
	Config      map[string]any `json:"config,omitempty"`
	Context     map[string]any `json:"context,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	// StreamMode lists the modes a streamed run sends: values, updates, messages,
	// messages-tuple, custom, events, debug, tasks, checkpoints. Empty means the server's
	// default (values).
	StreamMode        []string `json:"stream_mode,omitempty"`
	StreamSubgraphs   bool     `json:"stream_subgraphs,omitempty"`
	InterruptBefore   []string `json:"interrupt_before,omitempty"`
	InterruptAfter    []string `json:"interrupt_after,omitempty"`
	CheckpointID      string   `json:"checkpoint_id,omitempty"`
	MultitaskStrategy string   `json:"multitask_strategy,omitempty"`
	// IfNotExists is "create" to make the thread when it is missing ("reject" by default).
	IfNotExists  string `json:"if_not_exists,omitempty"`
	OnCompletion string `json:"on_completion,omitempty"`
	Webhook      string `json:"webhook,omitempty"`
}

// StreamPart is one event of a run's stream: its event name ("metadata", "values", "updates",
// "messages", "custom", "error", "end", ... with "|<namespace>" for subgraphs) and its JSON.
type StreamPart struct {
	Event string
	Data  json.RawMessage
	// ID is the event's ID, to rejoin the stream after it (Runs.JoinStream's lastEventID).
	ID string
}

// Runs is the runs part of the API. A threadID of "" means a stateless run (POST /runs...).
type Runs struct{ t *transport }

func runsPath(threadID string) string {
	if threadID == "" {
		return "/runs"
	}
	return "/threads/" + esc(threadID) + "/runs"
}

// Create starts a run in the background and returns its record.
func (r *Runs) Create(ctx context.Context, threadID string, req *RunRequest) (*Run, error) {
	var out Run
	return &out, r.t.call(ctx, http.MethodPost, runsPath(threadID), req, &out)
}

// Wait runs and returns the final values (LangGraph's runs.wait).
func (r *Runs) Wait(ctx context.Context, threadID string, req *RunRequest) (json.RawMessage, error) {
	var out json.RawMessage
	return out, r.t.call(ctx, http.MethodPost, runsPath(threadID)+"/wait", req, &out)
}

// Stream runs and yields the events of its stream until it ends. A run that fails ends with an
// "error" part; the iteration's error is for the transport (a refusal, a lost connection).
func (r *Runs) Stream(ctx context.Context, threadID string, req *RunRequest) iter.Seq2[StreamPart, error] {
	return r.t.stream(ctx, http.MethodPost, runsPath(threadID)+"/stream", req)
}

// Get returns a run's record.
func (r *Runs) Get(ctx context.Context, threadID, runID string) (*Run, error) {
	var out Run
	return &out, r.t.call(ctx, http.MethodGet, runsPath(threadID)+"/"+esc(runID), nil, &out)
}

// List lists a thread's runs, newest first.
func (r *Runs) List(ctx context.Context, threadID string) ([]Run, error) {
	var out []Run
	return out, r.t.call(ctx, http.MethodGet, runsPath(threadID), nil, &out)
}

// Join waits for a run to end and returns the thread's final values.
func (r *Runs) Join(ctx context.Context, threadID, runID string) (json.RawMessage, error) {
	var out json.RawMessage
	return out, r.t.call(ctx, http.MethodGet, runsPath(threadID)+"/"+esc(runID)+"/join", nil, &out)
}

// JoinStream follows a running (or recently ended) run's stream, after lastEventID when given.
func (r *Runs) JoinStream(ctx context.Context, threadID, runID, lastEventID string) iter.Seq2[StreamPart, error] {
	return func(yield func(StreamPart, error) bool) {
		hdr := http.Header{}
		if lastEventID != "" {
			hdr.Set("Last-Event-ID", lastEventID)
		}
		r.t.streamWith(ctx, http.MethodGet, runsPath(threadID)+"/"+esc(runID)+"/stream", nil, hdr)(yield)
	}
}

// Cancel cancels a run: action "interrupt" (the default) or "rollback"; wait waits for it to stop.
func (r *Runs) Cancel(ctx context.Context, threadID, runID, action string, wait bool) error {
	q := url.Values{}
	if action != "" {
		q.Set("action", action)
	}
	if wait {
		q.Set("wait", "1")
	}
	path := runsPath(threadID) + "/" + esc(runID) + "/cancel"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return r.t.call(ctx, http.MethodPost, path, nil, nil)
}

// Delete deletes a finished run's record.
func (r *Runs) Delete(ctx context.Context, threadID, runID string) error {
	return r.t.call(ctx, http.MethodDelete, runsPath(threadID)+"/"+esc(runID), nil, nil)
}

// Cron is a scheduled run.
type Cron struct {
	CronID      string         `json:"cron_id"`
	AssistantID string         `json:"assistant_id"`
	ThreadID    string         `json:"thread_id,omitempty"`
	Schedule    string         `json:"schedule"`
	Enabled     bool           `json:"enabled"`
	NextRunDate string         `json:"next_run_date,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Payload     map[string]any `json:"payload,omitempty"`
}

// CronRequest schedules runs: RunRequest's fields and a cron schedule.
type CronRequest struct {
	RunRequest
	Schedule string `json:"schedule"`
	// EndTime, when set, stops the schedule then.
	EndTime *time.Time `json:"end_time,omitempty"`
}

// Crons is the crons part of the API.
type Crons struct{ t *transport }

// Create schedules runs on a thread, or stateless runs (a new thread each) when threadID is "".
func (c *Crons) Create(ctx context.Context, threadID string, req *CronRequest) (*Cron, error) {
	var out Cron
	return &out, c.t.call(ctx, http.MethodPost, runsPath(threadID)+"/crons", req, &out)
}

// Search lists crons of an assistant or a thread (either may be "").
func (c *Crons) Search(ctx context.Context, assistantID, threadID string) ([]Cron, error) {
	body := map[string]any{}
	if assistantID != "" {
		body["assistant_id"] = assistantID
	}
	if threadID != "" {
		body["thread_id"] = threadID
	}
	var out []Cron
	return out, c.t.call(ctx, http.MethodPost, "/runs/crons/search", body, &out)
}

// Delete deletes a cron.
func (c *Crons) Delete(ctx context.Context, cronID string) error {
	return c.t.call(ctx, http.MethodDelete, "/runs/crons/"+esc(cronID), nil, nil)
}

// stream sends a request whose answer is an event stream and yields its events.
func (t *transport) stream(ctx context.Context, method, path string, body any) iter.Seq2[StreamPart, error] {
	return t.streamWith(ctx, method, path, body, nil)
}

func (t *transport) streamWith(ctx context.Context, method, path string, body any, hdr http.Header) iter.Seq2[StreamPart, error] {
	return func(yield func(StreamPart, error) bool) {
		tt := t
		if len(hdr) > 0 {
			c := *t
			c.headers = t.headers.Clone()
			if c.headers == nil {
				c.headers = http.Header{}
			}
			for k, v := range hdr {
				c.headers[k] = v
			}
			tt = &c
		}
		resp, err := tt.do(ctx, method, path, body)
		if err != nil {
			yield(StreamPart{}, err)
			return
		}
		defer resp.Body.Close()
		for part, err := range ReadEvents(resp.Body) {
			if err != nil && ctx.Err() != nil {
				err = ctx.Err()
			}
			if !yield(part, err) || err != nil {
				return
			}
		}
	}
}

// ReadEvents parses a text/event-stream body, as the API's streams send it: fields id, event and
// data (several data lines are joined with newlines), an event ending at a blank line; comments
// (":", the heartbeats) are skipped.
func ReadEvents(r io.Reader) iter.Seq2[StreamPart, error] {
	return func(yield func(StreamPart, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		var part StreamPart
		var data []byte
		has := false
		flush := func() bool {
			if !has && part.Event == "" {
				return true
			}
			part.Data = data
			ok := yield(part, nil)
			part, data, has = StreamPart{}, nil, false
			return ok
		}
		for sc.Scan() {
			line := strings.TrimSuffix(sc.Text(), "\r")
			if line == "" {
				if !flush() {
					return
				}
				continue
			}
			if strings.HasPrefix(line, ":") {
				continue
			}
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				part.ID = value
			case "event":
				part.Event = value
			case "data":
				if has {
					data = append(data, '\n')
				}
				data = append(data, value...)
				has = true
			}
		}
		if err := sc.Err(); err != nil {
			yield(StreamPart{}, fmt.Errorf("client: reading the event stream: %w", err))
			return
		}
		flush()
	}
}
