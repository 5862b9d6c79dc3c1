package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	_, _, err := run(t, "frobnicate")
	var ue *UsageError
	if !errors.As(err, &ue) || ExitCode(err) != 2 || !strings.Contains(err.Error(), "frobnicate") {
		t.Fatalf("got %v (exit %d), want a usage error naming the command", err, ExitCode(err))
	}
}

func TestHelpListsCommands(t *testing.T) {
	out, _, err := run(t, "help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"example", "ingest", "migrate", "version"} {
		if !strings.Contains(out, c) {
			t.Errorf("help does not list %q:\n%s", c, out)
		}
	}
}

func TestExampleRunsTheAgent(t *testing.T) {
	out, _, err := run(t, "example", "What time is it in Tokyo?")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "[updates]") || !strings.Contains(out, "offline") {
		t.Fatalf("no updates from the offline model:\n%s", out)
	}
	if _, _, err := run(t, "example", "-modes", "bogus"); ExitCode(err) != 2 {
		t.Fatalf("an unknown stream mode gave %v, want a usage error", err)
	}
}

func TestIngestTwiceDoesNotDuplicate(t *testing.T) {
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "guide.md"), []byte("# Guide\n\n## Install\n\nRun the installer.\n\n## Use\n\nCall it.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	out, _, err := run(t, "ingest", "--data-dir", data, docs)
	if err != nil || !strings.Contains(out, "ingested 1 file(s)") {
		t.Fatalf("first ingest: %v\n%s", err, out)
	}
	out, _, err = run(t, "ingest", "--data-dir", data, docs)
	if err != nil || !strings.Contains(out, "1 unchanged") || !strings.Contains(out, "into 0 chunk(s)") {
		t.Fatalf("second ingest wrote again: %v\n%s", err, out)
	}
	if _, _, err := run(t, "ingest", "--data-dir", data); ExitCode(err) != 2 {
		t.Fatalf("ingest without paths gave %v, want a usage error", err)
	}
	out, _, err = run(t, "ingest", "--data-dir", data, filepath.Join(docs, "missing.md"))
	if err == nil || !strings.Contains(out, "1 failed") {
		t.Fatalf("ingesting a missing file: %v\n%s", err, out)
	}
}

func TestMigrateSQLite(t *testing.T) {
	data := t.TempDir()
	out, _, err := run(t, "migrate", "--data-dir", data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "checkpoints:") || !strings.Contains(out, "store:") {
		t.Fatalf("migrate output:\n%s", out)
	}
	for _, f := range []string{"checkpoints.db", "store.db"} {
		if _, err := os.Stat(filepath.Join(data, f)); err != nil {
			t.Errorf("%s was not created: %v", f, err)
		}
	}
}
