package checkpoint

import (
	"archive/zip"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

// torchArchive is the zip container torch.save writes (PyTorch ≥ 1.6):
// <archive>/data.pkl (the pickled object), <archive>/data/<key> (one raw
// storage per key), <archive>/byteorder ("little"), and version files. torch
// stores every entry uncompressed; compressed entries are refused, so nothing
// is ever expanded beyond the bytes that are in the file.
type torchArchive struct {
	file    string // for error messages
	size    int64
	prefix  string // "<archive>/"
	entries map[string]*zip.File
}

// maxPickleBytes bounds data.pkl; a state dict of a few thousand tensors
// pickles to a few MB.
const maxPickleBytes = 256 << 20

func openTorchArchive(r io.ReaderAt, size int64, file string) (*torchArchive, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: not a torch zip archive (torch.save ≥ 1.6 format): %w", file, err)
	}
	a := &torchArchive{file: file, size: size, entries: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		if _, dup := a.entries[f.Name]; dup {
			return nil, fmt.Errorf("%s: duplicate zip entry %q", file, f.Name)
		}
		a.entries[f.Name] = f
		if strings.HasSuffix(f.Name, "/data.pkl") && strings.Count(f.Name, "/") == 1 {
			if a.prefix != "" {
				return nil, fmt.Errorf("%s: two data.pkl entries (%sdata.pkl, %s)", file, a.prefix, f.Name)
			}
			a.prefix = strings.TrimSuffix(f.Name, "data.pkl")
		}
	}
	if a.prefix == "" {
		return nil, fmt.Errorf("%s: no <archive>/data.pkl entry: not a torch.save archive", file)
	}
	if f, ok := a.entries[a.prefix+"byteorder"]; ok {
		b, err := a.read(f, 16)
		if err != nil {
			return nil, err
		}
		if string(b) != "little" {
			return nil, fmt.Errorf("%s: byteorder %q: only little-endian archives are supported", file, b)
		}
	}
	return a, nil
}

// pickle returns the bytes of <archive>/data.pkl.
func (a *torchArchive) pickle() ([]byte, error) {
	return a.read(a.entries[a.prefix+"data.pkl"], maxPickleBytes)
}

// storage returns the raw bytes of <archive>/data/<key>.
func (a *torchArchive) storage(key string) ([]byte, error) {
	f, ok := a.entries[a.prefix+"data/"+key]
	if !ok {
		return nil, fmt.Errorf("%s: storage %q: no entry %sdata/%s", a.file, key, a.prefix, key)
	}
	return a.read(f, a.size)
}

// read returns an entry's bytes after checking that it is stored, that its
// declared size fits inside the file and under limit (so the allocation is
// bounded by bytes that exist), and that its CRC-32 matches.
func (a *torchArchive) read(f *zip.File, limit int64) ([]byte, error) {
	if f.Method != zip.Store {
		return nil, fmt.Errorf("%s: entry %s is compressed (method %d): torch archives store entries uncompressed", a.file, f.Name, f.Method)
	}
	if f.CompressedSize64 != f.UncompressedSize64 {
		return nil, fmt.Errorf("%s: entry %s: stored entry declares %d compressed and %d uncompressed bytes", a.file, f.Name, f.CompressedSize64, f.UncompressedSize64)
	}
	off, err := f.DataOffset()
	if err != nil {
		return nil, fmt.Errorf("%s: entry %s: %w", a.file, f.Name, err)
	}
	n := f.UncompressedSize64
	if off < 0 || off > a.size || n > uint64(a.size-off) {
		return nil, fmt.Errorf("%s: entry %s: %d bytes at offset %d run past the end of the file (%d bytes)", a.file, f.Name, n, off, a.size)
	}
	if n > uint64(limit) {
		return nil, fmt.Errorf("%s: entry %s: %d bytes exceed the limit of %d", a.file, f.Name, n, limit)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: entry %s: %w", a.file, f.Name, err)
	}
	defer rc.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, fmt.Errorf("%s: entry %s: %w", a.file, f.Name, err)
	}
	// One more read reaches EOF, where archive/zip compares the CRC-32.
	var one [1]byte
	if _, err := rc.Read(one[:]); err != io.EOF {
		if errors.Is(err, zip.ErrChecksum) || err == nil {
			return nil, fmt.Errorf("%s: entry %s: CRC-32 mismatch (stored %08x, data %08x)", a.file, f.Name, f.CRC32, crc32.ChecksumIEEE(buf))
		}
		return nil, fmt.Errorf("%s: entry %s: %w", a.file, f.Name, err)
	}
	return buf, nil
}
