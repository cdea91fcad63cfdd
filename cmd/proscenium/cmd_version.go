package main

import (
	"fmt"
	"runtime/debug"
)

// version is the release this program was built as, stamped by the Makefile
// (-ldflags "-X main.version=V"); a plain `go build` leaves it empty.
var version string

func init() {
	register(command{name: "version", summary: "print the version this program was built as (also --version)", run: func(args []string) error {
		fs := newFlags("version")
		if err := parseFlagsOnly(fs, args); err != nil {
			return err
		}
		fmt.Println(versionLine())
		return nil
	}})
}

// versionLine is "proscenium VERSION (commit REV[, modified], GO)": the
// stamped version, or "unstamped" for a plain go build, and the commit the
// go command recorded.
func versionLine() string {
	v := version
	if v == "" {
		v = "unstamped"
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "proscenium " + v
	}
	rev, modified := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	detail := info.GoVersion
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += ", modified"
		}
		detail = "commit " + rev + ", " + detail
	}
	return fmt.Sprintf("proscenium %s (%s)", v, detail)
}
