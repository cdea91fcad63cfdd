package drama3

import (
	"strings"
	"unicode"
)

// CheckStructure applies CheckText's rules on "<|name|>" tags without a
// tokenizer (the studio checks a script before any model is loaded): a
// structural token or a malformed speaker tag is a *TextError at its byte
// offset. Added tokens only a tokenizer knows (<|endoftext|>) need CheckText.
func CheckStructure(text string) error {
	lead := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	return checkTags(strings.TrimRightFunc(text[lead:], unicode.IsSpace), lead)
}
