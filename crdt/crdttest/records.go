package crdttest

import (
	"context"
	"strings"

	"github.com/jobmesh/jobmesh/crdt"
)

// Records is a fixed set of records read as a store reads them (Get,
// Query, QueryKeys), for tests of code that only reads.
type Records []crdt.Record

// Get returns the record under key, or crdt.ErrNotFound.
func (rs Records) Get(_ context.Context, key string) (crdt.Record, error) {
	for _, r := range rs {
		if r.Key == key {
			return r, nil
		}
	}
	return crdt.Record{}, crdt.ErrNotFound
}

// Query returns the records under prefix, in their order.
func (rs Records) Query(ctx context.Context, prefix string) ([]crdt.Record, error) {
	return rs.QueryKeys(ctx, prefix, nil)
}

// QueryKeys returns the records under prefix whose key keep accepts (nil
// keeps every one).
func (rs Records) QueryKeys(_ context.Context, prefix string, keep func(key string) bool) ([]crdt.Record, error) {
	var out []crdt.Record
	for _, r := range rs {
		if strings.HasPrefix(r.Key, prefix) && (keep == nil || keep(r.Key)) {
			out = append(out, r)
		}
	}
	return out, nil
}
