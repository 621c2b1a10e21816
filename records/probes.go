package records

import (
	"fmt"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/probe"
)

// probePolicy: a probe challenge is written only by its challenger, a
// commitment or result only by the member its key ends with; any other key
// under probe.Prefix is refused.
func probePolicy(key string, author peer.ID) error {
	if !strings.HasPrefix(key, probe.Prefix+"/") {
		return nil
	}
	k, err := probe.ParseKey(key)
	if err != nil {
		return err
	}
	if k.Author() != author.String() {
		return fmt.Errorf("probe record %q written by %s", key, author)
	}
	return nil
}
