package main

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/kernelrank/kernelrank", Version: "v1.4.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "6294604632d91aa0bef33365610aa51460dfb6c4"},
		{Key: "vcs.time", Value: "2026-11-28T23:51:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	goLine := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	want := "kernelrank v1.4.0\nrevision 6294604632d91aa0bef33365610aa51460dfb6c4+dirty (2026-11-28T23:51:00Z)\n" + goLine
	if got := versionText(info, true); got != want {
		t.Errorf("stamped build:\n%s\nwant\n%s", got, want)
	}
	if got, want := versionText(nil, false), "kernelrank unknown\nrevision unknown\n"+goLine; got != want {
		t.Errorf("no build info:\n%s\nwant\n%s", got, want)
	}
	// This test binary: whatever its stamping, the Go version it runs on.
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, &out, &out); err != nil || !strings.HasPrefix(out.String(), "kernelrank ") ||
		!strings.HasSuffix(out.String(), goLine) {
		t.Errorf("kernelrank version: %v\n%s", err, out.String())
	}
	if err := run(context.Background(), []string{"version", "extra"}, &out, &out); err == nil {
		t.Error("kernelrank version extra: no error")
	}
}
