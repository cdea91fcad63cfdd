// Command proscenium is the command line of the Proscenium studio: synthesis,
// the HTTP server, benchmarks, checkpoint inspection, tokenisation, the demo
// checkpoint, and stage drivers that write tensors for comparisons.
//
// Each subcommand lives in its own file and registers itself in the table
// below through register.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"proscenium/engine/audio/decode"
	"sort"
	"strconv"
)

// command is one subcommand: run gets the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(args []string) error
	hidden  bool // not listed: started by the program itself (worker)
}

var (
	commands      = map[string]command{}
	debugCommands = map[string]command{} // stage drivers under `proscenium debug`
)

func register(c command) { add(commands, c) }

// registerDebug adds a stage driver: `proscenium debug NAME …`.
func registerDebug(c command) { add(debugCommands, c) }

func add(table map[string]command, c command) {
	if _, dup := table[c.name]; dup {
		panic("duplicate command " + c.name)
	}
	table[c.name] = c
}

func init() {
	register(command{name: "debug", summary: "stage drivers that write tensors for comparisons (debug -h lists them)", run: runDebug})
}

func runDebug(args []string) error {
	return dispatch("proscenium debug DRIVER [flags]", "debug driver", debugCommands, args)
}

// dispatch runs the command of table that args[0] names; -h/--help lists
// the table on stdout (exit 0), no name or an unknown one is a usage error
// with the list on stderr.
func dispatch(synopsis, what string, table map[string]command, args []string) error {
	if len(args) > 0 && isHelp(args[0]) {
		listCommands(os.Stdout, synopsis, table)
		return flag.ErrHelp
	}
	if len(args) == 0 {
		listCommands(os.Stderr, synopsis, table)
		return fmt.Errorf("%w: give a %s name", errUsage, what)
	}
	c, ok := table[args[0]]
	if !ok {
		listCommands(os.Stderr, synopsis, table)
		return fmt.Errorf("%w: unknown %s %q", errUsage, what, args[0])
	}
	return c.run(args[1:])
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// errUsage marks an error in the command line itself (exit status 2).
var errUsage = errors.New("usage")

// errInterrupted marks a command stopped by Ctrl-C after keeping what it
// made (exit status 130, as a shell reports a process ended by SIGINT).
var errInterrupted = errors.New("interrupted")

func listCommands(w io.Writer, synopsis string, table map[string]command) {
	fmt.Fprintf(w, "usage: %s\n\ncommands:\n", synopsis)
	names := make([]string, 0, len(table))
	for n, c := range table {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, table[n].summary)
	}
}

func main() {
	// Started by itself to decode an uploaded recording: do that and exit.
	decode.ServeWorkerIfAsked()
	args := os.Args[1:]
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args[0] = "version"
	}
	err := dispatch("proscenium COMMAND [flags]", "command", commands, args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return
	}
	name := "proscenium"
	if len(args) > 0 {
		if _, ok := commands[args[0]]; ok {
			name += " " + args[0]
		}
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	switch {
	case errors.Is(err, errUsage):
		os.Exit(2)
	case errors.Is(err, errInterrupted):
		os.Exit(130)
	}
	os.Exit(1)
}

// parseFlags is the one flag parser of every command: -h/--help prints the
// command's usage to stdout and comes back as flag.ErrHelp (exit 0); any
// other flag mistake prints the usage to stderr and wraps errUsage (exit 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard) // the flag package's own messages: printed below instead
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(os.Stdout)
		fs.Usage()
		return err
	case err != nil:
		fs.SetOutput(os.Stderr)
		fs.Usage()
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

// parseFlagsOnly is parseFlags for a command that takes no positional
// arguments: one left over is a usage error naming it.
func parseFlagsOnly(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}

// parseInterspersed parses flags that may come before or after the
// positional arguments, which it returns in order.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// newFlags makes a flag set for a subcommand; parse it with parseFlags,
// parseFlagsOnly or parseInterspersed.
func newFlags(name string) *flag.FlagSet {
	return flag.NewFlagSet("proscenium "+name, flag.ContinueOnError)
}

// flagFloat is a float32 setting as a flag default that prints as written
// (0.9, not 0.8999999761581421, the float32's exact value).
func flagFloat(v float32) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
	return f
}
