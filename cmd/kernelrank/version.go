package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version prints the module version, the VCS revision the binary was built
// from (with "+dirty" for uncommitted changes) and its time, and the Go
// version. A binary built without VCS stamping says "unknown": built with
// -buildvcs=false, outside a checkout, or in a git worktree (go build looks
// for a .git directory, and a worktree has a .git file).
func version(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("version: unexpected arguments %q", args)
	}
	fmt.Fprint(stdout, versionText(debug.ReadBuildInfo()))
	return nil
}

func versionText(info *debug.BuildInfo, ok bool) string {
	mod, rev, at, dirty := "unknown", "unknown", "", ""
	if ok {
		// "(devel)" is what go build of the main module's checkout reports.
		mod = cmp.Or(info.Main.Version, mod)
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = " (" + s.Value + ")"
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
	}
	return fmt.Sprintf("kernelrank %s\nrevision %s%s%s\n%s %s/%s\n", mod, rev, dirty, at, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
