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
	"os"
	"sort"
)

// command is one subcommand: run gets the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(args []string) error
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
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		listCommands("proscenium debug DRIVER [flags]", debugCommands)
		if len(args) == 0 {
			return fmt.Errorf("%w: debug needs a driver name", errUsage)
		}
		return nil
	}
	c, ok := debugCommands[args[0]]
	if !ok {
		return fmt.Errorf("%w: unknown debug driver %q", errUsage, args[0])
	}
	return c.run(args[1:])
}

// errUsage marks an error in the command line itself (exit status 2).
var errUsage = errors.New("usage")

// errInterrupted marks a command stopped by Ctrl-C after keeping what it
// made (exit status 130, as a shell reports a process ended by SIGINT).
var errInterrupted = errors.New("interrupted")

func usage() { listCommands("proscenium COMMAND [flags]", commands) }

func listCommands(synopsis string, table map[string]command) {
	fmt.Fprintf(os.Stderr, "usage: %s\n\ncommands:\n", synopsis)
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-12s %s\n", n, table[n].summary)
	}
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "proscenium: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err := c.run(os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintf(os.Stderr, "proscenium %s: %v\n", c.name, err)
		switch {
		case errors.Is(err, errUsage):
			os.Exit(2)
		case errors.Is(err, errInterrupted):
			os.Exit(130)
		}
		os.Exit(1)
	}
}

// parseFlags parses a subcommand's flags: -h/--help comes back as
// flag.ErrHelp (usage printed, exit 0); any other flag mistake wraps errUsage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
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

// newFlags makes a flag set for a subcommand whose parse errors are returned
// (the flag package also prints the mistake and the usage to stderr; main then
// prints the returned error and exits 2).
func newFlags(name string) *flag.FlagSet {
	return flag.NewFlagSet("proscenium "+name, flag.ContinueOnError)
}
