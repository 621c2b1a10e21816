package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// fileFetcher serves file:///absolute/path URIs that lie inside root. It
// opens through os.Root, so neither ".." nor a symlink leads out of it.
type fileFetcher struct {
	root string
}

var _ Fetcher = (*fileFetcher)(nil)

func (f *fileFetcher) Fetch(ctx context.Context, uri string, limit int64) (io.ReadCloser, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Host != "" || u.User != nil || u.RawQuery != "" || !strings.HasPrefix(u.Path, "/") {
		return nil, fmt.Errorf("%w: want file:///absolute/path: %q", ErrInvalidURI, uri)
	}
	rel, err := filepath.Rel(f.root, filepath.FromSlash(u.Path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("%w: %s is outside the file root", ErrNotFound, u.Path)
	}
	root, err := os.OpenRoot(f.root)
	if err != nil {
		return nil, fmt.Errorf("%w: file root: %w", ErrUnreachable, err)
	}
	defer root.Close()
	file, err := root.Open(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, u.Path)
		}
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if !st.Mode().IsRegular() {
		file.Close()
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrNotFound, u.Path)
	}
	if st.Size() > limit {
		file.Close()
		return nil, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, st.Size(), limit)
	}
	return file, nil
}
