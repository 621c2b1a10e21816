package node

import (
	"context"
	"fmt"
	"testing"

	ds "github.com/ipfs/go-datastore"
)

// newTestRepo initialises a repo with the default config in a temp dir
// and opens it; it is closed when the test ends.
func newTestRepo(t *testing.T) *Repo {
	t.Helper()
	dir := t.TempDir()
	if err := InitRepo(dir, DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestDatastoreFiltersAbsentKeys: the repo datastore answers lookups of
// absent keys from its Bloom filters instead of reading table blocks.
func TestDatastoreFiltersAbsentKeys(t *testing.T) {
	r := newTestRepo(t)
	d, err := r.OpenDatastore()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	for i := range 1000 {
		if err := d.Put(ctx, ds.NewKey(fmt.Sprintf("/present/%d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.DB.Flush(); err != nil { // into a table, where filters live
		t.Fatal(err)
	}
	for i := range 1000 {
		if has, err := d.Has(ctx, ds.NewKey(fmt.Sprintf("/present/%d", i+5000))); err != nil || has {
			t.Fatalf("absent key: has %v, err %v", has, err)
		}
	}
	if has, err := d.Has(ctx, ds.NewKey("/present/7")); err != nil || !has {
		t.Fatalf("present key: has %v, err %v", has, err)
	}
	if m := d.DB.Metrics(); m.Filter.Hits < 900 {
		t.Fatalf("the filters ruled out %d of 1000 absent keys", m.Filter.Hits)
	}
}
