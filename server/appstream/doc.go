// Package appstream is the kit an application's routes use for WebSocket and SSE
// connections, so that every app gets the same guarantees without writing them again:
//
//   - authentication with the principals of the API (AppDeps.Guard: a bearer token, an API key,
//     or ?token= for a browser's WebSocket; 401 otherwise);
//   - Origin checks: the request's own host, plus AppDeps.WebSocketOrigins (--ws-origins) or
//     Options.Origins; anything else is answered 403 before the upgrade;
//   - the tenant's limits: its request rate (the connection attempt is one request, 429 with
//     Retry-After) and its open streams (AppDeps.OpenStream, 429 past Config.MaxStreamsPerTenant),
//     and a per-connection rate of client messages;
//   - acknowledgements: a client message carrying an "id" is answered {"type":"ack","id":...}
//     once the app has handled it, or {"type":"error","id":...} when it failed; a message
//     whose id the connection already handled is acknowledged again with "duplicate": true and
//     not handled twice (a client may resend what it saw no ack for);
//   - rooms: frames published to a room reach every connection that joined it, on every replica
//     (AppDeps.Fanout: Redis pub/sub or Postgres LISTEN/NOTIFY; in-process on SQLite), and only
//     connections of the same app and tenant;
//   - heartbeats (WebSocket pings, SSE comment lines) and a deadline on every write: a client that
//     stops answering or reading is let go, so it cannot hold a goroutine or a stream slot.
//
// The wire format of a WebSocket is JSON text frames:
//
//	client → server   {"id": "c1", "type": "say", "data": {...}}
//	                  {"id": "c2", "type": "join", "room": "doc-7"}    (with Options.CanJoin)
//	server → client   {"type": "ack", "id": "c1"}
//	                  {"type": "error", "id": "c1", "code": "bad_message", "message": "..."}
//	                  {"type": "said", "room": "doc-7", "data": {...}}
//
// An SSE stream sends each frame as an event named by its type, with the frame as its data.
//
// A sketch of a route (docs/appstream.md has a complete one):
//
//	kit := appstream.New(d, &appstream.Options{CanJoin: func(p server.Principal, room string) bool { return true }})
//	mux.Handle("GET /ws", kit.WebSocket(appstream.Handler{
//		OnMessage: func(c *appstream.Conn, m appstream.Message) error {
//			return c.Publish(c.Context(), m.Room, "said", m.Data)
//		},
//	}))
package appstream
