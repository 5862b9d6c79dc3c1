package worker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// connWorker speaks HTTP/1.1 to a worker over the one connection the two share (the parent's
// end of a subprocess's socket pair): no dialling, no connection pool, no port. Exchanges are
// one at a time.
type connWorker struct {
	mu   sync.Mutex
	conn net.Conn
	br   *bufio.Reader
	buf  bytes.Buffer
}

func newConnWorker(c net.Conn) *connWorker {
	return &connWorker{conn: c, br: bufio.NewReaderSize(c, 16<<10)}
}

// past is a deadline already gone, to interrupt a blocked read or write.
var past = time.Unix(1, 0)

// exchange sends one request and reads its answer within ctx.
func (c *connWorker) exchange(ctx context.Context, method, path string, body []byte, limit int64) (int, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The context alone ends the exchange (so its error, not the connection's, is reported).
	if err := c.conn.SetDeadline(time.Time{}); err != nil {
		return 0, nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(past) })
	defer stop()
	b := &c.buf
	b.Reset()
	b.WriteString(method)
	b.WriteByte(' ')
	b.WriteString(path)
	b.WriteString(" HTTP/1.1\r\nHost: worker\r\n")
	if body != nil {
		b.WriteString("Content-Type: application/json\r\nContent-Length: ")
		b.WriteString(strconv.Itoa(len(body)))
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	if _, err := c.conn.Write(b.Bytes()); err != nil {
		return 0, nil, c.fail(ctx, err)
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, nil, c.fail(ctx, err)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	resp.Body.Close()
	if err != nil {
		return 0, nil, c.fail(ctx, err)
	}
	return resp.StatusCode, raw, nil
}

// fail prefers the context's error (a timeout, a cancellation) to the connection's.
func (c *connWorker) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the worker closed the connection (it exited)")
	}
	return err
}

func (c *connWorker) close() error { return c.conn.Close() }

// oneConn is a listener that yields one connection, then blocks until closed: a worker serving
// its parent's socket serves nothing else.
type oneConn struct {
	once sync.Once
	c    chan net.Conn
	done chan struct{}
	addr net.Addr
}

func newOneConn(c net.Conn) *oneConn {
	l := &oneConn{c: make(chan net.Conn, 1), done: make(chan struct{}), addr: c.LocalAddr()}
	l.c <- c
	return l
}

func (l *oneConn) Accept() (net.Conn, error) {
	select {
	case c := <-l.c:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *oneConn) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *oneConn) Addr() net.Addr {
	if l.addr == nil {
		return &net.UnixAddr{Name: "fd", Net: "unix"}
	}
	return l.addr
}
