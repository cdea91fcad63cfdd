package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"proscenium/engine/drama3"
	"proscenium/engine/tokenizer"
)

// `proscenium tokenize`: the ids of a text, or of the Drama 3 default-voice
// prompt built around it, as one JSON object.

func init() {
	register(command{name: "tokenize", summary: "print the token ids of a text (or of its Drama 3 prompt) as JSON", run: runTokenize})
}

func runTokenize(args []string) error { return tokenize(args, os.Stdin, os.Stdout) }

// tokenizeOutput is what tokenize prints.
type tokenizeOutput struct {
	IDs   []int `json:"ids"`
	Count int   `json:"count"`
}

func tokenize(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := newFlags("tokenize")
	tokPath := fs.String("tokenizer", "", "tokenizer.json `FILE` (required)")
	prompt := fs.Bool("prompt", false, "tokenise the whole Drama 3 default-voice prompt built around the text")
	maxBytes := fs.Int("max-bytes", drama3.DefaultMaxTextBytes, "with --prompt: longest text in bytes")
	maxTokens := fs.Int("max-tokens", drama3.DefaultMaxPromptTokens, "with --prompt: longest prompt in tokens")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: proscenium tokenize --tokenizer FILE [--prompt] (TEXT | -)\n\nPrints {\"ids\":[…],\"count\":N}. TEXT - reads the text from stdin;\nput -- before a TEXT that starts with '-'.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *tokPath == "" {
		return fmt.Errorf("%w: --tokenizer FILE is required", errUsage)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: want one TEXT argument (or - for stdin), got %d", errUsage, fs.NArg())
	}
	if *maxBytes <= 0 || *maxTokens <= 0 {
		return fmt.Errorf("%w: --max-bytes and --max-tokens must be positive", errUsage)
	}
	text := fs.Arg(0)
	if text == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("reading stdin: %v", err)
		}
		text = string(data)
	}
	tok, err := tokenizer.LoadFile(*tokPath)
	if err != nil {
		return err
	}
	var ids []int
	if *prompt {
		b, err := drama3.NewPromptBuilder(tok, drama3.PromptLimits{MaxTextBytes: *maxBytes, MaxPromptTokens: *maxTokens})
		if err != nil {
			return err
		}
		if ids, err = b.DefaultVoice(text); err != nil {
			return err
		}
	} else if ids, err = tok.Encode(text); err != nil {
		return err
	}
	if ids == nil {
		ids = []int{}
	}
	out, err := json.Marshal(tokenizeOutput{IDs: ids, Count: len(ids)})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
