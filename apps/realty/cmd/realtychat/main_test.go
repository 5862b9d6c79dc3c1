package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

func TestArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "-api-key"},
		{[]string{"-nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"http://127.0.0.1:2024"}, 2, `realtychat takes no arguments, got ["http://127.0.0.1:2024"] (use -url and -api-key)`},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), c.args, strings.NewReader(""), &out, &errOut); code != c.code || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("realtychat %q: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut.String(), c.code, c.want)
		}
	}
}

// A server that is not there is an error the user reads, and exit status 1.
func TestNoServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-url", url}, strings.NewReader("quit\n"), &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), l.Addr().String()) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and an error naming %s", code, out.String(), errOut.String(), url)
	}
}
