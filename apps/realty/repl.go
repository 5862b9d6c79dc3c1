package realty

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/trellis-go/trellis/numfmt"
)

// ChatOptions configure [Chat], the app's REPL.
type ChatOptions struct {
	// URL is the server's base URL (http://127.0.0.1:2024); the app's routes are under
	// /apps/realty.
	URL string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// In and Out are the terminal.
	In  io.Reader
	Out io.Writer
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
}

// ErrLostConnection ends the REPL when the server cannot be reached.
var ErrLostConnection = errors.New("realty chat: lost the connection to the server")

type replClient struct {
	o    ChatOptions
	base string
}

func (c *replClient) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.o.APIKey)
	}
	hc := c.o.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w (%v)", ErrLostConnection, err)
	}
	return resp, nil
}

// lastSession is the most recent session, or "" when there is none.
func (c *replClient) lastSession(ctx context.Context) (string, error) {
	resp, err := c.do(ctx, http.MethodGet, "/sessions", nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("realty chat: GET /sessions answered %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	var ids []string
	if err := json.NewDecoder(resp.Body).Decode(&ids); err != nil || len(ids) == 0 {
		return "", nil
	}
	return ids[0], nil
}

// Chat is the REPL: it offers to resume the last session (y/n), prints the session ID, then
// sends each line to POST /chat/stream and prints the streamed answer, the listings as a table,
// a listing's details and the follow-up hints. It returns nil on quit, exit or the end of the
// input, ErrLostConnection when the server goes away, and ctx's error when ctx ends (Ctrl-C).
func Chat(ctx context.Context, o ChatOptions) error {
	c := &replClient{o: o, base: strings.TrimRight(o.URL, "/") + "/apps/" + Name}
	out := o.Out
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(o.In)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- io.EOF
	}()
	read := func(prompt string) (string, error) {
		fmt.Fprint(out, prompt)
		select {
		case l := <-lines:
			return strings.TrimSpace(l), nil
		case err := <-readErr:
			fmt.Fprintln(out)
			return "", err
		case <-ctx.Done():
			fmt.Fprintln(out)
			return "", ctx.Err()
		}
	}
	session := ""
	last, err := c.lastSession(ctx)
	if err != nil {
		return err
	}
	if last != "" {
		ans, err := read(fmt.Sprintf("Resume session %s? (y/n) ", last))
		if err != nil {
			return ignoreEOF(err)
		}
		if strings.HasPrefix(strings.ToLower(ans), "y") {
			session = last
		}
	}
	if session == "" {
		session = newSessionID()
	}
	fmt.Fprintf(out, "Session: %s\nAsk about homes for sale; quit or exit to leave.\n", session)
	for {
		line, err := read("> ")
		if err != nil {
			return ignoreEOF(err)
		}
		switch strings.ToLower(line) {
		case "":
			continue
		case "quit", "exit", "/quit", "/exit":
			return nil
		}
		if err := c.turn(ctx, session, line); err != nil {
			if errors.Is(err, ErrLostConnection) || ctx.Err() != nil {
				fmt.Fprintln(out, "\n"+err.Error())
				return err
			}
			fmt.Fprintln(out, "error: "+err.Error())
		}
	}
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func (c *replClient) turn(ctx context.Context, session, text string) error {
	resp, err := c.do(ctx, http.MethodPost, "/chat/stream", ChatRequest{SessionID: session, Message: text})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		var e struct{ Detail, Hint string } // the API's error shape
		if json.Unmarshal(b, &e) == nil && e.Detail != "" {
			if e.Hint != "" {
				return fmt.Errorf("%s (%s)", e.Detail, e.Hint)
			}
			return errors.New(e.Detail)
		}
		return fmt.Errorf("the server answered %d", resp.StatusCode)
	}
	out := c.o.Out
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	done := false
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e Event
		if json.Unmarshal([]byte(d), &e) != nil {
			continue
		}
		switch e.Type {
		case "token":
			fmt.Fprint(out, e.Content)
		case "data":
			fmt.Fprintln(out)
			fmt.Fprint(out, RenderData(e.Data))
		case "hints":
			fmt.Fprintln(out, "\nYou could ask:")
			for i, h := range e.Hints {
				fmt.Fprintf(out, "  %d. %s\n", i+1, h)
			}
		case "error":
			fmt.Fprintln(out)
			return errors.New(e.Message)
		case "done":
			done = true
			fmt.Fprintln(out)
		}
	}
	if !done {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w (the answer stopped before its end)", ErrLostConnection)
	}
	return nil
}

// RenderData writes listings as a table and a listing's details as a card, for a terminal.
func RenderData(d *Data) string {
	if d == nil || len(d.Items) == 0 {
		return ""
	}
	var b strings.Builder
	n := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%g", *p)
	}
	price := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("$%s", numfmt.GroupFloat(*p, ","))
	}
	if d.Type == "detail" {
		l := d.Items[0]
		fmt.Fprintf(&b, "┌ %s\n│ %s · %s bd · %s ba · %s sqft · %s\n", l.Address, price(l.Price), n(l.Beds), n(l.Baths), n(l.Sqft), l.PropertyType)
		if l.YearBuilt != nil {
			fmt.Fprintf(&b, "│ built %d", *l.YearBuilt)
		}
		if l.LotSize != nil {
			fmt.Fprintf(&b, " · lot %s sqft", numfmt.GroupFloat(*l.LotSize, ","))
		}
		if l.HOAFee != nil {
			fmt.Fprintf(&b, " · HOA %s/mo", price(l.HOAFee))
		}
		if l.Zestimate != nil {
			z := float64(*l.Zestimate)
			fmt.Fprintf(&b, " · zestimate %s", price(&z))
		}
		b.WriteString("\n")
		if l.Lat != nil && l.Lng != nil {
			fmt.Fprintf(&b, "│ map: https://www.openstreetmap.org/?mlat=%.5f&mlon=%.5f#map=16/%.5f/%.5f\n", *l.Lat, *l.Lng, *l.Lat, *l.Lng)
		}
		fmt.Fprintf(&b, "└ %s\n", l.URL)
		return b.String()
	}
	fmt.Fprintf(&b, "%-10s  %-42s  %12s  %4s  %4s  %6s\n", "zpid", "address", "price", "beds", "bath", "sqft")
	for _, l := range d.Items {
		addr := l.Address
		if len([]rune(addr)) > 42 {
			addr = string([]rune(addr)[:41]) + "…"
		}
		fmt.Fprintf(&b, "%-10s  %-42s  %12s  %4s  %4s  %6s\n", l.ZPID, addr, price(l.Price), n(l.Beds), n(l.Baths), n(l.Sqft))
	}
	return b.String()
}

func newSessionID() string { return uuid.NewString() }
