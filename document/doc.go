// Package document turns files into searchable chunks in a store.
//
// The path from a file to memory has three steps, each usable alone:
//
//  1. Load: [LoadFile] reads text (.txt), Markdown (.md) and HTML (.html) into a [Document] of
//     sections, each under its chain of headings. HTML loses its scripts, styles and tags;
//     its headings become sections like Markdown's.
//  2. Split: [Split] cuts each section into chunks of at most ChunkOptions.Size tokens, with
//     Overlap tokens repeated between neighbours and a preference for ending at a paragraph or
//     sentence. Every chunk starts with its heading path ("Guide > Install"), so a chunk read
//     alone still says what it is about, and carries the document's metadata plus its source,
//     title and heading.
//  3. Ingest: [Ingest] does both for files and folders and puts each chunk into a store.Store
//     with its text indexed for full-text and semantic search. It records a manifest per file
//     (content hash, chunk count) so that running it again skips unchanged files, replaces the
//     chunks of changed ones and deletes the chunks a shorter file no longer has.
//
// Ingest reports progress through a callback; [ProgressBar] draws it on a terminal:
//
//	sum, err := document.Ingest(ctx, st, []string{"docs/"}, document.IngestOptions{
//		Namespace: []string{"kb", "acme"},
//		Progress:  document.ProgressBar(os.Stderr),
//	})
//	fmt.Println(sum)
//
// which the trellis ingest command wraps.
package document
