package debugcodec

import (
	"errors"
	"fmt"
	"os"
)

// EncodeArgs are the arguments of debug encode on both backends (proscenium
// debug encode on the CPU, proscenium-gpu debug-encode, which the former
// forwards to with --backend cuda): one check, so that both refuse and
// accept the same command lines. The output directory must exist: a
// mistyped --out is refused, not created.
type EncodeArgs struct {
	Codec, Audio, Out string
	Window            int
}

// Check refuses missing flags, a negative window and an --out that is not
// an existing directory, naming the flag. The first two are command-line
// mistakes: they wrap usage when it is not nil (the CLI's exit status 2).
func (a EncodeArgs) Check(usage error) error {
	misuse := func(msg string) error {
		if usage == nil {
			return errors.New(msg)
		}
		return fmt.Errorf("%w: %s", usage, msg)
	}
	if a.Codec == "" || a.Audio == "" || a.Out == "" {
		return misuse("--codec, --audio and --out are required")
	}
	if a.Window < 0 {
		return misuse(fmt.Sprintf("--window %d must not be negative (0: the codec's own window)", a.Window))
	}
	return CheckDir("--out", a.Out)
}

// CheckDir refuses a flag's directory that does not exist or is not a
// directory (debug encode's --out, debug decode's --stages).
func CheckDir(flag, dir string) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s %s is not a directory", flag, dir)
	}
	return nil
}
