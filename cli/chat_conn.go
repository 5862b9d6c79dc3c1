package cli

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// chatConnLost reports whether err means the server cannot be reached any more (refused, reset,
// closed mid-answer), as opposed to an error the server answered with: the chat ends on it.
func chatConnLost(err error) bool {
	if err == nil {
		return false
	}
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}
