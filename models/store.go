package models

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ipfs/go-cid"
)

// Errors of the store and the fetcher; match them with errors.Is.
var (
	// ErrInvalidConfig marks a store or fetcher that cannot be built
	// from what it was given.
	ErrInvalidConfig = errors.New("models: invalid config")
	// ErrBadCID marks a model ID that is not a CID in canonical form
	// (the only names the store accepts, so none escapes its
	// directory).
	ErrBadCID = errors.New("models: bad model CID")
	// ErrStoreFull means a model does not fit in what is left of the
	// store's byte budget.
	ErrStoreFull = errors.New("models: model store full")
)

// tempPrefix starts the names of files being written; they are not
// models, and ones left by a crash are removed at open.
const tempPrefix = ".tmp-"

// Store is a processor's models on disk: one file per model, named
// by its CID (<dir>/<cid>), within a byte budget. Files are written to a
// temporary name and renamed into place, so a model file is whole or
// absent. Safe for concurrent use.
type Store struct {
	dir string
	max int64

	// put serialises writes, so that two fetches cannot both fit in the
	// same free space.
	put   sync.Mutex
	mu    sync.Mutex
	sizes map[string]int64
	used  int64
}

// OpenStore opens (creating it if needed) the model store in dir,
// which holds at most maxBytes of models. The models already there are
// listed; leftover temporary files are removed; other names are ignored.
// A store already over its budget opens, and takes no more models.
func OpenStore(dir string, maxBytes int64) (*Store, error) {
	if dir == "" || maxBytes <= 0 {
		return nil, fmt.Errorf("%w: a model store needs a directory and a positive byte budget", ErrInvalidConfig)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("models: store: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("models: store: %w", err)
	}
	s := &Store{dir: dir, max: maxBytes, sizes: map[string]int64{}}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, tempPrefix) {
			_ = os.Remove(filepath.Join(dir, name))
			continue
		}
		if !e.Type().IsRegular() || checkCID(name) != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("models: store: %w", err)
		}
		s.sizes[name] = fi.Size()
		s.used += fi.Size()
	}
	return s, nil
}

// checkCID accepts a CID in canonical form.
func checkCID(s string) error {
	c, err := cid.Decode(s)
	if err != nil {
		return fmt.Errorf("%w %q: %v", ErrBadCID, s, err)
	}
	if c.String() != s {
		return fmt.Errorf("%w %q: not in canonical form %q", ErrBadCID, s, c.String())
	}
	return nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Has reports whether the model is on disk.
func (s *Store) Has(model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sizes[model]
	return ok
}

// List returns the models on disk, sorted.
func (s *Store) List() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.sizes))
	for m := range s.sizes {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Used is how many bytes the models take.
func (s *Store) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Free is how many bytes more the store takes.
func (s *Store) Free() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.max-s.used, 0)
}

// Path is where a model's file is (whether or not it is there).
func (s *Store) Path(model string) (string, error) {
	if err := checkCID(model); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, model), nil
}

// Put writes model's content from r, at most Free bytes (more is
// ErrStoreFull, and nothing is kept). The content must already be
// checked against the CID by the reader (a UnixFS reader over the block
// layer checks every block against its hash). A model already on disk is
// not written again.
func (s *Store) Put(model string, r io.Reader) (int64, error) {
	path, err := s.Path(model)
	if err != nil {
		return 0, err
	}
	s.put.Lock()
	defer s.put.Unlock()
	if s.Has(model) {
		return 0, nil
	}
	free := s.Free()
	tmp, err := os.CreateTemp(s.dir, tempPrefix+"*")
	if err != nil {
		return 0, fmt.Errorf("models: model %s: %w", model, err)
	}
	defer os.Remove(tmp.Name()) // after the rename it names nothing
	n, err := io.Copy(tmp, io.LimitReader(r, free+1))
	if err == nil && n > free {
		err = fmt.Errorf("%w: model %s is larger than the %d bytes left of max_model_bytes %d", ErrStoreFull, model, free, s.max)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		if errors.Is(err, ErrStoreFull) {
			return 0, err
		}
		return 0, fmt.Errorf("models: model %s: %w", model, err)
	}
	s.mu.Lock()
	s.sizes[model] = n
	s.used += n
	s.mu.Unlock()
	return n, nil
}
