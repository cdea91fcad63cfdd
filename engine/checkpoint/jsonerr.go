package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
)

// JSONError is err from encoding/json with no byte of the input in it: a
// syntax error says where, not what it found ("invalid character 'p'"
// would quote a file that is not JSON at all, a secret behind a symlink,
// say). Other errors (a value of the wrong type) name only the field.
func JSONError(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("not valid JSON (at byte %d)", syn.Offset)
	}
	return err
}
