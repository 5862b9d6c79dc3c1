package ui_test

import (
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/apps/example"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server"
)

// chromium is Debian's build, which .ci/run installs; TRELLIS_CHROMIUM names another.
func chromium() string {
	if p := os.Getenv("TRELLIS_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// inboxApp is a test app whose graph asks a person before it acts, with an Agent Inbox
// interrupt (a HumanInterrupt allowing accept, edit, respond and ignore), and then says what it
// was told: the inbox cards' four answers are checked through it.
func inboxApp() server.App {
	return server.App{
		Name:        "inbox",
		Description: "A test app that asks before sending an email.",
		Build: func(_ context.Context, d server.AppDeps) (*server.AppParts, error) {
			g := graph.New[react.State]()
			g.AddNode("draft", func(ctx context.Context, s react.State) (react.State, error) {
				return react.State{Messages: []message.Message{message.Assistant("I would send an email to ana@example.com.")}}, nil
			})
			g.AddNode("review", func(ctx context.Context, s react.State) (react.State, error) {
				v, err := graph.Interrupt(ctx, []map[string]any{{
					"action_request": map[string]any{"action": "send_email", "args": map[string]any{"to": "ana@example.com", "subject": "Hello"}},
					"config":         map[string]any{"allow_accept": true, "allow_edit": true, "allow_respond": true, "allow_ignore": true},
					"description":    "Send this email?",
				}})
				if err != nil {
					return react.State{}, err
				}
				b, _ := json.Marshal(v)
				return react.State{Messages: []message.Message{message.Assistant("You answered " + string(b))}}, nil
			})
			g.AddSequence(graph.START, "draft", "review", graph.END)
			c, err := g.Compile(graph.CompileOptions{Name: "inbox", Saver: d.Compile.Saver, Store: d.Compile.Store})
			if err != nil {
				return nil, err
			}
			// slow works until its run is cancelled (or a minute passes): for the cancel button.
			sg := graph.New[react.State]()
			sg.AddNode("work", func(ctx context.Context, s react.State) (react.State, error) {
				select {
				case <-ctx.Done():
					return react.State{}, ctx.Err()
				case <-time.After(time.Minute):
					return react.State{Messages: []message.Message{message.Assistant("Done at last.")}}, nil
				}
			})
			sg.AddSequence(graph.START, "work", graph.END)
			sc, err := sg.Compile(graph.CompileOptions{Name: "slow", Saver: d.Compile.Saver, Store: d.Compile.Store})
			if err != nil {
				return nil, err
			}
			return &server.AppParts{Graphs: []server.AppGraph{
				{ID: "inbox", Graph: c.Runnable(), Description: "Asks before it sends an email."},
				{ID: "slow", Graph: sc.Runnable(), Description: "Works until it is cancelled."},
			}}, nil
		},
	}
}

// serve starts a trellis server with the example app, the inbox app and the UI on a loopback port.
func serve(t *testing.T, cfg server.Config) string {
	t.Helper()
	cfg.Apps = []server.App{example.App(), inboxApp()}
	return serveConfig(t, cfg)
}

// TestBrowser drives the UI in Chromium through every flow of e2e/run.mjs (the shell, chat
// with streamed tokens, a breakpoint approved, a fork from an older checkpoint, the graph, the
// store, threads, sign-in with an API key), then checks each screenshot it saved.
func TestBrowser(t *testing.T) {
	const key = "ui-e2e-key-0123456789abcdef"
	dev := serve(t, server.Config{Dev: true})
	withKey := serve(t, server.Config{Auth: server.AuthConfig{APIKeys: map[string]server.Principal{
		key: {User: "ana", Tenant: "e2e", Permissions: []string{"*"}},
	}}})
	drive(t, flow{script: "run.mjs", base: dev, extra: []string{withKey}, env: []string{"TRELLIS_E2E_API_KEY=" + key}, timeout: 8 * time.Minute,
		screenshots: []string{"01-home", "02-home-dark", "03-app", "04-phone-menu", "05-chat", "06-breakpoint", "07-approved",
			"08-fork-editor", "09-run-progress", "10-thread-tree", "10-thread", "11-graph", "12-store", "13-threads", "14-sign-in", "15-inbox", "16-cancel"}})
}

// checkScreenshot fails when a screenshot is missing, tiny or blank: a page that rendered shows
// text and controls, so many colours, none of which covers nearly all of it.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	b := img.Bounds()
	if b.Dx() < 300 || b.Dy() < 300 {
		t.Errorf("%s is %dx%d", filepath.Base(path), b.Dx(), b.Dy())
		return
	}
	// Colours quantized to 5 bits a channel, every other pixel; the pixels are read directly
	// when the PNG decodes to RGBA (Chromium's do), which is much faster under -race.
	counts := map[uint32]int{}
	total := 0
	add := func(r, g, bl uint32) {
		counts[(r>>3)<<10|(g>>3)<<5|bl>>3]++
		total++
	}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			switch m := img.(type) {
			case *image.RGBA:
				i := m.PixOffset(x, y)
				add(uint32(m.Pix[i]), uint32(m.Pix[i+1]), uint32(m.Pix[i+2]))
			case *image.NRGBA:
				i := m.PixOffset(x, y)
				add(uint32(m.Pix[i]), uint32(m.Pix[i+1]), uint32(m.Pix[i+2]))
			default:
				r, g, bl, _ := img.At(x, y).RGBA()
				add(r>>8, g>>8, bl>>8)
			}
		}
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	if len(counts) < 8 || top*100 > total*99 {
		t.Errorf("%s looks blank: %d colours, the commonest covers %d%%", filepath.Base(path), len(counts), top*100/total)
	}
}
