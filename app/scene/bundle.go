package scene

import (
	"archive/zip"
	"bytes"
	"time"
)

// Zip packs files into one zip archive (stored, not compressed: audio
// does not shrink much), for a browser that downloads one file.
func Zip(files []File, modified time.Time) ([]byte, error) {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Store, Modified: modified}
		fw, err := w.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
