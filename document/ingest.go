package document

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/trellis-go/trellis/store"
)

// IngestOptions control Ingest. Namespace is required; the rest have documented defaults.
type IngestOptions struct {
	// Namespace receives the chunks, e.g. {"kb", "acme"}.
	Namespace []string
	// Chunk controls chunking; the zero value is ChunkOptions' defaults.
	Chunk ChunkOptions
	// Metadata is added to every chunk of every file.
	Metadata map[string]any
	// Progress, when not nil, is called after each file (see ProgressBar).
	Progress func(Progress)
	// Force re-ingests files whose content has not changed.
	Force bool
}

// Progress reports the state of an ingestion after a file.
type Progress struct {
	File       string
	FilesDone  int
	FilesTotal int
	Chunks     int  // chunks written so far
	Unchanged  bool // File was skipped because its content had not changed
	Err        error
}

// FileError is a file Ingest could not read.
type FileError struct {
	Path string
	Err  error
}

func (e FileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Summary is what Ingest did.
type Summary struct {
	Files     int // files ingested (new or changed)
	Unchanged int // files skipped because they had not changed
	Chunks    int // chunks written
	Removed   int // stale chunks deleted (a changed file that shrank)
	Failed    []FileError
	Duration  time.Duration
}

// String renders the summary on one line for a command's output.
func (s Summary) String() string {
	out := fmt.Sprintf("ingested %d file(s) into %d chunk(s), %d unchanged, %d stale chunk(s) removed, %d failed, in %s",
		s.Files, s.Chunks, s.Unchanged, s.Removed, len(s.Failed), s.Duration.Round(time.Millisecond))
	for _, f := range s.Failed {
		out += "\n  failed: " + f.Error()
	}
	return out
}

// ManifestNamespace is where Ingest records what it ingested from each file, under the chunks'
// namespace: {"_ingest", <namespace labels>...}. It lives apart so searches of the chunk
// namespace never return manifests.
func ManifestNamespace(ns []string) []string { return append([]string{"_ingest"}, ns...) }

// Ingest loads the files at paths (directories are walked for .txt, .md and .html files),
// splits them into chunks and puts each chunk into s under opts.Namespace, with its text
// indexed for search. A file whose content has not changed since the last ingestion into the
// same namespace is skipped, so running it twice stores nothing twice; a changed file replaces
// its chunks, and chunks it no longer has are deleted.
//
// A file that cannot be read is recorded in Summary.Failed and the rest go on; a store error
// stops the ingestion and is returned with the summary so far.
//
// Each chunk is stored under the key "<hash of source>:<index>" with the value
//
//	{"text": ..., "source": path, "title": ..., "headings": [...], "chunk": i, "tokens": n, ...metadata}
func Ingest(ctx context.Context, s store.Store, paths []string, opts IngestOptions) (Summary, error) {
	start := time.Now()
	var sum Summary
	if err := store.ValidateNamespace("ingest", opts.Namespace); err != nil {
		return sum, err
	}
	if _, err := opts.Chunk.withDefaults(); err != nil {
		return sum, err
	}
	if len(paths) == 0 {
		return sum, errors.New("document: ingest: no paths given (name files or folders to ingest)")
	}
	files, failed := expand(paths)
	sum.Failed = append(sum.Failed, failed...)
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		unchanged, chunks, removed, err := ingestFile(ctx, s, f, opts)
		p := Progress{File: f, FilesDone: i + 1, FilesTotal: len(files), Unchanged: unchanged}
		switch {
		case err != nil && isStoreErr(err):
			sum.Duration = time.Since(start)
			return sum, fmt.Errorf("document: ingest %s: %w", f, err)
		case err != nil:
			sum.Failed = append(sum.Failed, FileError{f, err})
			p.Err = err
		case unchanged:
			sum.Unchanged++
		default:
			sum.Files++
			sum.Chunks += chunks
			sum.Removed += removed
		}
		p.Chunks = sum.Chunks
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}
	sum.Duration = time.Since(start)
	return sum, nil
}

type storeErr struct{ error }

func (e storeErr) Unwrap() error { return e.error }

func isStoreErr(err error) bool {
	var se storeErr
	return errors.As(err, &se)
}

// expand turns paths into a sorted list of loadable files.
func expand(paths []string) ([]string, []FileError) {
	var files []string
	var failed []FileError
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			failed = append(failed, FileError{p, err})
			continue
		}
		if !info.IsDir() {
			add(filepath.Clean(p))
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				failed = append(failed, FileError{path, err})
				return nil
			}
			if d.IsDir() && path != p && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && KindOf(path) != "" {
				add(path)
			}
			return nil
		})
		if err != nil {
			failed = append(failed, FileError{p, err})
		}
	}
	sort.Strings(files)
	return files, failed
}

func sourceKey(source string) string {
	abs, err := filepath.Abs(source)
	if err != nil {
		abs = source
	}
	h := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(h[:8])
}

func ingestFile(ctx context.Context, s store.Store, path string, opts IngestOptions) (unchanged bool, chunks, removed int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, 0, 0, err
	}
	kind := KindOf(path)
	if kind == "" {
		return false, 0, 0, fmt.Errorf("%w (readable: .txt .md .markdown .html .htm)", ErrUnsupported)
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	key := sourceKey(path)
	mns := ManifestNamespace(opts.Namespace)
	oldChunks := 0
	prev, gerr := s.Get(ctx, store.GetRequest{Namespace: mns, Key: key})
	switch {
	case gerr == nil:
		if h, _ := prev.Value["hash"].(string); h == hash && !opts.Force {
			return true, 0, 0, nil
		}
		if n, ok := prev.Value["chunks"].(float64); ok {
			oldChunks = int(n)
		}
	case !errors.Is(gerr, store.ErrNotFound):
		return false, 0, 0, storeErr{gerr}
	}
	doc, err := Load(kind, path, data)
	if err != nil {
		return false, 0, 0, err
	}
	doc.Metadata = opts.Metadata
	cs, err := Split(doc, &opts.Chunk)
	if err != nil {
		return false, 0, 0, err
	}
	for _, c := range cs {
		v := map[string]any{}
		for k, val := range c.Metadata {
			v[k] = val
		}
		v["text"] = c.Text
		v["headings"] = c.Headings
		v["chunk"] = c.Index
		v["tokens"] = c.Tokens
		v["kind"] = string(kind)
		if err := s.Put(ctx, store.PutRequest{Namespace: opts.Namespace, Key: fmt.Sprintf("%s:%d", key, c.Index), Value: v, Index: []string{"text"}}); err != nil {
			return false, 0, 0, storeErr{err}
		}
	}
	for i := len(cs); i < oldChunks; i++ {
		if err := s.Delete(ctx, store.DeleteRequest{Namespace: opts.Namespace, Key: fmt.Sprintf("%s:%d", key, i)}); err != nil {
			return false, 0, 0, storeErr{err}
		}
		removed++
	}
	// The manifest is written last: an ingestion stopped half-way is redone next time.
	manifest := map[string]any{"source": path, "hash": hash, "chunks": len(cs), "title": doc.Title, "kind": string(kind), "bytes": len(data)}
	if err := s.Put(ctx, store.PutRequest{Namespace: mns, Key: key, Value: manifest, NoIndex: true}); err != nil {
		return false, 0, 0, storeErr{err}
	}
	return false, len(cs), removed, nil
}

// ProgressBar returns a Progress callback that draws a one-line bar on w, redrawn in place
// with a carriage return, ending with a newline after the last file:
//
//	[##########----------]  5/10 files  42 chunks  docs/guide.md
func ProgressBar(w io.Writer) func(Progress) {
	const width = 24
	return func(p Progress) {
		filled := 0
		if p.FilesTotal > 0 {
			filled = p.FilesDone * width / p.FilesTotal
		}
		name := p.File
		if len(name) > 40 {
			name = "..." + name[len(name)-37:]
		}
		status := ""
		switch {
		case p.Err != nil:
			status = " (failed)"
		case p.Unchanged:
			status = " (unchanged)"
		}
		fmt.Fprintf(w, "\r[%s%s] %*d/%d files  %d chunks  %-40s%s", strings.Repeat("#", filled), strings.Repeat("-", width-filled),
			len(fmt.Sprint(p.FilesTotal)), p.FilesDone, p.FilesTotal, p.Chunks, name, status)
		if p.FilesDone == p.FilesTotal {
			fmt.Fprintln(w)
		}
	}
}
