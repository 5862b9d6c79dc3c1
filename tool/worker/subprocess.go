package worker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Subprocess is the default runtime: each worker is a child process that serves HTTP on one end
// of a Unix socket pair it inherits as file descriptor 3 (TRELLIS_WORKER_FD), the pool holding the
// other end: no port, no socket file, nothing to dial, and no other process can reach the worker.
// The child's environment is the skill's Spec.Env and the pool's own variables (TRELLIS_WORKER,
// TRELLIS_WORKER_FD, TRELLIS_WORKER_ADDR, GOMEMLIMIT when a memory limit is set), never the
// server's. The child writes "TRELLIS_WORKER_READY fd:3" on its first line of output once it
// serves the socket (ServeIfChild does); a program that does not know the socket listens on
// TRELLIS_WORKER_ADDR (a loopback port) instead and writes "TRELLIS_WORKER_READY <url>", and the
// pool reaches it over HTTP. Either way the ready line is the readiness signal: nothing is polled.
type Subprocess struct {
	// Command, when set, replaces Spec.Command for every skill: the program and its arguments.
	// The default is Spec.Command; a skill with neither is an error.
	Command func(spec Spec) ([]string, error)
	// StartTimeout bounds the wait for the ready line; zero means 15 seconds.
	StartTimeout time.Duration
	// NoSocket, when true, does not hand the child a socket: it listens on a loopback port.
	NoSocket bool
}

// Start starts the child and waits for its ready line.
func (s *Subprocess) Start(ctx context.Context, spec Spec, name string) (Instance, error) {
	argv := spec.Command
	if s.Command != nil {
		var err error
		if argv, err = s.Command(spec); err != nil {
			return nil, err
		}
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("skill %q has no command to start a subprocess worker with", spec.Name)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	env := append([]string{}, spec.Env...)
	env = append(env, EnvName+"="+spec.Name, EnvAddr+"=127.0.0.1:0")
	if spec.MemoryLimit > 0 {
		env = append(env, "GOMEMLIMIT="+strconv.FormatInt(spec.MemoryLimit, 10))
	}
	var mine *os.File // the pool's end of the socket pair
	if !s.NoSocket {
		// Close-on-exec on both ends: only this child gets its end, as fd 3.
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("a socket pair for %s: %w", name, err)
		}
		mine = os.NewFile(uintptr(fds[0]), name+"-pool")
		theirs := os.NewFile(uintptr(fds[1]), name+"-worker")
		defer theirs.Close() // on a failure to start; otherwise closed as soon as the child has it
		cmd.ExtraFiles = []*os.File{theirs}
		env = append(env, EnvFD+"=3")
	}
	closeMine := func() {
		if mine != nil {
			mine.Close()
		}
	}
	cmd.Env = env
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		closeMine()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		closeMine()
		return nil, err
	}
	for _, f := range cmd.ExtraFiles {
		f.Close() // the child has its copy
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent && strings.HasPrefix(line, ReadyPrefix) {
				ready <- strings.TrimSpace(strings.TrimPrefix(line, ReadyPrefix))
				sent = true
			}
		}
		if !sent {
			close(ready)
		}
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	timeout := s.StartTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case url, ok := <-ready:
		if !ok {
			closeMine()
			<-p.done
			return nil, fmt.Errorf("%s exited before it listened: %v", name, p.err)
		}
		if strings.HasPrefix(url, "fd:") && mine != nil {
			c, err := net.FileConn(mine)
			mine.Close()
			if err != nil {
				_ = p.Stop(context.Background())
				return nil, fmt.Errorf("%s: the socket pair: %w", name, err)
			}
			p.conn = newConnWorker(c)
			p.url = "http://" + name + ".worker"
			return p, nil
		}
		closeMine()
		if !strings.HasPrefix(url, "http://") {
			_ = p.Stop(context.Background())
			return nil, fmt.Errorf("%s wrote a ready line with %q, which is neither fd:3 nor an http:// URL", name, url)
		}
		p.url = url
		return p, nil
	case <-t.C:
		closeMine()
		_ = p.Stop(context.Background())
		return nil, fmt.Errorf("%s wrote no ready line within %s", name, timeout)
	case <-ctx.Done():
		closeMine()
		_ = p.Stop(context.Background())
		return nil, ctx.Err()
	}
}

type process struct {
	name, url string
	cmd       *exec.Cmd
	conn      *connWorker // the socket pair, when the child serves it
	done      chan struct{}
	err       error
	once      sync.Once
}

func (p *process) Name() string { return p.name }
func (p *process) URL() string  { return p.url }

// Ready reports that the child wrote its ready line: it answers already.
func (p *process) Ready() bool { return true }

func (p *process) exchanger() *connWorker { return p.conn }

// PID is the child's process ID.
func (p *process) PID() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM to the child's process group, then SIGKILL after two seconds (or when ctx
// ends), and returns once the child is reaped.
func (p *process) Stop(ctx context.Context) error {
	p.once.Do(func() {
		if p.conn != nil {
			// A worker on the socket pair exits as soon as its connection closes.
			_ = p.conn.close()
		}
		pgid := p.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(2 * time.Second)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
		case <-ctx.Done():
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	})
	return nil
}

// PIDOf returns the process ID of a subprocess worker, for tests and diagnostics.
func PIDOf(inst Instance) (int, error) {
	p, ok := inst.(*process)
	if !ok {
		return 0, errors.New("worker: not a subprocess worker")
	}
	return p.PID(), nil
}
