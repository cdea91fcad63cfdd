package takes

import (
	"errors"
	"fmt"
	"io/fs"

	"proscenium/app/studio"
)

// Stored reads the takes saved in a takes folder without opening the list:
// it writes nothing (no leftovers removed, no size limit applied), so a
// command can read what a running studio made, as the scene export does
// from the command line (`proscenium scene`).
type Stored struct{ store takeStore }

// OpenStored reads takes from dir (DefaultDir in the studio).
func OpenStored(dir string) Stored { return Stored{takeStore{dir: dir}} }

// TakePCM returns a saved take's audio and the take; a take not in the
// folder is studio.ErrNotFound, one that does not read says why.
func (s Stored) TakePCM(id int) ([]float32, Take, error) {
	if id <= 0 {
		return nil, Take{}, fmt.Errorf("%w: no take #%d", studio.ErrNotFound, id)
	}
	rec, err := s.store.load(id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, Take{}, fmt.Errorf("%w: no take #%d in %s", studio.ErrNotFound, id, s.store.dir)
	case err != nil:
		return nil, Take{}, fmt.Errorf("take #%d in %s: %w", id, s.store.dir, err)
	}
	pcm, err := s.store.readPCM(rec.take)
	if err != nil {
		return nil, Take{}, err
	}
	return pcm, *rec.take, nil
}
