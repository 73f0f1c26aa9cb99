package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// eval clicks on a generated click log names the re-ranker the simulation
// made best, and refuses to generate into a log that holds events.
func TestEvalClicksNamesTheSimulatedBest(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"eval", "clicks", "--events", dir, "--generate", "4000"}, &out, &errOut); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "best search ranker by MRR: sharp\n") {
		t.Fatalf("printed:\n%s", out.String())
	}
	err := run(context.Background(), []string{"eval", "clicks", "--events", dir, "--generate", "10"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "holds events") {
		t.Fatalf("a second --generate: %v", err)
	}
}
