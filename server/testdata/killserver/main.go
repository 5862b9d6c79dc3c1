// Command killserver is a trellis server for the kill and replica tests of package server
// (kill_test.go, replicas_test.go). Its assistant "steps" has five nodes in a line, each asking
// a slow scripted model for a reply that it streams as custom events, and each appending "start
// NODE PID" and "done NODE PID" lines to the file named by KILLTEST_LOG, so the test can count
// which nodes ran and how often; "quick" has one node that answers at once.
//
// It runs package server the way `trellis serve --dev` does (same Config, same Serve), with the
// flags the test needs; it is built by the test only and is not part of the trellis binary.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/server"
)

type state struct {
	Done []string `json:"done" reduce:"append"`
}

// slowStep answers after a pause, like a model that takes its time.
func slowStep(pause time.Duration, text string) scripted.Step {
	return func(ctx context.Context, req *model.Request) (*model.Response, error) {
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return scripted.Text(text)(ctx, req)
	}
}

func mark(line string) {
	f, err := os.OpenFile(os.Getenv("KILLTEST_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(f, line, os.Getpid())
	f.Sync()
	f.Close()
}

func buildSteps(d server.Deps) (graph.Runnable, error) {
	pause, err := time.ParseDuration(os.Getenv("KILLTEST_PAUSE"))
	if err != nil {
		pause = 400 * time.Millisecond
	}
	g := graph.New[state]()
	names := []string{"n1", "n2", "n3", "n4", "n5"}
	for _, name := range names {
		m := scripted.New(slowStep(pause, "reply from "+name+" in a few chunks"))
		m.Repeat, m.ChunkSize = true, 6
		g.AddNode(name, func(ctx context.Context, s state) (state, error) {
			mark("start " + name)
			for chunk, err := range m.Stream(ctx, &model.Request{Messages: []message.Message{message.User("next step")}}) {
				if err != nil {
					return state{}, err
				}
				if chunk.Text != "" {
					graph.Emit(ctx, map[string]any{"node": name, "token": chunk.Text})
				}
			}
			mark("done " + name)
			return state{Done: []string{name}}, nil
		})
	}
	g.AddEdge(graph.START, names[0])
	for i := 1; i < len(names); i++ {
		g.AddEdge(names[i-1], names[i])
	}
	g.AddEdge(names[len(names)-1], graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: "steps", Saver: d.Saver, Store: d.Store}))
}

func buildQuick(d server.Deps) (graph.Runnable, error) {
	g := graph.New[state]()
	g.AddNode("only", func(ctx context.Context, s state) (state, error) {
		return state{Done: []string{"only"}}, nil
	})
	g.AddEdge(graph.START, "only")
	g.AddEdge("only", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: "quick", Saver: d.Saver, Store: d.Store}))
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	dataDir := flag.String("data-dir", "", "SQLite directory")
	dbURL := flag.String("database-url", "", "Postgres URL")
	redisURL := flag.String("redis-url", "", "Redis URL")
	heartbeat := flag.Duration("heartbeat", 0, "lease heartbeat")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := server.New(server.Config{
		Graphs: []server.GraphSpec{
			{ID: "steps", Description: "kill test: five slow nodes", Build: buildSteps},
			{ID: "quick", Description: "one node that answers at once", Build: buildQuick},
		},
		DataDir: *dataDir, DatabaseURL: *dbURL, RedisURL: *redisURL, Dev: true, Heartbeat: *heartbeat,
		ShutdownGrace: 2 * time.Second,
		Logger:        slog.New(slog.NewJSONHandler(os.Stderr, nil)),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "killserver:", err)
		os.Exit(1)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "killserver:", err)
		os.Exit(1)
	}
	fmt.Printf("killserver: serving on http://%s\n", ln.Addr())
	if err := s.Serve(ctx, ln); err != nil {
		fmt.Fprintln(os.Stderr, "killserver:", err)
	}
}
