package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/document"
)

func init() {
	register("ingest", "load documents into the long-term memory store for retrieval", runIngest)
}

func runIngest(ctx context.Context, env Env) error {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var st storage
	st.flags(fs)
	ns := fs.String("namespace", "kb", "namespace of the chunks, labels separated by '/' (e.g. kb/acme)")
	force := fs.Bool("force", false, "re-ingest files whose content has not changed")
	tokens := fs.Int("chunk-tokens", 0, "most tokens per chunk (0: the default, 300)")
	overlap := fs.Int("overlap", 0, "tokens shared by neighbouring chunks (0: the default, 40)")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "Usage: trellis ingest [flags] PATH...\n\nLoads .txt, .md and .html files (folders are walked) into the store, in chunks.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(env.Args); err != nil {
		return &UsageError{Msg: err.Error()}
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return &UsageError{Msg: "ingest: name at least one file or folder"}
	}
	namespace := strings.Split(strings.Trim(*ns, "/"), "/")
	s, closeStore, where, err := st.openStore(ctx)
	if err != nil {
		return fmt.Errorf("ingest: opening the store: %w", err)
	}
	defer closeStore()
	fmt.Fprintf(env.Stderr, "ingesting into %s (namespace %s)\n", where, strings.Join(namespace, "/"))
	opts := document.IngestOptions{Namespace: namespace, Force: *force, Progress: document.ProgressBar(env.Stderr)}
	opts.Chunk.Size, opts.Chunk.Overlap = *tokens, *overlap
	sum, err := document.Ingest(ctx, s, fs.Args(), opts)
	fmt.Fprintln(env.Stdout, sum.String())
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	if len(sum.Failed) > 0 && sum.Files+sum.Unchanged == 0 {
		return fmt.Errorf("ingest: no file could be ingested")
	}
	return nil
}
