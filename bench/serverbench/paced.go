package serverbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trellis-go/trellis/model"
)

// PacedModel is a chat model that streams a fixed number of tokens at a steady pace, like a
// provider writing Interval apart, and stamps each token with the wall-clock time it was due
// (its schedule: the answer's start plus one Interval per token, and after the gate the gate's
// opening plus the answer's phase), so a client can tell how late the server brought it over,
// its own timers' lateness included (see [ParseToken]). A server too busy to wake its model on
// time shows as late, as its users would see it.
//
// After PauseAfter tokens every stream waits at a gate until [PacedModel.Release]: the streams
// are then open and idle, which is when the memory each one holds is measured. Streams resume
// at a random phase within one Interval, as independent streams would, rather than all at once.
//
// PacedModel is safe for concurrent use.
type PacedModel struct {
	// Tokens is how many tokens each answer has; zero means 40.
	Tokens int
	// Interval is the time between two tokens; zero means 50ms (20 tokens a second).
	Interval time.Duration
	// PauseAfter, when between 1 and Tokens-1, makes each answer wait at the gate after that many
	// tokens; zero means no pause.
	PauseAfter int

	once     sync.Once
	gate     chan struct{}
	release  sync.Once
	openedAt atomic.Int64 // Unix nanoseconds of Release
	waiting  atomic.Int64
	seq      atomic.Uint64
}

var _ model.Model = (*PacedModel)(nil)

func (m *PacedModel) init() {
	m.once.Do(func() { m.gate = make(chan struct{}) })
}

// Release opens the gate: every answer waiting after PauseAfter tokens goes on, and later ones do
// not stop. It is safe to call more than once.
func (m *PacedModel) Release() {
	m.init()
	m.release.Do(func() {
		m.openedAt.Store(time.Now().UnixNano())
		close(m.gate)
	})
}

// Waiting returns how many answers are waiting at the gate.
func (m *PacedModel) Waiting() int { return int(m.waiting.Load()) }

func (m *PacedModel) tokens() int {
	if m.Tokens <= 0 {
		return 40
	}
	return m.Tokens
}

func (m *PacedModel) interval() time.Duration {
	if m.Interval <= 0 {
		return 50 * time.Millisecond
	}
	return m.Interval
}

// Generate answers with the whole paced text; it takes as long as the stream would.
func (m *PacedModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return model.Collect(m.Stream(ctx, req))
}

// Stream yields the tokens Interval apart, each formatted by [FormatToken] with its index and
// the time it was due, then a last chunk with the finish reason.
func (m *PacedModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if err := req.Validate(); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		m.init()
		n, every := m.tokens(), m.interval()
		due := time.Now().Add(every) // when token i is due
		timer := time.NewTimer(every)
		defer timer.Stop()
		var partial strings.Builder
		fail := func(err error) {
			yield(model.Chunk{}, &model.ProviderError{Provider: "paced", Partial: partial.String(), Err: err})
		}
		for i := range n {
			if i > 0 && i == m.PauseAfter {
				m.waiting.Add(1)
				select {
				case <-m.gate:
				case <-ctx.Done():
				}
				m.waiting.Add(-1)
				if ctx.Err() != nil {
					fail(ctx.Err())
					return
				}
				// Resume at a phase of our own, not in step with every other stream.
				phase := time.Duration(m.seq.Add(0x9e3779b97f4a7c15) % uint64(every))
				due = time.Unix(0, m.openedAt.Load()).Add(phase)
				timer.Reset(time.Until(due))
			} else if i > 0 {
				due = due.Add(every)
				timer.Reset(time.Until(due))
			}
			select {
			case <-timer.C:
			case <-ctx.Done():
				fail(ctx.Err())
				return
			}
			tok := FormatToken(i, due)
			partial.WriteString(tok)
			if !yield(model.Chunk{Text: tok}, nil) {
				return
			}
		}
		yield(model.Chunk{FinishReason: model.FinishStop, Usage: &model.Usage{OutputTokens: n}}, nil)
	}
}

// FormatToken renders token i emitted at t: "i@unixnano ".
func FormatToken(i int, t time.Time) string {
	b := make([]byte, 0, 32)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, '@')
	b = strconv.AppendInt(b, t.UnixNano(), 10)
	b = append(b, ' ')
	return string(b)
}

// ErrBadToken is returned by ParseToken for text that FormatToken did not write.
var ErrBadToken = errors.New("serverbench: not a paced token")

// ParseToken reads a token written by FormatToken.
func ParseToken(s string) (int, time.Time, error) {
	return parseToken([]byte(strings.TrimSuffix(s, " ")))
}

// parseToken reads a token without its trailing space, allocating nothing unless it is bad.
func parseToken(b []byte) (int, time.Time, error) {
	at := bytes.IndexByte(b, '@')
	if at <= 0 {
		return 0, time.Time{}, fmt.Errorf("%w: %q", ErrBadToken, b)
	}
	i, ok := digits(b[:at])
	if !ok || i > math.MaxInt32 {
		return 0, time.Time{}, fmt.Errorf("%w: index in %q", ErrBadToken, b)
	}
	ns, ok := digits(b[at+1:])
	if !ok || ns <= 0 {
		return 0, time.Time{}, fmt.Errorf("%w: time in %q", ErrBadToken, b)
	}
	return int(i), time.Unix(0, ns), nil
}

// digits reads a non-negative decimal int64.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' || n > (math.MaxInt64-int64(c-'0'))/10 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
