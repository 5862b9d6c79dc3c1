package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/graph"
)

func init() {
	register("run", "run an assistant once on a JSON input and print its stream", runRun)
}

func runRun(ctx context.Context, env Env) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	url := fs.String("url", envOr("URL", ""), "run against this server instead of in process (TRELLIS_URL)")
	thread := fs.String("thread", "", "thread ID to run on (in process: a fresh one when empty)")
	modes := fs.String("modes", "updates", "stream modes, comma-separated")
	if err := fs.Parse(env.Args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &UsageError{Msg: err.Error()}
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return &UsageError{Msg: "usage: trellis run [--url URL] [--thread ID] [--modes m1,m2] ASSISTANT ['{\"messages\": [...]}']"}
	}
	input := json.RawMessage("{}")
	if fs.NArg() == 2 {
		input = json.RawMessage(fs.Arg(1))
		if !json.Valid(input) || !strings.HasPrefix(strings.TrimSpace(fs.Arg(1)), "{") {
			return &UsageError{Msg: "the input must be a JSON object of state keys, e.g. '{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}'"}
		}
	}
	modeList := strings.Split(*modes, ",")
	if *url != "" {
		return runRemote(ctx, env, strings.TrimRight(*url, "/"), fs.Arg(0), *thread, input, modeList)
	}
	g, err := localGraph(ctx, env, fs.Arg(0))
	if err != nil {
		return err
	}
	var ms []graph.StreamMode
	for _, m := range modeList {
		gm, err := graph.ParseStreamMode(strings.TrimSpace(m))
		if err != nil {
			return &UsageError{Msg: err.Error()}
		}
		ms = append(ms, gm)
	}
	tid := *thread
	if tid == "" {
		tid = uuid.NewString()
	}
	enc := json.NewEncoder(env.Stdout)
	for ev, err := range g.Stream(ctx, input, graph.WithThread(tid), graph.WithStreamModes(ms...)) {
		if err != nil {
			var ie *graph.InterruptedError
			if errors.As(err, &ie) {
				return enc.Encode(map[string]any{"event": "interrupt", "data": ie.Interrupts})
			}
			return err
		}
		line := map[string]any{"event": string(ev.Mode), "data": ev.Data}
		if ev.Node != "" {
			line["node"] = ev.Node
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}

// runRemote streams a run from a server and prints one JSON line per event.
func runRemote(ctx context.Context, env Env, base, assistant, thread string, input json.RawMessage, modes []string) error {
	body, _ := json.Marshal(map[string]any{"assistant_id": assistant, "input": input, "stream_mode": modes})
	path := "/runs/stream"
	if thread != "" {
		path = "/threads/" + thread + "/runs/stream"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(body))
	if err != nil {
		return &UsageError{Msg: fmt.Sprintf("--url %q: %v", base, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	if key := os.Getenv("TRELLIS_API_KEY"); key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s answered %s: %s", base, resp.Status, bytes.TrimSpace(msg))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			fmt.Fprintf(env.Stdout, "{\"event\":%q,\"data\":%s}\n", event, line[len("data: "):])
		}
	}
	return sc.Err()
}
