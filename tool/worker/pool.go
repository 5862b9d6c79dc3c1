package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trellis-go/trellis/model"
)

// Spec is what the pool needs to know of a skill.
type Spec struct {
	// Name names the skill; workers are named <Name>_<n>.
	Name string
	// Image is the container image (the Docker runtime).
	Image string
	// Command is the program and its arguments (the subprocess runtime).
	Command []string
	// PoolSize is how many warm workers the skill keeps; zero means 1.
	PoolSize int
	// MemoryLimit caps a worker's memory in bytes; zero means no limit. Docker enforces it;
	// a subprocess gets it as GOMEMLIMIT (a Go worker's soft limit).
	MemoryLimit int64
	// Timeout bounds one call; zero means 30 seconds.
	Timeout time.Duration
	// Env is the worker's whole environment as KEY=value lines: the skill's env file, and
	// nothing of the server's.
	Env []string
}

func (s Spec) size() int {
	if s.PoolSize <= 0 {
		return 1
	}
	return s.PoolSize
}

func (s Spec) timeout() time.Duration {
	if s.Timeout <= 0 {
		return 30 * time.Second
	}
	return s.Timeout
}

// Runtime starts workers.
type Runtime interface {
	// Start starts the worker called name for the skill and returns once it has an address
	// (it may not answer yet).
	Start(ctx context.Context, spec Spec, name string) (Instance, error)
}

// Instance is one running worker.
type Instance interface {
	Name() string
	// URL is the worker's base URL, for /schema and /execute.
	URL() string
	// Stop stops and removes the worker; it is gone when Stop returns.
	Stop(ctx context.Context) error
}

// ReadyInstance is an Instance whose runtime knows that it answers already (a subprocess that
// wrote its ready line). Once a skill's schema is known, the pool puts such a worker in the queue
// without polling its /schema.
type ReadyInstance interface {
	Instance
	Ready() bool
}

// exchangerInstance is a worker reached over a connection of its own (a subprocess on its socket
// pair) rather than through the HTTP client.
type exchangerInstance interface {
	exchanger() *connWorker
}

func exchangerOf(inst Instance) *connWorker {
	if e, ok := inst.(exchangerInstance); ok {
		return e.exchanger()
	}
	return nil
}

// Errors of the pool.
var (
	ErrUnknownSkill = errors.New("worker: unknown skill")
	ErrClosed       = errors.New("worker: the pool is stopped")
	ErrTimeout      = errors.New("worker: the call timed out")
)

// Options configure a [Pool]; the zero value of each field is a documented default.
type Options struct {
	// SchemaTimeout bounds the polling of a new worker's /schema; zero means 15 seconds.
	SchemaTimeout time.Duration
	// Logger records replacements that fail; nil means slog.Default().
	Logger *slog.Logger
	// CheckoutTimeout bounds the wait for a free worker when all are busy or being replaced;
	// zero means 30 seconds. The skill's timeout starts once a worker is checked out.
	CheckoutTimeout time.Duration
	// Client posts the calls; nil means a client with keep-alive connections to loopback.
	Client *http.Client
}

// Pool keeps warm workers per skill. Safe for concurrent use.
type Pool struct {
	rt     Runtime
	o      Options
	client *http.Client

	mu     sync.Mutex
	skills map[string]*skillPool
	closed bool
	bg     sync.WaitGroup
	stop   chan struct{}
}

type skillPool struct {
	spec   Spec
	idle   chan Instance
	schema Schema
	seq    atomic.Int64
	mu     sync.Mutex
	live   map[string]Instance // every started worker not yet stopped

	calls, replaced atomic.Int64
}

// NewPool returns a pool that starts workers through rt (nil means [Subprocess]).
func NewPool(rt Runtime, o *Options) *Pool {
	if rt == nil {
		rt = &Subprocess{}
	}
	p := &Pool{rt: rt, skills: map[string]*skillPool{}, stop: make(chan struct{})}
	if o != nil {
		p.o = *o
	}
	p.client = p.o.Client
	if p.client == nil {
		p.client = &http.Client{Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     30 * time.Second,
		}}
	}
	return p
}

func (p *Pool) log() *slog.Logger {
	if p.o.Logger != nil {
		return p.o.Logger
	}
	return slog.Default()
}

func (p *Pool) checkoutTimeout() time.Duration {
	if p.o.CheckoutTimeout <= 0 {
		return 30 * time.Second
	}
	return p.o.CheckoutTimeout
}

func (p *Pool) schemaTimeout() time.Duration {
	if p.o.SchemaTimeout <= 0 {
		return 15 * time.Second
	}
	return p.o.SchemaTimeout
}

// Start starts spec.PoolSize workers of the skill, waits until the first answers /schema (see
// [Pool.Schema]) and fills the skill's queue. Starting a skill twice is an error.
func (p *Pool) Start(ctx context.Context, spec Spec) error {
	if spec.Name == "" {
		return errors.New("worker: the skill has no name")
	}
	sp := &skillPool{spec: spec, idle: make(chan Instance, spec.size()), live: map[string]Instance{}}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	if _, ok := p.skills[spec.Name]; ok {
		p.mu.Unlock()
		return fmt.Errorf("worker: skill %q started twice", spec.Name)
	}
	p.skills[spec.Name] = sp
	p.mu.Unlock()
	type started struct {
		inst Instance
		err  error
	}
	results := make(chan started, spec.size())
	for range spec.size() {
		go func() {
			inst, err := p.startReady(ctx, sp)
			results <- started{inst, err}
		}()
	}
	var first error
	for range spec.size() {
		r := <-results
		if r.err != nil {
			if first == nil {
				first = r.err
			}
			continue
		}
		sp.idle <- r.inst
	}
	if first != nil {
		return first
	}
	return nil
}

// startReady starts a worker and polls its /schema until it answers.
func (p *Pool) startReady(ctx context.Context, sp *skillPool) (Instance, error) {
	name := fmt.Sprintf("%s_%d", sp.spec.Name, sp.seq.Add(1)-1)
	inst, err := p.rt.Start(ctx, sp.spec, name)
	if err != nil {
		return nil, fmt.Errorf("worker: starting %s: %w", name, err)
	}
	sp.mu.Lock()
	sp.live[name] = inst
	known := sp.schema.Tools != nil
	sp.mu.Unlock()
	if r, ok := inst.(ReadyInstance); ok && known && r.Ready() {
		// The schema is fetched once per skill; a worker that signalled it is ready joins as it is.
		return inst, nil
	}
	schema, err := p.fetchSchema(ctx, inst)
	if err != nil {
		p.stopInstance(sp, inst)
		return nil, err
	}
	sp.mu.Lock()
	if sp.schema.Tools == nil {
		sp.schema = schema
	}
	sp.mu.Unlock()
	return inst, nil
}

// fetchSchema polls GET /schema with growing pauses until it answers 200 or SchemaTimeout passes.
func (p *Pool) fetchSchema(ctx context.Context, inst Instance) (Schema, error) {
	ctx, cancel := context.WithTimeout(ctx, p.schemaTimeout())
	defer cancel()
	wait := 10 * time.Millisecond
	var last error
	for {
		s, err := p.getSchema(ctx, inst)
		if err == nil {
			return s, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return Schema{}, fmt.Errorf("worker: %s did not answer GET /schema within %s: %w", inst.Name(), p.schemaTimeout(), last)
		case <-time.After(wait):
		}
		wait = min(wait*2, 500*time.Millisecond)
	}
}

func (p *Pool) getSchema(ctx context.Context, inst Instance) (Schema, error) {
	code, body, err := p.exchange(ctx, inst, http.MethodGet, "/schema", nil, 4<<20)
	if err != nil {
		return Schema{}, err
	}
	if code != http.StatusOK {
		return Schema{}, fmt.Errorf("GET /schema answered %d", code)
	}
	var s Schema
	if err := json.Unmarshal(body, &s); err != nil {
		return Schema{}, fmt.Errorf("GET /schema: %w", err)
	}
	if s.Tools == nil {
		s.Tools = []model.ToolSpec{}
	}
	return s, nil
}

// exchange sends one request to a worker: over its own connection when it has one, otherwise
// through the pool's HTTP client.
func (p *Pool) exchange(ctx context.Context, inst Instance, method, path string, body []byte, limit int64) (int, []byte, error) {
	if cw := exchangerOf(inst); cw != nil {
		return cw.exchange(ctx, method, path, body, limit)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, inst.URL()+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, fmt.Errorf("reading %s's answer: %w", inst.Name(), err)
	}
	return resp.StatusCode, raw, nil
}

func (p *Pool) skill(name string) (*skillPool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	sp, ok := p.skills[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownSkill, name)
	}
	return sp, nil
}

// Schema returns the tools of a started skill, as its first worker answered GET /schema.
func (p *Pool) Schema(skill string) (Schema, error) {
	sp, err := p.skill(skill)
	if err != nil {
		return Schema{}, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.schema, nil
}

// Execute runs one tool call on a worker of the skill: it checks a worker out (waiting for one
// up to Options.CheckoutTimeout), posts the call within the skill's timeout (or timeout, when
// positive), and replaces the worker in the background whatever the outcome.
func (p *Pool) Execute(ctx context.Context, skill, toolName string, params json.RawMessage, timeout time.Duration) (*Result, error) {
	sp, err := p.skill(skill)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = sp.spec.timeout()
	}
	var inst Instance
	select {
	case inst = <-sp.idle:
	default:
		// Every worker is busy or being replaced: wait for one, within CheckoutTimeout.
		wait := time.NewTimer(p.checkoutTimeout())
		select {
		case inst = <-sp.idle:
			wait.Stop()
		case <-wait.C:
			return nil, fmt.Errorf("%w: no %s worker was free within %s", ErrTimeout, skill, p.checkoutTimeout())
		case <-ctx.Done():
			wait.Stop()
			return nil, ctx.Err()
		case <-p.stop:
			wait.Stop()
			return nil, ErrClosed
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sp.calls.Add(1)
	defer p.replace(sp, inst)
	body, err := json.Marshal(Call{Tool: toolName, Params: params})
	if err != nil {
		return nil, fmt.Errorf("worker: the arguments of %s are not JSON: %w", toolName, err)
	}
	code, raw, err := p.exchange(ctx, inst, http.MethodPost, "/execute", body, 16<<20)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: %s on %s gave no answer within %s", ErrTimeout, toolName, inst.Name(), timeout)
		}
		return nil, fmt.Errorf("worker: %s on %s: %w", toolName, inst.Name(), err)
	}
	var rep Reply
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("worker: %s answered %d with a body that is not JSON", inst.Name(), code)
	}
	if rep.Error != "" {
		return nil, fmt.Errorf("worker: %s: %s", toolName, rep.Error)
	}
	if rep.Result == nil {
		return nil, fmt.Errorf("worker: %s answered without a result", inst.Name())
	}
	return rep.Result, nil
}

// replace stops a used worker and starts a fresh one in its place, in the background.
func (p *Pool) replace(sp *skillPool, used Instance) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.stopInstance(sp, used)
		return
	}
	p.bg.Add(1)
	p.mu.Unlock()
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		p.stopInstance(sp, used)
	}()
	go func() {
		defer p.bg.Done()
		wait := 50 * time.Millisecond
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-p.stop:
				case <-ctx.Done():
				}
				cancel()
			}()
			inst, err := p.startReady(ctx, sp)
			cancel()
			if err == nil {
				select {
				case <-p.stop:
					p.stopInstance(sp, inst)
				default:
					sp.replaced.Add(1)
					sp.idle <- inst
				}
				return
			}
			select {
			case <-p.stop:
				return
			default:
			}
			p.log().Warn("worker: replacing a worker failed; retrying", "skill", sp.spec.Name, "err", err)
			select {
			case <-p.stop:
				return
			case <-time.After(wait):
			}
			wait = min(wait*2, 5*time.Second)
		}
	}()
}

func (p *Pool) stopInstance(sp *skillPool, inst Instance) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := inst.Stop(ctx); err != nil {
		p.log().Warn("worker: stopping a worker failed", "worker", inst.Name(), "err", err)
	}
	sp.mu.Lock()
	delete(sp.live, inst.Name())
	sp.mu.Unlock()
}

// Stats counts a skill's workers.
type Stats struct {
	// Idle workers are warm and free; Live are all started and not yet stopped.
	Idle, Live int
	// Calls made and workers replaced since the start.
	Calls, Replaced int64
}

// Stats returns the skill's counts.
func (p *Pool) Stats(skill string) (Stats, error) {
	sp, err := p.skill(skill)
	if err != nil {
		return Stats{}, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return Stats{Idle: len(sp.idle), Live: len(sp.live), Calls: sp.calls.Load(), Replaced: sp.replaced.Load()}, nil
}

// Live names every started worker not yet stopped, of every skill.
func (p *Pool) Live() []string {
	p.mu.Lock()
	sps := make([]*skillPool, 0, len(p.skills))
	for _, sp := range p.skills {
		sps = append(sps, sp)
	}
	p.mu.Unlock()
	var names []string
	for _, sp := range sps {
		sp.mu.Lock()
		for n := range sp.live {
			names = append(names, n)
		}
		sp.mu.Unlock()
	}
	return names
}

// StopAll stops every worker of every skill, waits for the replacements under way, and leaves
// nothing running. The pool cannot be used afterwards. Calling it again does nothing.
func (p *Pool) StopAll(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.stop)
	sps := make([]*skillPool, 0, len(p.skills))
	for _, sp := range p.skills {
		sps = append(sps, sp)
	}
	p.mu.Unlock()
	p.bg.Wait()
	var errs []error
	var wg sync.WaitGroup
	var emu sync.Mutex
	for _, sp := range sps {
		sp.mu.Lock()
		insts := make([]Instance, 0, len(sp.live))
		for _, in := range sp.live {
			insts = append(insts, in)
		}
		sp.mu.Unlock()
		for _, in := range insts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := in.Stop(ctx); err != nil {
					emu.Lock()
					errs = append(errs, fmt.Errorf("worker: stopping %s: %w", in.Name(), err))
					emu.Unlock()
				}
				sp.mu.Lock()
				delete(sp.live, in.Name())
				sp.mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if t, ok := p.client.Transport.(*http.Transport); ok && p.o.Client == nil {
		t.CloseIdleConnections()
	}
	return errors.Join(errs...)
}
