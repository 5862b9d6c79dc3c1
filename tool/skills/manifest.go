// Package skills discovers skills and routes their tools. A skill is a directory
// skills/<dir>/ with a SKILL.md: a front matter block between "---" lines (the manifest: name,
// image, pool size, memory limit, timeout...) and a Markdown body (documentation and the
// skill's system prompt), an optional AGENT.md (the agent's identity, injected first in every
// context) and an optional env file (the only environment its workers get).
//
// [Discover] reads the manifests; a bad one is a *[ManifestError] naming the file and the field.
// [Load] starts each skill's workers in a worker.Pool, fetches their /schema and returns a
// [Registry]: the merged tools (each routed to the skill that owns it), the merged identity and
// system prompt, and the list of skills.
package skills

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Manifest is a skill as its SKILL.md describes it.
type Manifest struct {
	// Name is the skill's name (lower case letters, digits, - and _). Required.
	Name string
	// Description is one line on what the skill does.
	Description string
	// Image is the container image its workers run (the Docker runtime).
	Image string
	// Command is the program its workers run (the subprocess runtime), split on spaces.
	Command []string
	// PoolSize is how many warm workers it keeps; 0 means 2.
	PoolSize int
	// MemoryLimit caps a worker's memory in bytes ("512m", "1g", "268435456").
	MemoryLimit int64
	// Timeout bounds one tool call; 0 means 30 seconds ("30s", "2m" or a number of seconds).
	Timeout time.Duration
	// EnvFile is the skill's env file (env_file, relative to the skill's directory; ".env" when
	// that file exists). Its lines are the whole environment of the skill's workers.
	EnvFile string

	// Dir is the skill's directory and File its SKILL.md.
	Dir, File string
	// Body is SKILL.md after the front matter.
	Body string
	// Prompt is the skill's system prompt: the body's "System prompt" section when it has one,
	// the whole body otherwise.
	Prompt string
	// Agent is AGENT.md, when the skill has one.
	Agent string
}

// ManifestError is a SKILL.md that cannot be used.
type ManifestError struct {
	File    string
	Line    int    // 0 when the problem is not on one line
	Field   string // empty when the problem is not one field's
	Problem string
}

func (e *ManifestError) Error() string {
	var b strings.Builder
	b.WriteString("skills: ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Problem)
	return b.String()
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Discover reads root/*/SKILL.md, in directory order. Directories without a SKILL.md are
// skipped; a root without any skill is an error, and so is a name used twice.
func Discover(root string) ([]Manifest, error) {
	files, err := filepath.Glob(filepath.Join(root, "*", "SKILL.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("skills: no skill in %s (want %s/<skill>/SKILL.md)", root, root)
	}
	var out []Manifest
	seen := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		m, err := Parse(f, data)
		if err != nil {
			return nil, err
		}
		if prev, ok := seen[m.Name]; ok {
			return nil, &ManifestError{File: f, Field: "name", Problem: fmt.Sprintf("%q is also the name of %s; each skill needs its own", m.Name, prev)}
		}
		seen[m.Name] = f
		if a, err := os.ReadFile(filepath.Join(m.Dir, "AGENT.md")); err == nil {
			m.Agent = strings.TrimSpace(string(a))
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Parse reads one SKILL.md; file names it in errors and locates its directory.
func Parse(file string, data []byte) (Manifest, error) {
	m := Manifest{File: file, Dir: filepath.Dir(file)}
	bad := func(line int, field, format string, args ...any) (Manifest, error) {
		return Manifest{}, &ManifestError{File: file, Line: line, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return bad(1, "", `the file must start with a front matter block: a line "---", the manifest (name: ..., image: ...), and a closing "---"`)
	}
	lines := strings.Split(text, "\n")
	closing := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			closing = i
			break
		}
	}
	if closing < 0 {
		return bad(0, "", `the front matter is not closed: add a line "---" after the manifest`)
	}
	head := strings.Join(lines[1:closing], "\n")
	rest := strings.Join(lines[closing+1:], "\n")
	m.Body = strings.TrimSpace(rest)
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(head))
	line := 1
	for sc.Scan() {
		line++
		raw := sc.Text()
		s := strings.TrimSpace(raw)
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if raw[0] == ' ' || raw[0] == '\t' {
			return bad(line, "", "nested values are not supported: write each field as key: value on its own line")
		}
		key, val, ok := strings.Cut(s, ":")
		if !ok {
			return bad(line, "", "%q is not a key: value line", s)
		}
		key = strings.TrimSpace(key)
		val = unquote(stripComment(strings.TrimSpace(val)))
		if seen[key] {
			return bad(line, key, "given twice")
		}
		seen[key] = true
		switch key {
		case "name":
			if !nameRE.MatchString(val) {
				return bad(line, key, "%q is not a valid name: use lower case letters, digits, - and _", val)
			}
			m.Name = val
		case "description":
			m.Description = val
		case "image":
			m.Image = val
		case "command":
			m.Command = strings.Fields(val)
		case "pool_size", "pool-size", "poolSize":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 64 {
				return bad(line, key, "%q is not a pool size: write a whole number from 1 to 64", val)
			}
			m.PoolSize = n
		case "memory_limit", "memory-limit", "memoryLimit", "mem_limit":
			n, err := parseBytes(val)
			if err != nil {
				return bad(line, key, "%q is not a memory size: write for example 256m, 1g or a number of bytes", val)
			}
			m.MemoryLimit = n
		case "timeout":
			d, err := parseDuration(val)
			if err != nil {
				return bad(line, key, "%q is not a timeout: write for example 30s, 2m or a number of seconds", val)
			}
			m.Timeout = d
		case "env_file", "env-file", "envFile":
			m.EnvFile = val
		default:
			return bad(line, key, "unknown field; the known fields are name, description, image, command, pool_size, memory_limit, timeout and env_file")
		}
	}
	if m.Name == "" {
		return bad(0, "name", "missing: every skill needs a name (name: my-skill)")
	}
	if m.Image == "" && len(m.Command) == 0 {
		return bad(0, "image", "missing: give the image its workers run (image: ...), or a command for subprocess workers")
	}
	if m.EnvFile != "" {
		if !filepath.IsAbs(m.EnvFile) {
			m.EnvFile = filepath.Join(m.Dir, m.EnvFile)
		}
		if _, err := os.Stat(m.EnvFile); err != nil {
			return bad(0, "env_file", "%s cannot be read: %v", m.EnvFile, err)
		}
	} else if _, err := os.Stat(filepath.Join(m.Dir, ".env")); err == nil {
		m.EnvFile = filepath.Join(m.Dir, ".env")
	}
	m.Prompt = promptSection(m.Body)
	return m, nil
}

func stripComment(v string) string {
	if strings.HasPrefix(v, `"`) || strings.HasPrefix(v, `'`) {
		return v
	}
	if i := strings.Index(v, " #"); i >= 0 {
		return strings.TrimSpace(v[:i])
	}
	return v
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		if v[0] == '"' {
			if u, err := strconv.Unquote(v); err == nil {
				return u
			}
		}
		return v[1 : len(v)-1]
	}
	return v
}

func parseBytes(v string) (int64, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"gi", 1 << 30}, {"mi", 1 << 20}, {"ki", 1 << 10}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"b", 1}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("bad size")
	}
	return n * mult, nil
}

func parseDuration(v string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 {
			return 0, errors.New("not positive")
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, errors.New("bad duration")
	}
	return d, nil
}

// promptSection returns the body's "System prompt" section (a heading whose text is "System
// prompt", up to the next heading of the same or a higher level), or the whole body.
func promptSection(body string) string {
	lines := strings.Split(body, "\n")
	start, level := -1, 0
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "#") {
			continue
		}
		lv := len(t) - len(strings.TrimLeft(t, "#"))
		title := strings.ToLower(strings.TrimSpace(t[lv:]))
		if start < 0 {
			if title == "system prompt" {
				start, level = i+1, lv
			}
			continue
		}
		if lv <= level {
			return strings.TrimSpace(strings.Join(lines[start:i], "\n"))
		}
	}
	if start >= 0 {
		return strings.TrimSpace(strings.Join(lines[start:], "\n"))
	}
	return body
}

// ReadEnvFile reads KEY=value lines (blank lines, # comments and an "export " prefix allowed,
// values optionally quoted). A line without "=" is an error naming the file and line.
func ReadEnvFile(file string) ([]string, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var env []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		s = strings.TrimPrefix(s, "export ")
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("skills: %s:%d: %q is not a KEY=value line", file, n, s)
		}
		env = append(env, k+"="+unquote(strings.TrimSpace(v)))
	}
	return env, nil
}
