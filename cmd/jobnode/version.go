package main

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

// versionInfo is what 'jobnode version' says: the build and the protocol
// versions a peer must share to work with this node.
type versionInfo struct {
	Node     string `json:"node"`               // node.Version, advertised to peers
	Module   string `json:"module"`             // the main module's version, "(devel)" from a work tree
	Revision string `json:"revision,omitempty"` // VCS revision the binary was built from
	Modified bool   `json:"modified,omitempty"` // the work tree had uncommitted changes
	Go       string `json:"go"`
	// Protocols: the mesh layout (nodes of another refuse each other),
	// the store's namespace, the prefixes of the gossip topics
	// and libp2p protocols, and the version of each record kind.
	Layout         int               `json:"layout"`
	StoreNamespace string            `json:"store_namespace"`
	TopicPrefix    string            `json:"topic_prefix"`
	ProtocolPrefix string            `json:"protocol_prefix"`
	Records        map[string]uint32 `json:"records"`
}

func buildVersion() versionInfo {
	v := versionInfo{
		Node: node.Version, Module: "unknown", Go: runtime.Version(),
		Layout: p2p.Layout, StoreNamespace: crdt.DefaultConfig().Namespace, TopicPrefix: p2p.TopicPrefix, ProtocolPrefix: p2p.ProtocolPrefix,
		Records: map[string]uint32{
			"aborted":        records.AbortedVersion,
			"ask":            records.AskVersion,
			"group":          records.GroupVersion,
			"settlement":     records.SettlementRecordVersion,
			"settled":        records.SettledRecordVersion,
			"wallet_binding": records.WalletBindingVersion,
		},
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Module = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	return v
}

// text is v for people, one item a line.
func (v versionInfo) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "jobnode %s\nmodule %s\n", v.Node, v.Module)
	if v.Revision != "" {
		mod := ""
		if v.Modified {
			mod = " (modified)"
		}
		fmt.Fprintf(&b, "revision %s%s\n", v.Revision, mod)
	}
	fmt.Fprintf(&b, "go %s\nlayout %d\nstore %s\ntopics %s...\nprotocols %s/...\n", v.Go, v.Layout, v.StoreNamespace, v.TopicPrefix, v.ProtocolPrefix)
	for _, k := range slices.Sorted(maps.Keys(v.Records)) {
		fmt.Fprintf(&b, "record %s v%d\n", k, v.Records[k])
	}
	return b.String()
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the build's version and the protocol versions it speaks (also --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd.OutOrStdout(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printVersion(w io.Writer, asJSON bool) error {
	v := buildVersion()
	if asJSON {
		return printJSON(w, v)
	}
	_, err := io.WriteString(w, v.text())
	return err
}
