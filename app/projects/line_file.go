package projects

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A line may name its own file for a scene exported with one file per
// line (Line.FileName): a game or a course refers to its lines by names
// like "guard_greets_03", and a line's number moves when lines are added.
// The name is the file's without its extension, and it must be one every
// common file system keeps as given: the folder may be copied anywhere.

// reservedFileNames are names Windows keeps for devices, with or without
// an extension.
var reservedFileNames = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true}

// CheckLineFileName says why name cannot name a line's own file (without
// its extension), or nil.
func CheckLineFileName(name string) error {
	bad := func(why string) error { return invalid("the file name %q %s", name, why) }
	stem, _, _ := strings.Cut(name, ".")
	switch {
	case name == "":
		return invalid("the file name is empty")
	case len(name) > MaxNameBytes:
		return bad(fmt.Sprintf("is longer than %d bytes", MaxNameBytes))
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8")
	case name != strings.TrimSpace(name):
		return bad("starts or ends with a space")
	case strings.HasPrefix(name, ".") || strings.HasSuffix(name, "."):
		return bad(`starts or ends with "."`)
	case strings.ContainsAny(name, `/\:*?"<>|`):
		return bad(`holds one of / \ : * ? " < > |, which some file systems refuse`)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return bad("holds a control character")
	case reservedFileNames[strings.ToLower(strings.TrimSpace(stem))]:
		return bad("is a device name on Windows")
	}
	return nil
}

// checkLineFileNames checks the lines' own file names: each a file name,
// no two the same (in any case: a file system may not tell them apart).
func checkLineFileNames(lines []Line) error {
	seen := map[string]int{}
	for i, l := range lines {
		if l.FileName == "" {
			continue
		}
		if err := CheckLineFileName(l.FileName); err != nil {
			return invalid("line %d: %v", i+1, err)
		}
		key := strings.ToLower(l.FileName)
		if j, ok := seen[key]; ok {
			return invalid("lines %d and %d both name their file %q", j, i+1, l.FileName)
		}
		seen[key] = i + 1
	}
	return nil
}
