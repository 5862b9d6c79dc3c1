package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/peterh/liner"
)

// errChatAborted is Ctrl-C pressed while the chat waits for a line.
var errChatAborted = errors.New("cli: chat: input aborted with Ctrl-C")

// lineReader is where the chat reads the user's lines: a line editor on a terminal, a plain
// reader on a pipe. Only the chat's main goroutine calls it.
type lineReader interface {
	// readLine shows prompt and returns the line typed, without its newline. It returns
	// errChatAborted on Ctrl-C and io.EOF on Ctrl-D or at the end of the input.
	readLine(prompt string) (string, error)
	// editLine is readLine with text already typed, for the user to change.
	editLine(prompt, text string) (string, error)
	// remember adds a line to the history that the up arrow recalls.
	remember(line string)
	// close saves the history and gives the terminal back.
	close() error
}

// stdinIsTerminal reports whether the chat talks to a person at a terminal, which the line
// editor needs on both ends.
func stdinIsTerminal(in io.Reader, out io.Writer) bool {
	fi, ok := in.(*os.File)
	fo, ok2 := out.(*os.File)
	return ok && ok2 && fi == os.Stdin && fo == os.Stdout &&
		isatty.IsTerminal(fi.Fd()) && isatty.IsTerminal(fo.Fd()) && liner.TerminalSupported()
}

// linerReader edits lines with github.com/peterh/liner: arrows, Ctrl-A/E/K/U/W, Ctrl-R search,
// and a history kept in a file across sessions.
type linerReader struct {
	l       *liner.State
	history string // file; empty keeps the history in memory only
	warn    io.Writer
}

func newLinerReader(historyFile string, warn io.Writer) *linerReader {
	l := liner.NewLiner()
	l.SetCtrlCAborts(true)
	l.SetMultiLineMode(true)
	r := &linerReader{l: l, history: historyFile, warn: warn}
	if historyFile != "" {
		if f, err := os.Open(historyFile); err == nil {
			_, _ = l.ReadHistory(f)
			f.Close()
		}
	}
	return r
}

func (r *linerReader) readLine(prompt string) (string, error) {
	return r.editLine(prompt, "")
}

func (r *linerReader) editLine(prompt, text string) (string, error) {
	line, err := r.l.PromptWithSuggestion(prompt, text, -1)
	if errors.Is(err, liner.ErrPromptAborted) {
		return "", errChatAborted
	}
	return line, err
}

func (r *linerReader) remember(line string) {
	if strings.TrimSpace(line) != "" {
		r.l.AppendHistory(line)
	}
}

func (r *linerReader) close() error {
	var werr error
	if r.history != "" {
		werr = writeHistory(r.history, r.l)
		if werr != nil {
			fmt.Fprintf(r.warn, "trellis chat: the line history was not saved: %v\n", werr)
		}
	}
	return errors.Join(r.l.Close(), werr)
}

func writeHistory(path string, l *liner.State) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, werr := l.WriteHistory(f)
	return errors.Join(werr, f.Close())
}

// plainReader reads lines from a pipe or file. The prompt is written to out so a transcript
// reads like a session; a signal on interrupts (Ctrl-C) while it waits aborts the read.
type plainReader struct {
	out        io.Writer
	lines      chan plainLine
	interrupts <-chan os.Signal
	quit       chan struct{}
	stop       <-chan struct{} // closed when the chat must end (SIGTERM); nil: never
	done       bool
}

type plainLine struct {
	text string
	err  error
}

func newPlainReader(in io.Reader, out io.Writer, interrupts <-chan os.Signal) *plainReader {
	r := &plainReader{out: out, lines: make(chan plainLine), interrupts: interrupts, quit: make(chan struct{})}
	go func() {
		// The goroutine ends at the end of the input or, after close, at its next line; a chat
		// that quits while stdin stays open leaves it in a read that ends with the process.
		defer close(r.lines)
		send := func(l plainLine) bool {
			select {
			case r.lines <- l:
				return true
			case <-r.quit:
				return false
			}
		}
		br := bufio.NewReader(in)
		for {
			s, err := br.ReadString('\n')
			if (s != "" || err == nil) && !send(plainLine{text: strings.TrimRight(s, "\r\n")}) {
				return
			}
			if err != nil {
				send(plainLine{err: err})
				return
			}
		}
	}()
	return r
}

func (r *plainReader) readLine(prompt string) (string, error) {
	if r.done {
		return "", io.EOF
	}
	fmt.Fprint(r.out, prompt)
	select {
	case l, ok := <-r.lines:
		if !ok || l.err != nil {
			r.done = true
			if !ok || l.err == io.EOF {
				return "", io.EOF
			}
			return "", l.err
		}
		// Echo the line, so that the transcript of a piped session shows what was asked.
		fmt.Fprintln(r.out, l.text)
		return l.text, nil
	case <-r.interrupts:
		fmt.Fprintln(r.out, "^C")
		return "", errChatAborted
	case <-r.stop:
		return "", io.EOF
	}
}

func (r *plainReader) editLine(prompt, text string) (string, error) {
	fmt.Fprintf(r.out, "(current: %s)\n", text)
	return r.readLine(prompt)
}

func (r *plainReader) remember(string) {}

func (r *plainReader) close() error {
	close(r.quit)
	return nil
}
