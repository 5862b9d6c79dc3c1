package appstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/trellis-go/trellis/server"
)

// Errors a connection's methods return.
var (
	// ErrClosed: the connection has ended.
	ErrClosed = errors.New("appstream: connection closed")
	// ErrSlowClient: the client did not read its frames in time and was let go.
	ErrSlowClient = errors.New("appstream: client too slow: its queue of frames is full")
	// ErrBadRoom: a room name is empty, longer than 128 bytes or holds control characters.
	ErrBadRoom = errors.New("appstream: bad room name")
)

// Defaults of Options' zero fields.
const (
	DefaultPingInterval    = 20 * time.Second
	DefaultWriteTimeout    = 10 * time.Second
	DefaultSendBuffer      = 64
	DefaultMaxMessageBytes = 64 << 10
	DefaultMessageRate     = 20
)

// Options tunes a Kit; every zero field means the documented default.
type Options struct {
	// Origins lists the Origin host patterns (path.Match syntax: "app.example.com",
	// "*.example.com") allowed besides the request's own host. Nil means AppDeps.WebSocketOrigins
	// (the server's --ws-origins); when both are empty only same-origin requests, and requests
	// without an Origin header (not from a browser), are let in.
	Origins []string
	// PingInterval is how often a WebSocket is pinged (and an SSE stream sent a comment line);
	// a WebSocket whose pong does not come within it is closed. Zero means 20 seconds.
	PingInterval time.Duration
	// WriteTimeout bounds the writing of one frame; a client that does not take it in time is
	// let go. Zero means 10 seconds.
	WriteTimeout time.Duration
	// SendBuffer is how many frames may wait for a client; a client whose queue is full is let
	// go (ErrSlowClient) rather than slowing the senders. Zero means 64.
	SendBuffer int
	// MaxMessageBytes caps a client message; a larger one closes the connection. Zero means
	// 64 KiB.
	MaxMessageBytes int64
	// MessageRate is how many client messages per second a connection may send (with a burst of
	// twice that); past it a message is answered with an error of code "rate_limited" and
	// retry_after_ms, and not handled. Zero means 20; negative means no limit.
	MessageRate float64
	// CanJoin, when set, lets clients join and leave rooms themselves with {"type":"join",
	// "room":...} and {"type":"leave","room":...}; it says whether p may join room. Without it
	// such messages reach OnMessage like any other.
	CanJoin func(p server.Principal, room string) bool
	// Logger records connections that fail; nil means AppDeps.Logger.
	Logger *slog.Logger
}

// Kit makes the WebSocket and SSE handlers of one application. Make one with [New] in the app's
// Build and use it from any number of routes; it is safe for concurrent use.
type Kit struct {
	app     string
	guard   func(http.Handler) http.Handler
	open    func(tenant string) (func(), error)
	fanout  *server.Fanout
	origins []string
	o       Options
	log     *slog.Logger
}

// New makes the kit of the application whose dependencies are d. d.Guard, d.OpenStream and
// d.Fanout are those the server hands the app's Build. Nil opts, like a zero field, means the
// documented default.
func New(d server.AppDeps, opts *Options) *Kit {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.PingInterval <= 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.SendBuffer <= 0 {
		o.SendBuffer = DefaultSendBuffer
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.MessageRate == 0 {
		o.MessageRate = DefaultMessageRate
	}
	k := &Kit{app: d.Name, guard: d.Guard, open: d.OpenStream, fanout: d.Fanout, o: o, log: o.Logger}
	k.origins = o.Origins
	if k.origins == nil {
		k.origins = d.WebSocketOrigins
	}
	if k.log == nil {
		k.log = d.Logger
	}
	if k.log == nil {
		k.log = slog.Default()
	}
	if k.guard == nil {
		// Without the server's guard nobody gets in: a kit is never open by accident.
		k.guard = func(http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writeHTTPError(w, http.StatusUnauthorized, "unauthorized", "the appstream kit has no AppDeps.Guard to authenticate with", "make the kit from the AppDeps the server handed Build")
			})
		}
	}
	return k
}

// Frame is what travels on a connection, in both directions.
type Frame struct {
	// Type names the frame: "ack", "error", or the app's own types.
	Type string `json:"type"`
	// ID is a client message's ID, echoed by its ack or error.
	ID string `json:"id,omitempty"`
	// Room is the room a published frame came through, or the room of a join or leave.
	Room string          `json:"room,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	// Code and Message describe an error frame.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// Duplicate marks the ack of a message ID the connection had already handled.
	Duplicate bool `json:"duplicate,omitempty"`
	// RetryAfterMS is how long a rate-limited client should wait.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
}

// Message is a client's frame as OnMessage receives it.
type Message = Frame

// Error is an error a handler returns to answer a client message with a code of its own
// (the frame's code and message); any other error is answered with code "failed".
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Publish sends a frame of type typ with data to the room of tenant in this app, on every
// replica: for app code outside a connection (a REST route, a run's outcome). data is encoded
// to JSON unless it is a json.RawMessage.
func (k *Kit) Publish(ctx context.Context, tenant, room, typ string, data any) error {
	if err := checkRoom(room); err != nil {
		return err
	}
	if k.fanout == nil {
		return errors.New("appstream: no AppDeps.Fanout to publish with")
	}
	raw, err := encodeData(data)
	if err != nil {
		return err
	}
	frame, err := json.Marshal(Frame{Type: typ, Room: room, Data: raw})
	if err != nil {
		return err
	}
	return k.fanout.Publish(ctx, k.topic(tenant, room), frame)
}

// PublishFrame sends v, encoded to JSON (as is when a json.RawMessage), to the room of tenant
// in this app, on every replica, as a frame of the app's own shape: a [Socket] that joined the
// room gets it as it is, an SSE stream as an event named by its "type" field (a [Conn] gets it
// as it is too). On Postgres a frame is at most about 6.9 KB (server.ErrFanoutTooLarge past it).
func (k *Kit) PublishFrame(ctx context.Context, tenant, room string, v any) error {
	if err := checkRoom(room); err != nil {
		return err
	}
	if k.fanout == nil {
		return errors.New("appstream: no AppDeps.Fanout to publish with")
	}
	raw, err := encodeData(v)
	if err != nil {
		return err
	}
	if raw == nil {
		return errors.New("appstream: PublishFrame of nil: give the frame to publish")
	}
	return k.fanout.Publish(ctx, k.topic(tenant, room), raw)
}

// Transport says how room frames travel between replicas: "redis", "postgres" or "local" (one
// process).
func (k *Kit) Transport() string {
	if k.fanout == nil {
		return "none"
	}
	return k.fanout.Kind()
}

// topic is a room's fanout topic: rooms of other apps and other tenants never meet.
func (k *Kit) topic(tenant, room string) string {
	return "appstream\x00" + k.app + "\x00" + tenant + "\x00" + room
}

func encodeData(data any) (json.RawMessage, error) {
	switch v := data.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if !json.Valid(v) {
			return nil, errors.New("appstream: data is not JSON")
		}
		return v, nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("appstream: encode data: %w", err)
	}
	return raw, nil
}

func checkRoom(room string) error {
	if room == "" || len(room) > 128 || strings.IndexFunc(room, unicode.IsControl) >= 0 {
		return fmt.Errorf("%w %q: give 1 to 128 bytes without control characters", ErrBadRoom, room)
	}
	return nil
}

// originAllowed reports whether a request may connect from its Origin: none (not a browser),
// the request's own host, or a host matching an allowed pattern.
func (k *Kit) originAllowed(r *http.Request) (bool, string) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true, ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false, origin
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true, origin
	}
	for _, p := range k.origins {
		p = strings.ToLower(strings.TrimSpace(p))
		if ok, _ := path.Match(p, strings.ToLower(u.Host)); ok {
			return true, origin
		}
	}
	return false, origin
}

// admit runs the checks every connection passes before it is upgraded or streamed: the Origin,
// then (through the guard) the credentials and the tenant's rate, then the tenant's open
// streams. serve is called with the principal and the release of the stream slot.
func (k *Kit) admit(serve func(w http.ResponseWriter, r *http.Request, p server.Principal, done func())) http.Handler {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := server.PrincipalFrom(r.Context())
		if !ok {
			writeHTTPError(w, http.StatusUnauthorized, "unauthorized", "the request has no principal", "")
			return
		}
		done := func() {}
		if k.open != nil {
			var err error
			if done, err = k.open(p.Tenant); err != nil {
				var ae *server.APIError
				if errors.As(err, &ae) {
					w.Header().Set("Retry-After", "1")
					writeHTTPError(w, ae.Status, "too_many_streams", ae.Message, ae.Hint)
					return
				}
				writeHTTPError(w, http.StatusTooManyRequests, "too_many_streams", err.Error(), "")
				return
			}
		}
		serve(w, r, p, done)
	})
	guarded := k.guard(inner)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, origin := k.originAllowed(r); !ok {
			writeHTTPError(w, http.StatusForbidden, "origin_not_allowed",
				fmt.Sprintf("Origin %q is not allowed to connect", origin),
				"connect from the app's own host, or add the origin's host to --ws-origins (Options.Origins)")
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

func writeHTTPError(w http.ResponseWriter, status int, code, msg, hint string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]string{"code": code, "detail": msg}
	if hint != "" {
		body["hint"] = hint
	}
	_ = json.NewEncoder(w).Encode(body)
}
