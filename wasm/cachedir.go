package wasm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// boundCacheDir deletes wazero's compiled code in dir (its "wazero-*"
// entries, one per wazero version and platform) when it holds more than
// max bytes, and returns how many it deleted. Nothing else in dir is read
// or removed; a dir that does not exist yet holds nothing. max 0: no
// bound.
func boundCacheDir(dir string, max int64) (int64, error) {
	if max <= 0 {
		return 0, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var ours []string
	var total int64
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "wazero-") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		ours = append(ours, p)
		err := filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	if total <= max {
		return 0, nil
	}
	for _, p := range ours {
		if err := os.RemoveAll(p); err != nil {
			return 0, err
		}
	}
	return total, nil
}
