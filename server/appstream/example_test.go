package appstream_test

import (
	"context"
	"net/http"

	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appstream"
)

// An app's Build mounting a WebSocket whose clients talk in rooms and start runs, and an SSE
// stream that follows the caller's own room.
func Example() {
	_ = server.App{Name: "notes", Build: func(ctx context.Context, d server.AppDeps) (*server.AppParts, error) {
		kit := appstream.New(d, &appstream.Options{
			CanJoin: func(p server.Principal, room string) bool { return room == "lobby" || room == "user-"+p.User },
		})
		mux := http.NewServeMux()
		mux.Handle("GET /ws", kit.WebSocket(appstream.Handler{
			OnMessage: func(c *appstream.Conn, m appstream.Message) error {
				switch m.Type {
				case "say":
					return c.Publish(c.Context(), m.Room, "said", m.Data)
				case "ask":
					run, err := d.Runs.Start(c.Context(), c.Principal(), server.RunRequest{AssistantID: "notes", Input: m.Data})
					if err != nil {
						return &appstream.Error{Code: "run_refused", Message: err.Error()}
					}
					return c.Send("run", map[string]string{"run_id": run.RunID, "thread_id": run.ThreadID})
				}
				return &appstream.Error{Code: "unknown_type", Message: m.Type}
			},
		}))
		mux.Handle("GET /events", kit.SSE(func(s *appstream.Stream) error {
			if err := s.Join("user-" + s.Principal().User); err != nil {
				return err
			}
			<-s.Context().Done()
			return nil
		}))
		return &server.AppParts{Handler: mux}, nil
	}}
}
