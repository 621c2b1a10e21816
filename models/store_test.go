package models

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	cidA = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	cidB = "bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq"
)

// TestStore: models are written whole under their CID, listed again
// at open with their sizes, kept within the byte budget (a model that
// does not fit leaves nothing behind), and only canonical CIDs name
// files.
func TestStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "models")
	s, err := OpenStore(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Put(cidA, strings.NewReader("123456")); err != nil || n != 6 {
		t.Fatalf("put: %d, %v", n, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, cidA)); err != nil || string(b) != "123456" {
		t.Fatalf("file: %q, %v", b, err)
	}
	if !s.Has(cidA) || s.Used() != 6 || s.Free() != 4 {
		t.Fatalf("has %v used %d free %d", s.Has(cidA), s.Used(), s.Free())
	}
	// Five bytes do not fit in the four left.
	if _, err := s.Put(cidB, strings.NewReader("12345")); !errors.Is(err, ErrStoreFull) || !strings.Contains(err.Error(), "max_model_bytes") {
		t.Fatalf("over budget: %v", err)
	}
	if s.Has(cidB) || s.Used() != 6 {
		t.Fatal("a model over budget was kept")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("directory after a refused put: %v", entries)
	}
	// Exactly the free space fits.
	if _, err := s.Put(cidB, bytes.NewReader([]byte("abcd"))); err != nil {
		t.Fatalf("exact fit: %v", err)
	}
	// A second put of a model on disk writes nothing.
	if n, err := s.Put(cidA, strings.NewReader("other")); err != nil || n != 0 {
		t.Fatalf("again: %d, %v", n, err)
	}
	for _, bad := range []string{"", "../x", "QmNotACid", strings.ToUpper(cidA), cidA + "/x"} {
		if _, err := s.Put(bad, strings.NewReader("x")); !errors.Is(err, ErrBadCID) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	// Reopen: the models are found again; a leftover temporary file is
	// removed, and other names are no models.
	leftover := filepath.Join(dir, tempPrefix+"123")
	if err := os.WriteFile(leftover, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenStore(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s2.List(), []string{cidB, cidA}) || s2.Used() != 10 || s2.Free() != 0 {
		t.Fatalf("reopened: %v, used %d", s2.List(), s2.Used())
	}
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("leftover temporary file: %v", err)
	}
	if _, err := OpenStore(dir, 0); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("zero budget: %v", err)
	}
}

// FuzzPath: model IDs come from jobs on the wire; any the store
// accepts names a file directly inside its directory.
func FuzzPath(f *testing.F) {
	for _, s := range []string{cidA, cidB, "", "..", "../" + cidA, cidA + "/..", "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG", "/etc/passwd"} {
		f.Add(s)
	}
	s := &Store{dir: "/models"}
	f.Fuzz(func(t *testing.T, id string) {
		p, err := s.Path(id)
		if err != nil {
			if !errors.Is(err, ErrBadCID) {
				t.Fatalf("%q: %v", id, err)
			}
			return
		}
		if filepath.Dir(p) != "/models" || filepath.Base(p) != id || strings.HasPrefix(id, ".") {
			t.Fatalf("%q maps to %q", id, p)
		}
	})
}
