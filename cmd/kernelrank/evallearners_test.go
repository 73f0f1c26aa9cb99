package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/internal/dataset"
)

func TestEvalLearnersFlagErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "learners", "--table", "9.9"}, "unknown table"},
		{[]string{"eval", "learners", "--suite", "no-such-suite"}, "unknown suite"},
		{[]string{"eval", "learners", "--suite", "kumar", "--table", "3.2"}, "unknown table"},
		{[]string{"eval", "learners", "--method", "gmkl"}, "unknown method"},
		{[]string{"eval", "learners", "--reps", "-2"}, "--reps"},
		{[]string{"eval", "learners", "--workers", "0"}, "--workers"},
		{[]string{"eval", "learners", "--dataset", "/no/such/file"}, "no such file"},
		{[]string{"eval", "learners", "3.2"}, "takes no arguments"},
		{[]string{"eval", "learners", "--components", "cannot-links"}, "choose pairs or must-links"},
		{[]string{"eval", "learners", "--simplenpkl-params", `{"B": -1}`}, `parameter "B"`},
		{[]string{"eval", "learners", "--simplenpkl-params", `{"loss": "hinge"}`}, "set loss themselves"},
		{[]string{"eval", "learners", "--simplenpkl-params", `[1]`}, "want a JSON object"},
	} {
		var out, errOut bytes.Buffer
		err := run(ctx, tc.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}

// TestEvalLearnersJSON runs k-means of Table 3.2 on iris once and checks the
// shape of the JSON rows.
func TestEvalLearnersJSON(t *testing.T) {
	dir, ok := dataset.DataDir()
	if !ok {
		t.Skip("../shared/data not found (set KERNELRANK_SHARED_DATA)")
	}
	var out, errOut bytes.Buffer
	args := []string{"eval", "learners", "--table", "3.2", "--method", "k-means", "--reps", "1", "--json",
		"--dataset", filepath.Join(dir, "uci", "pmlb", "iris.tsv.gz")}
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// iris and the mean over the data sets.
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2:\n%s", len(rows), out.String())
	}
	r := rows[0]
	if r["table"] != "3.2" || r["dataset"] != "iris" || r["method"] != "k-means" || r["metric"] != "accuracy" || r["paper"] != 0.845 {
		t.Errorf("row %v: want table 3.2, iris, k-means, accuracy, paper 0.845", r)
	}
	if v, ok := r["value"].(float64); !ok || v < 0 || v > 1 {
		t.Errorf("value %v, want an accuracy in [0, 1]", r["value"])
	}
	if !strings.Contains(errOut.String(), "seed 1") {
		t.Errorf("stderr does not name the seed:\n%s", errOut.String())
	}
}
