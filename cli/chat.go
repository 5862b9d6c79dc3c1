package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func init() {
	register("chat", "talk to an assistant on a server: streamed answers, tool calls, approvals", runChat)
}

// errChatQuit ends the chat: /quit, Ctrl-D, or a second Ctrl-C.
var errChatQuit = errors.New("cli: chat: quit")

// chatOptions configure a chat session. runChat fills them from flags; tests set them directly.
type chatOptions struct {
	URL       string // server; required
	Assistant string // graph ID, name or assistant ID; empty asks (or takes the only one)
	APIKey    string // sent as a bearer token when set
	ConfigDir string // where chat.json and chat_history live; empty: os.UserConfigDir()/trellis
	New       bool   // start a new thread without offering to resume the last one
	// Configurable is sent as every run's config.configurable (--config key=value).
	Configurable map[string]any

	In         lineReader
	Out        io.Writer
	Interrupts <-chan os.Signal // Ctrl-C while an answer streams; nil: none
}

func runChat(ctx context.Context, env Env) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	url := fs.String("url", envOr("URL", "http://127.0.0.1:2024"), "server to talk to (TRELLIS_URL)")
	assistant := fs.String("assistant", envOr("ASSISTANT", ""), "assistant (graph ID) to talk to; asks when the server has several (TRELLIS_ASSISTANT)")
	apiKey := fs.String("api-key", "", "API key or JWT for a server with auth; TRELLIS_API_KEY when empty")
	configDir := fs.String("config-dir", envOr("CONFIG_DIR", ""), "where the last threads and the line history are kept; the user's config dir + /trellis when empty (TRELLIS_CONFIG_DIR)")
	fresh := fs.Bool("new", false, "start a new thread instead of offering to resume the last one")
	configurable := map[string]any{}
	fs.Func("config", "key=value for every run's config.configurable (repeatable; a JSON value such as true or [\"a\"] is sent as JSON, anything else as a string), e.g. --config approve_tools=true", func(kv string) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("%q is not key=value (for example approve_tools=true)", kv)
		}
		var val any
		if err := json.Unmarshal([]byte(v), &val); err != nil {
			val = v
		}
		configurable[strings.TrimSpace(k)] = val
		return nil
	})
	if err := fs.Parse(env.Args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &UsageError{Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: fmt.Sprintf("chat takes no arguments, got %q (use --assistant NAME to choose the assistant)", fs.Args())}
	}
	key := *apiKey
	if key == "" {
		key = os.Getenv("TRELLIS_API_KEY")
	}
	dir, err := chatConfigDir(*configDir)
	if err != nil {
		return err
	}

	// The process's context ends at the first Ctrl-C (cmd/trellis cancels it on SIGINT), but in
	// a chat Ctrl-C cancels the answer, and the session handles it through its own signal
	// channel. The chat ends with the context only for any other reason (SIGTERM, a caller).
	base, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	go func() {
		select {
		case <-ctx.Done():
			if cause := context.Cause(ctx); cause == nil || !strings.Contains(cause.Error(), "interrupt signal") {
				stop()
			}
		case <-base.Done():
		}
	}()

	var interrupts chan os.Signal
	if f, ok := env.Stdin.(*os.File); ok && f == os.Stdin {
		interrupts = make(chan os.Signal, 2)
		signal.Notify(interrupts, os.Interrupt)
		defer signal.Stop(interrupts)
	}
	var in lineReader
	if stdinIsTerminal(env.Stdin, env.Stdout) {
		in = newLinerReader(filepath.Join(dir, chatHistoryFile), env.Stderr)
	} else {
		pr := newPlainReader(env.Stdin, env.Stdout, interrupts)
		pr.stop = base.Done()
		in = pr
	}
	defer in.close()
	return chat(base, chatOptions{
		URL: *url, Assistant: *assistant, APIKey: key, ConfigDir: dir, New: *fresh, Configurable: configurable,
		In: in, Out: env.Stdout, Interrupts: interrupts,
	})
}

// chatSession is one `trellis chat`: a server, the assistant chosen, and the current thread.
type chatSession struct {
	opts       chatOptions
	c          *chatClient
	in         lineReader
	out        io.Writer
	state      *chatState
	assistants []chatAssistant
	asst       chatAssistant
	thread     string // empty until the first message of a new conversation
	armed      bool   // the last thing the user did was Ctrl-C: another one quits
}

// chat runs a session until the user quits or ctx ends. Problems reaching the server before
// the session starts are returned; later ones are shown and the session goes on.
func chat(ctx context.Context, o chatOptions) error {
	c, err := newChatClient(o.URL, o.APIKey)
	if err != nil {
		return err
	}
	s := &chatSession{opts: o, c: c, in: o.In, out: o.Out}
	st, err := loadChatState(o.ConfigDir)
	if err != nil {
		fmt.Fprintf(s.out, "warning: %v\n", err)
	}
	s.state = st
	if s.assistants, err = c.assistants(ctx); err != nil {
		return err
	}
	if len(s.assistants) == 0 {
		return fmt.Errorf("%s offers no assistants; register a graph with the server (see docs/server.md)", c.base)
	}
	if err := s.chooseAssistant(ctx, o.Assistant); err != nil {
		return quitIsNil(err)
	}
	fmt.Fprintf(s.out, "trellis chat: talking to %s on %s. /help lists the commands; Ctrl-D quits.\n", s.asst.label(), c.base)
	if err := s.pickThread(ctx, o.New); err != nil {
		return quitIsNil(err)
	}
	return quitIsNil(s.loop(ctx))
}

func quitIsNil(err error) error {
	if errors.Is(err, errChatQuit) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// findAssistant matches name against graph IDs, names and assistant IDs.
func (s *chatSession) findAssistant(name string) (chatAssistant, error) {
	for _, a := range s.assistants {
		if name == a.GraphID || name == a.AssistantID || name == a.Name {
			return a, nil
		}
	}
	return chatAssistant{}, fmt.Errorf("unknown assistant %q on %s (known: %s)", name, s.c.base, s.knownAssistants())
}

func (s *chatSession) knownAssistants() string {
	names := make([]string, len(s.assistants))
	for i, a := range s.assistants {
		names[i] = a.label()
	}
	return strings.Join(names, ", ")
}

// chooseAssistant takes the named assistant, the only one, or asks the user for one.
func (s *chatSession) chooseAssistant(ctx context.Context, name string) error {
	if name != "" {
		a, err := s.findAssistant(name)
		if err != nil {
			return err
		}
		s.asst = a
		return nil
	}
	if len(s.assistants) == 1 {
		s.asst = s.assistants[0]
		return nil
	}
	fmt.Fprintf(s.out, "%s offers these assistants:\n", s.c.base)
	for i, a := range s.assistants {
		fmt.Fprintf(s.out, "  %d) %s", i+1, a.label())
		if a.Description != "" {
			fmt.Fprintf(s.out, ": %s", oneLine(a.Description, 100))
		}
		fmt.Fprintln(s.out)
	}
	for {
		line, err := s.in.readLine(fmt.Sprintf("assistant (1-%d or name)> ", len(s.assistants)))
		if errors.Is(err, errChatAborted) {
			return errChatQuit
		}
		if err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(s.assistants) {
			s.asst = s.assistants[n-1]
			return nil
		}
		if a, err := s.findAssistant(line); err == nil {
			s.asst = a
			return nil
		}
		fmt.Fprintf(s.out, "no assistant %q; type a number from 1 to %d or one of: %s\n", line, len(s.assistants), s.knownAssistants())
	}
}

// pickThread offers to resume the assistant's last thread on this server; otherwise the next
// message starts a new one.
func (s *chatSession) pickThread(ctx context.Context, fresh bool) error {
	s.thread = ""
	last, ok := s.state.last(s.c.base, s.asst.label())
	if !ok || fresh {
		return nil
	}
	exists, err := s.c.threadExists(ctx, last.ThreadID)
	if err != nil {
		return err
	}
	if !exists {
		fmt.Fprintf(s.out, "your last thread with %s (%s) is gone from the server; starting a new one.\n", s.asst.label(), last.ThreadID)
		s.state.forget(s.c.base, s.asst.label())
		s.saveState()
		return nil
	}
	st, _, err := s.c.state(ctx, last.ThreadID)
	if err != nil {
		return err
	}
	msgs := st.messages()
	desc := fmt.Sprintf("%d messages", len(msgs))
	if len(msgs) == 1 {
		desc = "1 message"
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].role() == "user" {
			desc += fmt.Sprintf(", last you said %q", oneLine(msgs[i].text(), 60))
			break
		}
	}
	when := ""
	if !last.UsedAt.IsZero() {
		when = " from " + last.UsedAt.Local().Format(time.DateTime)
	}
	line, err := s.in.readLine(fmt.Sprintf("resume your last conversation%s (%s)? [Y/n] ", when, desc))
	if errors.Is(err, errChatAborted) {
		return errChatQuit
	}
	if err != nil {
		return err
	}
	if a := strings.ToLower(strings.TrimSpace(line)); a != "" && a != "y" && a != "yes" {
		fmt.Fprintln(s.out, "starting a new conversation.")
		return nil
	}
	s.thread = last.ThreadID
	s.state.remember(s.c.base, s.asst.label(), s.thread)
	s.saveState()
	fmt.Fprintf(s.out, "resumed thread %s; /history shows the conversation.\n", s.thread)
	if pending := st.pending(); len(pending) > 0 {
		fmt.Fprintln(s.out, "the run on this thread is paused and waits for your answer:")
		return s.resume(ctx, pending)
	}
	return nil
}

func (s *chatSession) saveState() {
	if err := s.state.save(s.opts.ConfigDir); err != nil {
		fmt.Fprintf(s.out, "warning: %v\n", err)
	}
}

const chatHelp = `Type a message and press Enter; the answer streams as it is written.
  /new              start a new conversation (thread)
  /history          show this conversation's messages
  /state            show the thread's state as JSON
  /answer           answer the question a paused run waits on
  /assistant [NAME] switch to another assistant (without NAME: list them)
  /help             this help
  /quit             quit (so do Ctrl-D and a second Ctrl-C)
Ctrl-C while an answer streams cancels it on the server.`

// loop reads lines until the user quits.
func (s *chatSession) loop(ctx context.Context) error {
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line, err := s.in.readLine("> ")
		if errors.Is(err, errChatAborted) {
			if s.armed {
				return errChatQuit
			}
			s.armed = true
			fmt.Fprintln(s.out, "(press Ctrl-C again or Ctrl-D to quit)")
			continue
		}
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(s.out) // Ctrl-D leaves the cursor after the prompt
			return err
		}
		if err != nil {
			return err
		}
		s.armed = false
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		s.in.remember(line)
		if line == "quit" || line == "exit" {
			return errChatQuit
		}
		if strings.HasPrefix(line, "/") {
			err = s.command(ctx, line)
		} else {
			err = s.send(ctx, line)
		}
		switch {
		case errors.Is(err, errChatQuit), errors.Is(err, io.EOF):
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case chatConnLost(err):
			fmt.Fprintf(s.out, "lost the connection to %s: %v\n", s.c.base, err)
			return err
		case err != nil:
			fmt.Fprintf(s.out, "error: %v\n", err)
		}
	}
}

// command runs one slash command.
func (s *chatSession) command(ctx context.Context, line string) error {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/help", "/?":
		fmt.Fprintln(s.out, chatHelp)
	case "/quit", "/exit", "/q":
		return errChatQuit
	case "/new":
		s.thread = ""
		s.state.forget(s.c.base, s.asst.label())
		s.saveState()
		fmt.Fprintln(s.out, "new conversation: your next message starts a new thread.")
	case "/history":
		if s.thread == "" {
			fmt.Fprintln(s.out, "(no messages yet in this conversation)")
			return nil
		}
		st, _, err := s.c.state(ctx, s.thread)
		if err != nil {
			return err
		}
		printConversation(s.out, st.messages())
	case "/state":
		if s.thread == "" {
			fmt.Fprintln(s.out, "(no thread yet: send a message first)")
			return nil
		}
		_, raw, err := s.c.state(ctx, s.thread)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out, "thread %s:\n%s\n", s.thread, prettyJSONText(raw))
	case "/answer":
		if s.thread == "" {
			fmt.Fprintln(s.out, "(no thread yet: nothing waits for an answer)")
			return nil
		}
		st, _, err := s.c.state(ctx, s.thread)
		if err != nil {
			return err
		}
		pending := st.pending()
		if len(pending) == 0 {
			fmt.Fprintln(s.out, "no run on this thread waits for an answer.")
			return nil
		}
		return s.resume(ctx, pending)
	case "/assistant":
		if arg == "" {
			fmt.Fprintf(s.out, "talking to %s; the server offers: %s\n", s.asst.label(), s.knownAssistants())
			return nil
		}
		a, err := s.findAssistant(arg)
		if err != nil {
			return err
		}
		s.asst = a
		fmt.Fprintf(s.out, "now talking to %s.\n", a.label())
		return s.pickThread(ctx, false)
	default:
		fmt.Fprintf(s.out, "unknown command %s; /help lists the commands.\n", name)
	}
	return nil
}

// streamModes are what the chat asks the server for: tokens as they are written, and each
// node's update for tool calls, tool results, answers that were not streamed, and interrupts.
var chatStreamModes = []string{"messages-tuple", "updates", "custom"}

// send posts the user's message as a new run on the thread and shows its answer.
func (s *chatSession) send(ctx context.Context, text string) error {
	if s.thread == "" {
		id, err := s.c.createThread(ctx, map[string]any{"graph_id": s.asst.GraphID, "created_by": "trellis chat"})
		if err != nil {
			return err
		}
		s.thread = id
		fmt.Fprintf(s.out, "session (thread) %s\n", id)
	}
	s.state.remember(s.c.base, s.asst.label(), s.thread)
	s.saveState()
	pending, err := s.stream(ctx, map[string]any{
		"input": map[string]any{"messages": []map[string]any{{"role": "user", "content": text}}},
	})
	if err != nil || len(pending) == 0 {
		return err
	}
	return s.resume(ctx, pending)
}

// resume asks the user to answer the interrupts a run paused at and resumes it with the
// answers, as often as the run pauses again.
func (s *chatSession) resume(ctx context.Context, pending []chatInterrupt) error {
	for len(pending) > 0 {
		var value any
		if len(pending) == 1 {
			v, err := s.answerInterrupt(pending[0])
			if err != nil {
				return s.answerGivenUp(err)
			}
			value = v
		} else {
			// Several interrupts wait at once: answer each; resume them by interrupt ID.
			byID := map[string]any{}
			for _, in := range pending {
				v, err := s.answerInterrupt(in)
				if err != nil {
					return s.answerGivenUp(err)
				}
				byID[in.ID] = v
			}
			value = byID
		}
		var err error
		pending, err = s.stream(ctx, map[string]any{"command": map[string]any{"resume": value}})
		if err != nil {
			return err
		}
	}
	return nil
}

// answerGivenUp reports a question left unanswered: the run stays paused until /answer.
func (s *chatSession) answerGivenUp(err error) error {
	if errors.Is(err, errChatAborted) || errors.Is(err, io.EOF) {
		fmt.Fprintln(s.out, "(not answered: the run stays paused; /answer answers it later, /new starts over)")
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		s.armed = true
		return nil
	}
	return err
}

// stream runs one run on the thread with body (input or command) and renders its events. It
// returns the interrupts the run paused at. Ctrl-C cancels the run on the server; a second
// Ctrl-C meanwhile quits the chat.
func (s *chatSession) stream(ctx context.Context, body map[string]any) ([]chatInterrupt, error) {
	body["assistant_id"] = s.asst.AssistantID
	body["stream_mode"] = chatStreamModes
	if len(s.opts.Configurable) > 0 {
		body["config"] = map[string]any{"configurable": s.opts.Configurable}
	}
	// Should the chat die without cancelling, the server cancels the run when the stream drops.
	body["on_disconnect"] = "cancel"

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type item struct {
		ev  sseEvent
		err error
	}
	events := make(chan item)
	go func() {
		defer close(events)
		for ev, err := range s.c.stream(runCtx, s.thread, body) {
			select {
			case events <- item{ev, err}:
			case <-runCtx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	r := newChatRenderer(s.out)
	for {
		select {
		case it, ok := <-events:
			if !ok {
				r.finish()
				if r.failed != "" {
					return nil, nil // shown already
				}
				return r.interrupts, nil
			}
			if it.err != nil {
				r.finish()
				return nil, it.err
			}
			r.handle(it.ev)
		case <-s.opts.Interrupts:
			r.finish()
			return nil, s.cancelRun(ctx, cancel, r.runID)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// cancelRun stops reading the stream and cancels the run on the server, waiting for it to
// stop so that the next message does not find the thread busy. When Ctrl-C came before the
// stream named its run, the thread's running runs are cancelled: the chat owns the thread.
func (s *chatSession) cancelRun(ctx context.Context, stopStream context.CancelFunc, runID string) error {
	stopStream()
	fmt.Fprintln(s.out, "^C cancelling the answer (Ctrl-C again quits)")
	s.armed = true
	done := make(chan error, 1)
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	go func() {
		ids := []string{runID}
		if runID == "" {
			var err error
			if ids, err = s.c.activeRuns(cctx, s.thread); err != nil {
				done <- err
				return
			}
		}
		var errs []error
		for _, id := range ids {
			err := s.c.cancelRun(cctx, s.thread, id)
			var se *APIStatusError
			// A run that ended in the meantime cannot be cancelled, and need not be.
			if errors.As(err, &se) && (se.Status == 404 || se.Status == 409) {
				err = nil
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("the run %s may still be going: %w", id, err))
			}
		}
		done <- errors.Join(errs...)
	}()
	select {
	case err := <-done:
		if err != nil {
			return err
		}
		fmt.Fprintln(s.out, "(answer cancelled)")
		return nil
	case <-s.opts.Interrupts:
		return errChatQuit
	}
}
