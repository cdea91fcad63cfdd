package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"proscenium/app/script"
)

// `proscenium screenplay`: a screenplay (Fountain, or "Name: speech" lines)
// as the studio's script, a speaker tag a speech (app/script), for synth
// or a script of one's own; what it leaves out is said on stderr.

func init() {
	register(command{name: "screenplay", summary: "print a screenplay (Fountain or \"Name: speech\") as a script with speaker tags", run: runScreenplay})
}

func runScreenplay(args []string) error { return screenplay(args, os.Stdin, os.Stdout, os.Stderr) }

func screenplay(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("screenplay")
	narrate := fs.Bool("narrate", false, "give the action paragraphs to a character called Narrator instead of leaving them out")
	asJSON := fs.Bool("json", false, "print the script, its characters and what it leaves out as one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: proscenium screenplay [--narrate] [--json] (FILE | -)\n\nPrints the script: one line a speech, <|speaker:N|> before it, the characters\nnumbered as they first speak (listed on stderr with what is left out).\n- reads the screenplay from stdin.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: want one FILE argument (or - for stdin), got %d", errUsage, fs.NArg())
	}
	in := stdin
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(io.LimitReader(in, script.MaxScreenplayBytes+1))
	if err != nil {
		return fmt.Errorf("reading the screenplay: %v", err)
	}
	sp, err := script.ParseScreenplay(string(data), script.ScreenplayOptions{Narrate: *narrate})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(sp)
	}
	if _, err := fmt.Fprintln(stdout, sp.Script); err != nil {
		return err
	}
	fmt.Fprintln(stderr, describeScreenplay(sp))
	return nil
}

// describeScreenplay says who speaks as which speaker, and what was left
// out.
func describeScreenplay(sp script.Screenplay) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d speeches by %d characters:", sp.Lines, len(sp.Characters))
	for i, c := range sp.Characters {
		fmt.Fprintf(&b, "\n  speaker %d  %s (%d)", i, c.Name, c.Lines)
	}
	if len(sp.LeftOut) > 0 {
		parts := make([]string, len(sp.LeftOut))
		for i, l := range sp.LeftOut {
			parts[i] = fmt.Sprintf("%d %s", l.Count, l.What)
		}
		fmt.Fprintf(&b, "\nleft out: %s", strings.Join(parts, ", "))
	}
	return b.String()
}
